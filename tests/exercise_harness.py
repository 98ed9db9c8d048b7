"""The tests every chapter's exercises share: each right answer passes, each wrong one fails
with a hint, and no hint shows the right answer.

A chapter's test file gets both tests with one line:
    test_right_answers_pass, test_wrong_answers_fail_without_revealing = exercise_tests(RIGHT, WRONG)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

import numpy as np
import pytest

from helpers.checks import as_array, evaluate

# Every chapter's cases, as registered by exercise_tests: (exercise id, answer, right?).
# tests/test_korean.py replays them with the feedback in Korean.
ALL_CASES: list[tuple[str, object, bool]] = []
# Every chapter's catalogue as registered: exercise id -> (right answers, wrong answers). The site
# (website/checks.py) builds its in-page checks from it, and tests/test_site_checks.py replays it.
CATALOGUES: dict[str, tuple[list, list]] = {}

COMMON = {"0.000", "0.0000", "1.000", "1.0000"}  # appear in hints about weights summing to 1


def shown_forms(right) -> set[str]:
    """Ways a hint could spell out ``right``: its text and its first numbers in usual formats
    (single digits are left out: they appear in any sentence)."""
    forms = set() if callable(right) or hasattr(right, "shape") else {str(right)}
    try:
        values = np.ravel(as_array(right))[:4]
    except (TypeError, ValueError):
        values = []
    for value in values:
        forms |= {f"{value:g}", f"{value:.3f}", f"{value:.4f}"}
        if float(value).is_integer():
            forms.add(f"{int(value):,}")
    return {f for f in forms if len(f.lstrip("-")) > 1 and f.lstrip("-") not in COMMON}


def exercise_tests(
    right: Mapping[str, object],
    wrong: Mapping[str, Iterable],
    *,
    several_right: bool = False,
    secrets: Mapping[str, Iterable[str]] | None = None,
) -> tuple[Callable, Callable]:
    """The two parametrised tests for one chapter.

    Args:
        right: exercise id -> its right answer (or, with ``several_right``, a list of right
            answers in different forms; the first is the one hints must not show).
        wrong: exercise id -> wrong answers.
        secrets: exercise id -> further strings no hint may contain.
    """
    rights = {k: list(v) if several_right else [v] for k, v in right.items()}
    secrets = secrets or {}
    ALL_CASES.extend([(k, a, True) for k, answers in rights.items() for a in answers[:1]])
    ALL_CASES.extend([(k, a, False) for k, answers in wrong.items() for a in answers])
    for k in rights.keys() | wrong.keys():
        CATALOGUES[k] = (rights.get(k, []), list(wrong.get(k, [])))

    @pytest.mark.parametrize("exercise_id, answer", [(k, a) for k, answers in rights.items() for a in answers])
    def test_right(exercise_id, answer):
        correct, message = evaluate(exercise_id, answer)
        assert correct, f"{exercise_id} rejected {answer!r}: {message}"

    @pytest.mark.parametrize("exercise_id, answer", [(k, a) for k, answers in wrong.items() for a in answers])
    def test_wrong(exercise_id, answer):
        correct, message = evaluate(exercise_id, answer)
        assert not correct, f"{exercise_id} accepted {answer!r}"
        assert "Hint" in message, message
        for shown in shown_forms(rights[exercise_id][0]) | set(secrets.get(exercise_id, ())):
            assert shown not in message, f"{exercise_id} shows {shown!r}: {message}"

    return test_right, test_wrong
