"""Every Predict's answer cells are marked (tag "answer" and outputs_hidden), in both editions,
and nothing else is: the rule and its exceptions are scripts/mark_answers.py's."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import mark_answers  # noqa: E402

NOTEBOOKS = mark_answers.all_notebooks()
FIX = "run: python scripts/mark_answers.py (a new exception goes into its OVERRIDES)"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.relative_to(ROOT / "notebooks").as_posix() for p in NOTEBOOKS])
def test_every_predict_has_its_answer_cells_marked(path):
    problems = mark_answers.check(mark_answers.read(path), path)
    assert not problems, "\n".join(problems + [FIX])


def test_the_korean_twins_mark_the_same_cells():
    assert not mark_answers.twin_problems(NOTEBOOKS), "\n".join(mark_answers.twin_problems(NOTEBOOKS))


def test_both_editions_have_their_predicts():
    """The markers are still found: 47 in each edition when this test was written."""
    counts = {"en": 0, "ko": 0}
    for path in NOTEBOOKS:
        plan = mark_answers.plan(mark_answers.read(path), path)
        counts[mark_answers.edition(path)] += sum(1 for ids in plan.answers.values() if ids)
    assert counts["en"] == counts["ko"] >= 40, counts


def test_check_finds_an_unmarked_answer_and_a_stray_mark():
    """--check's logic can fail: unmark one answer cell and mark a cell no Predict asks for."""
    path = ROOT / "notebooks" / "05_masking.ipynb"
    nb = mark_answers.read(path)
    answer = next(iter(mark_answers.plan(nb, path).answer_ids))
    cells = {cell.id: cell for cell in nb.cells}
    mark_answers.set_mark(cells[answer], on=False)
    answers = mark_answers.plan(nb, path).answer_ids
    stray = next(cell for cell in nb.cells if cell.cell_type == "code" and cell.id not in answers)
    mark_answers.set_mark(stray, on=True)
    problems = mark_answers.check(nb, path)
    assert any(answer in p and "not marked" in p for p in problems), problems
    assert any(stray.id in p and "no Predict" in p for p in problems), problems
    assert mark_answers.mark(nb, path) and not mark_answers.check(nb, path)
    assert not mark_answers.mark(nb, path), "marking twice must change nothing"


def test_an_explorers_answers_are_folded_and_the_explorer_stays_open():
    """04's explorer asks "which word does each pick, and why?"; the cell under it answers, folded."""
    path = ROOT / "notebooks" / "04_self_attention_qkv.ipynb"
    nb = mark_answers.read(path)
    plan = mark_answers.plan(nb, path)
    for explorer, explain in mark_answers.EXPLORER_ANSWERS["04_self_attention_qkv"].items():
        assert plan.explains[explorer] == explain
        assert explorer not in plan.answer_ids, "the explorer is played, not folded"
