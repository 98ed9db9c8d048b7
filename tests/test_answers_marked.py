"""Every Predict's answer cells are marked (tag "answer" and outputs_hidden), in both editions,
and nothing else is: the rule and its exceptions are scripts/mark_answers.py's."""

from __future__ import annotations

import copy
import re
import sys
from pathlib import Path

import nbformat
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


# Two ways an answer shows although its cells are marked (the third expert read of 06-10b found six):
# (a) the explain cell also holds a heading after its text, so mark_answers leaves it open, verdict and
#     all: split it before the heading; (b) a code cell with a stored output comes right after the
#     folded explanation, before the next markdown cell, and is not an answer cell: make it one (move
#     it before the explanation, or OVERRIDES), or give it a lead-in of its own.
# Cells of kind (b) that were read and give no verdict away, by notebook stem: {cell id: why}.
SHOWN_AFTER_EXPLANATION: dict[str, dict[str, str]] = {
    "06_multi_head_attention": {"87fbd850": "the two heads' rows, not the one head that c6's Predict asks about; "
                                            "its first line, a comment, is its lead-in"},
    "07_transformer_block": {"4afcf8c6": "prints only that helpers.explorers.depth matches the cells above"},
}
# Found in notebooks 01-05 when this check was added, not yet read: those notebooks are being
# changed on another branch (fix0005), which should fix each case and empty this list.
NOT_YET_FIXED: dict[str, set[str]] = {
    "01_dot_product": {"76bcca69"},
    "02_softmax": {"c0af32ee", "7c27ec55", "9a793897"},
    "03_scaling_sqrt_dk": {"a5a5b0c4", "58700a61"},
    "04_self_attention_qkv": {"9c8cf36e", "e345e517"},
    "05_masking": {"decb5997", "8ce0d9b8", "fe399cda"},
}


def opens_with_heading(text: str) -> bool:
    """The first line that is not blank and not an anchor is a heading."""
    lines = [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("<a id=")]
    return bool(lines) and lines[0].lstrip().startswith("#")


def open_answers(nb, path) -> list[str]:
    """Where an answer or its explanation stays visible at open, although mark_answers' marks are right."""
    marker = mark_answers.MARKERS[mark_answers.edition(path)]
    plan = mark_answers.plan(nb, path)
    cells, problems = nb.cells, []
    position = {cell.id: i for i, cell in enumerate(cells)}
    for predict_id, answer_ids in plan.answers.items():
        after = max((position[a] for a in answer_ids), default=len(cells)) + 1
        if after >= len(cells) or predict_id in mark_answers.OVERRIDES.get(path.stem, {}):
            continue
        explain = cells[after]
        if explain.id in NOT_YET_FIXED.get(path.stem, set()):
            continue
        if (explain.cell_type == "markdown" and marker not in explain.source
                and re.search(r"^#", explain.source, re.MULTILINE) and not opens_with_heading(explain.source)):
            problems.append(f"explain cell {explain.id} (Predict {predict_id}) holds a heading after its text, so it "
                            "stays open: split it before the heading")
    allowed = set(SHOWN_AFTER_EXPLANATION.get(path.stem, {})) | NOT_YET_FIXED.get(path.stem, set())
    for explain_id in plan.explain_ids:
        for cell in cells[position[explain_id] + 1:]:
            if cell.cell_type == "markdown":
                break
            if mark_answers.has_output(cell) and cell.id not in plan.answer_ids and cell.id not in allowed:
                problems.append(f"code cell {cell.id} shows its output right after the folded explanation "
                                f"{explain_id}: make it an answer cell, or give it a lead-in")
    return problems


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.relative_to(ROOT / "notebooks").as_posix() for p in NOTEBOOKS])
def test_no_answer_stays_open_beside_its_marks(path):
    problems = open_answers(mark_answers.read(path), path)
    assert not problems, "\n".join(problems)


def test_open_answers_finds_both_holes():
    """The check can fail: glue an explanation to the heading after it, and put an unmarked
    output cell right after a folded explanation."""
    path = ROOT / "notebooks" / "10b_induction_heads.ipynb"
    nb = mark_answers.read(path)
    assert not open_answers(nb, path)
    cells = nb.cells
    position = {cell.id: i for i, cell in enumerate(cells)}
    explain_id = sorted(mark_answers.plan(nb, path).explain_ids, key=position.get)[0]
    explain, heading = cells[position[explain_id]], cells[position[explain_id] + 1]
    assert heading.cell_type == "markdown" and opens_with_heading(heading.source)
    glued = copy.deepcopy(nb)
    glued.cells[position[explain_id]].source = explain.source + "\n\n" + heading.source
    del glued.cells[position[explain_id] + 1]
    assert any("split it before the heading" in p for p in open_answers(glued, path))
    shown = copy.deepcopy(nb)
    output = nbformat.v4.new_output("stream", text="the verdict\n")
    leak = nbformat.v4.new_code_cell("print('the verdict')", outputs=[output])
    shown.cells.insert(position[explain_id] + 1, leak)
    assert any(leak.id in p and "right after the folded explanation" in p for p in open_answers(shown, path))
