"""The exercise checker: right answers pass, wrong ones get a hint, the answer is never shown."""

import pytest

from helpers.checks import check, evaluate, exercises


def test_every_notebook_exercise_is_registered_once():
    ids = list(exercises())
    assert "00.1" in ids and len(ids) == len(set(ids))


def test_right_and_wrong(capsys):
    assert evaluate("00.1", 12) == (True, "Correct!")
    correct, message = evaluate("00.1", 7)
    assert not correct and "Hint" in message and "12" not in message
    check("00.1", 12)
    assert "✅" in capsys.readouterr().out


def test_unanswered_and_unreadable_answers_are_not_crashes():
    assert evaluate("00.1", ...) [0] is False
    correct, message = evaluate("00.1", "twelve")
    assert not correct and "could not check" in message


def test_unknown_exercise():
    with pytest.raises(ValueError, match="unknown exercise '99.9'"):
        evaluate("99.9", 1)


def test_a_code_hint_comes_only_after_a_second_wrong_answer(capsys, monkeypatch):
    from helpers import checks

    monkeypatch.setattr(checks, "_REGISTRY", dict(checks._REGISTRY))
    monkeypatch.setattr(checks, "_WRONG", checks.Counter())
    checks.exercise("98.1", hint="the idea.", code_hint="x = a @ b")(lambda answer: answer == 1)
    for answer in (2, ..., 3, 1):
        check("98.1", answer)
    first, unanswered, second, right = capsys.readouterr().out.splitlines()
    assert "the idea." in first and "x = a @ b" not in first
    assert "Not answered" in unanswered  # a blank answer is not counted as wrong
    assert "the idea." in second and "x = a @ b" in second
    assert right.startswith("✅")
    assert "x = a @ b" in checks.evaluate("98.1", 5, attempt=2)[1]
    assert "x = a @ b" not in checks.evaluate("98.1", 5, attempt=1)[1]
