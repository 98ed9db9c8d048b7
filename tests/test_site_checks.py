"""The site's in-page exercise checks agree with the Python checkers, and hold no answer.

The page's own JavaScript (website/static/checks.js) runs in node on the data website/checks.py
builds, in both languages, for every site-checked exercise: each answer of its catalogue as a learner
would type it (right forms and wrong ones), the right value rounded to 0 to 8 decimals, values just
inside and just outside each edge of the band the checker accepts (one element at a time), a
fraction where a whole number is asked, and a far value at the second attempt (the closer generic
hint). Its reply, right or wrong and the words, must be the checker's (``helpers.checks.evaluate``).
"""

from __future__ import annotations

import json
import shutil
import subprocess

import numpy as np
import pytest

from helpers import i18n
from helpers.checks import evaluate
from tests.exercise_harness import shown_forms
from website import checks as site

ROOT = site.ROOT
NODE = shutil.which("node")


def cases(exercise_id: str) -> list[tuple[str, object, int]]:
    """(what the learner types, the Python answer it stands for, attempt)."""
    rights, wrongs = site.catalogues()[exercise_id]
    answers = [a for a in rights + wrongs if site.typed(a) is not None]
    # A string the checker refuses because it is a string ("6, 7, 8, 9" for a list of rows): on the
    # page every answer is typed text, so it reads as the value it spells.
    spelled = {site.canonical(site.typed(a), True) for a in rights if site.typed(a) is not None}
    answers = [a for a in answers if not (isinstance(a, str) and a in wrongs and site.canonical(a, True) in spelled)]
    right = rights[0]
    numbers = site._numbers_kind(site.Replies(exercise_id), right)
    if numbers:
        array = numbers["array"]
        scalar = array.ndim == 0
        for decimals in range(9):
            answers.append(float(np.round(array, decimals)) if scalar else np.round(array, decimals))
        for i in sorted({0, array.size - 1}):
            lo, hi = numbers["bands"][i]
            r = float(array.flat[i])
            far = (r + 2.7 * (hi - lo), r + 27.3 * (hi - lo), r - 271.3 * (hi - lo)) if scalar else ()
            for x in (r + 0.9 * (hi - r), r - 0.9 * (r - lo), r + 1.1 * (hi - r), r - 1.1 * (r - lo), *far):
                moved = array.copy()
                moved.flat[i] = x
                answers.append(float(moved) if scalar else moved)
    elif site._pair(right):  # 02.3: the weights rounded, the letter as given
        answers += [(np.round(right[0], decimals), right[1]) for decimals in range(9)]
        answers += [(right[0], right[1].lower()), (right[0], "E")]
    else:
        plain = site._plain(right)
        if isinstance(plain, int) and not isinstance(plain, bool):
            answers += [plain + 0.5, plain + 0.125]
    out = [(site.typed(a), a, 1) for a in answers]
    out.append((out[-1][0], out[-1][1], 2))  # the same answer again: from the second wrong one on, a closer hint
    return out


def run_page_checker(data: dict, inputs: list[dict]) -> list[dict]:
    script = (
        "const check = require(process.argv[1]);"
        "const input = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
        "const out = input.cases.map(c => check.verdict(input.data[c.id], c.text, c.attempt));"
        "process.stdout.write(JSON.stringify(out));"
    )
    done = subprocess.run([NODE, "-e", script, str(ROOT / "website" / "static" / "checks.js")],
                          input=json.dumps({"data": data, "cases": inputs}), capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


@pytest.mark.skipif(NODE is None, reason="node is not installed")
@pytest.mark.parametrize("language", ["en", "ko"])
def test_the_page_and_the_python_checker_agree(language):
    ids = site.site_checked()
    data = site.page_data(ids, language)
    inputs, expected = [], []
    i18n.set_language(language)
    try:
        for exercise_id in ids:
            for text, answer, attempt in cases(exercise_id):
                inputs.append({"id": exercise_id, "text": text, "attempt": attempt})
                expected.append(evaluate(exercise_id, answer, attempt=attempt))
    finally:
        i18n.set_language(None)
    got = run_page_checker(data, inputs)
    asked, disagree = [], []
    for case, (correct, message), page in zip(inputs, expected, got, strict=True):
        if page.get("page"):  # a word where the page asks for numbers: it says so itself
            asked.append(case)
            continue
        if (page["right"], page["message"]) != (correct, message):
            disagree.append(f"{case['id']} {case['text']!r} (attempt {case['attempt']}): page {page}, Python {(correct, message)}")
    assert not disagree, f"{len(disagree)} of {len(inputs)} disagree:\n" + "\n".join(disagree[:20])
    assert all(site.numbers_of(c["text"]) is None for c in asked)
    assert len(asked) <= 12, asked  # only catalogue answers that are words ("many") or non-numbers
    assert len(inputs) - len(asked) > 450
    print(f"{language}: {len(inputs) - len(asked)} answers agree on {len(ids)} exercises ({len(asked)} not numbers)")


def test_which_value_exercises_the_page_checks():
    ids = site.site_checked()
    values = site.value_exercises()
    assert set(ids) | set(site.LEFT_OUT) == set(values), "a value exercise is neither checked on its page nor left out with a reason"
    assert len(ids) >= 30
    assert f"letters: {len(ids)} of them" in (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"연습문제 {len(ids)}개" in (ROOT / "README.ko.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("language", ["en", "ko"])
def test_the_data_holds_no_answer(language):
    for exercise_id, data in site.page_data(site.site_checked(), language).items():
        rights = site.catalogues()[exercise_id][0]
        assert all(len(key) == 12 and int(key, 16) >= 0 for part in data.get("parts", [data]) for key in part["cells"])
        parts = data.get("parts", [data])
        words = [m for part in parts for m in part["replies"] + part["generic"]] + [data.get("unpaired", "")]
        text = json.dumps(words, ensure_ascii=False)  # the words the page can show
        right = site.typed(rights[0])
        for shown in shown_forms(rights[0]) | ({right} if len(right) > 2 else set()):
            assert shown not in text, f"{exercise_id}: the page data shows {shown!r}"
        if language == "ko":
            assert all(i18n.translate(m, "ko") == m for m in words)


def test_tokens_and_numbers_are_read_as_python_reads_them():
    assert site.canonical("(3, 5, 6)", ordered=True) == site.canonical("[3,5,6]", ordered=True) == "3,5,6"
    assert site.canonical("3.0, 5, 6", ordered=True) == "3.0,5,6"
    assert site.canonical("{'d', 'A'}", ordered=False) == "A,D"
    assert site.numbers_of("[0.1, 2e-3]") == [0.1, 0.002]
    assert site.numbers_of("many") is None
