"""A learner who opens a notebook does not see the answer to a Predict before predicting.

Every Predict's answer cells (found by ``scripts/mark_answers.py``, the one rule the static site
also uses) carry ``"jupyter": {"outputs_hidden": true}``, and the explanation right after them,
which often opens with the verdict, ``"jupyter": {"source_hidden": true}``. Here every chapter of both editions
is opened as ``make lab`` serves it (stock settings) and, for a few, as Jupyter Notebook 7
serves it; for each Predict we look whether an output of its answer cells, or the text of its
folded explanation, shows when the notebook opens (the goal: none), and print the count per notebook. Then, in one notebook per
app, the learner runs the first few answer cells one by one (Shift+Enter, after running the
cells above them): each one's output must show, and its folded "…" bar must be gone; and a
click on the next answer cell's bar unfolds its stored output without running it.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from e2e import lab_page
from e2e.jupyter_server import NOTEBOOKS, REPO, copy_notebooks

sys.path.insert(0, str(REPO / "scripts"))
import mark_answers  # noqa: E402

# Every notebook with a Predict (chapters, both editions; 00 and the solutions have none).
WITH_PREDICTS = [p.relative_to(NOTEBOOKS).as_posix() for p in mark_answers.all_notebooks()
                 if any(mark_answers.plan(mark_answers.read(p), p).answers.values())]
# Notebook 7 loads a page per notebook (about 10 s each on 2 busy cores): a few of them.
IN_NOTEBOOK7 = ["03_scaling_sqrt_dk.ipynb", "ko/05_masking.ipynb", "11_tiny_vla.ipynb"]
# Where the learner runs the first few answer cells, one by one (cheap notebooks to run).
RUN_IN_LAB, RUN_IN_NOTEBOOK7, ANSWERS_RUN = "05_masking.ipynb", "ko/01_dot_product.ipynb", 3
FRESH = "predict-hidden"  # a folder of its own in the served copy: other tests save what they run


@pytest.fixture(scope="module")
def root(lab_root) -> Path:
    """An untouched copy of notebooks/ inside the served folder, for this module."""
    return copy_notebooks(lab_root / FRESH)


def answers(root: Path, notebook: str):
    """(the served notebook, its Predicts -> the indices of their answer cells)."""
    nb, predicts, _ = answers_and_explanations(root, notebook)
    return nb, predicts


def answers_and_explanations(root: Path, notebook: str):
    """(the served notebook, its Predicts -> their answer cells' indices, -> their folded explanation's)."""
    nb = mark_answers.read(root / notebook)
    where = {cell.id: index for index, cell in enumerate(nb.cells)}
    plan = mark_answers.plan(nb, NOTEBOOKS / notebook)  # the rule reads the repository's path
    return (nb, {predict: [where[a] for a in ids] for predict, ids in plan.answers.items() if ids},
            {predict: where[e] for predict, e in plan.explains.items()})


def look(page, root: Path, notebook: str) -> dict:
    """In the open ``notebook``: how many Predicts show an answer, how many answer cells are folded."""
    nb, predicts, explanations = answers_and_explanations(root, notebook)
    answer_cells = sorted({i for indices in predicts.values() for i in indices})
    lab_page.wait_cells(page, max(answer_cells + list(explanations.values())) + 1)  # up to the last one
    states = lab_page.cell_states(page)
    return {
        "predicts": len(predicts),
        "visible": sum(any(states[i]["output_shown"] for i in indices) or
                       (p in explanations and not states[explanations[p]]["text_folded"])
                       for p, indices in predicts.items()),
        "answer_cells": len(answer_cells),
        "folded": sum(states[i]["folded"] and not states[i]["output_shown"] for i in answer_cells),
        "stray": [i for i, state in enumerate(states) if state["folded"] and i not in answer_cells],
    }


def count_everywhere(page, server, root: Path, notebooks: list[str]) -> dict:
    """Open each notebook in turn (JupyterLab: File > Open from Path… in one page; Notebook 7:
    its own page each); print a line per notebook and the totals; return the totals."""
    app = "JupyterLab" if server.app == "jupyterlab" else "Notebook 7"
    totals = {"predicts": 0, "visible": 0, "answer_cells": 0, "folded": 0, "stray": []}
    start = time.monotonic()
    print(f"\n{app}: Predicts whose answer shows when the notebook opens")
    if server.app == "jupyterlab":
        page.goto(server.url("/lab/workspaces/e2e-predict-hidden", reset=""))
    for notebook in notebooks:
        if server.app == "jupyterlab":
            lab_page.open_from_path(page, f"{FRESH}/{notebook}")
        else:
            lab_page.open_notebook(page, server, f"{FRESH}/{notebook}")
        seen = look(page, root, notebook)
        if server.app == "jupyterlab":
            lab_page.close_tab(page)
        server.shutdown_kernels()
        print(f"  {notebook:42} {seen['visible']:2} of {seen['predicts']:2} Predicts visible, "
              f"{seen['folded']:2} of {seen['answer_cells']:2} answer cells folded")
        for key in ("predicts", "visible", "answer_cells", "folded"):
            totals[key] += seen[key]
        totals["stray"] += [f"{notebook}: cell {i}" for i in seen["stray"]]
    print(f"  total: {totals['visible']} of {totals['predicts']} Predicts visible at open, "
          f"{totals['folded']} of {totals['answer_cells']} answer cells folded, "
          f"{len(notebooks)} notebooks in {time.monotonic() - start:.0f} s")
    return totals


def assert_none_visible(totals: dict) -> None:
    assert totals["predicts"] > 0, "no Predict found: has the marker changed?"
    assert totals["visible"] == 0, f"{totals['visible']} Predicts show their answer at open: " \
        "run python scripts/mark_answers.py"
    assert totals["folded"] == totals["answer_cells"], "an answer cell is neither shown nor folded"
    assert not totals["stray"], f"outputs folded that answer no Predict: {totals['stray']}"


def stored_text(cell) -> str:
    """The first line of text the cell's stored outputs print (empty for a picture alone)."""
    for output in cell.get("outputs", []):
        text = output.get("text") or output.get("data", {}).get("text/plain", "")
        text = "".join(text) if isinstance(text, list) else text
        if output.get("output_type") == "stream" and text.strip():
            return text.strip().splitlines()[0]
    return ""


def wait_idle_after_run(page) -> None:
    deadline = time.monotonic() + 120
    while "[*]:" in lab_page.code_prompts(page):
        assert time.monotonic() < deadline, "cells still running after 120 s"
        time.sleep(0.1)
    lab_page.wait_kernel_idle(page)


def shown_after_running(page, server, root: Path, notebook: str) -> None:
    """The learner runs the cells above the first answer cell (Run All Above Selected Cell),
    then goes on one cell at a time with Shift+Enter past the first ``ANSWERS_RUN`` answer
    cells: each must be folded before it runs, and show its output, unfolded, with the text
    the notebook stores, after."""
    nb, predicts = answers(root, notebook)
    lab_page.open_notebook(page, server, f"{FRESH}/{notebook}")
    *chosen, clicked = sorted({i for indices in predicts.values() for i in indices})[:ANSWERS_RUN + 1]
    lab_page.wait_cells(page, clicked + 1)
    states = lab_page.cell_states(page)
    assert all(states[i]["folded"] and not states[i]["output_shown"] for i in chosen + [clicked]), \
        f"{notebook}: answer cells {chosen + [clicked]} are not all folded at open"

    # A learner who wants the answer without running: a click on the "…" bar unfolds the stored output.
    lab_page.cells(page).nth(clicked).locator(".jp-OutputPlaceholder").click()
    page.wait_for_timeout(500)
    state = lab_page.cell_states(page)[clicked]
    print(f"\n{notebook}, answer cell {clicked} after a click on its bar: output shown {state['output_shown']}, "
          f"folded {state['folded']}", end="")
    assert state["output_shown"] and not state["folded"], f"a click on cell {clicked}'s bar did not unfold it"
    assert stored_text(nb.cells[clicked]) in state["text"], f"cell {clicked} shows {state['text'][:300]!r}"

    lab_page.cells(page).nth(chosen[0]).locator(".jp-InputPrompt").click()  # select it (command mode)
    lab_page.menu(page, "Run", "Run All Above Selected Cell")
    wait_idle_after_run(page)
    lab_page.cells(page).nth(chosen[0]).locator(".jp-InputPrompt").click()
    failures = []
    for index in range(chosen[0], chosen[-1] + 1):
        page.keyboard.press("Shift+Enter")  # run the selected cell, select the next one
        wait_idle_after_run(page)
        if index not in chosen:
            continue
        state, expected = lab_page.cell_states(page)[index], stored_text(nb.cells[index])
        print(f"\n{notebook}, answer cell {index} after Shift+Enter: output shown {state['output_shown']}, "
              f"folded {state['folded']}, shows {state['text'].strip()[:60]!r} ({state['pictures']} pictures)", end="")
        if not state["output_shown"] or state["folded"]:
            failures.append(f"cell {index}: output shown {state['output_shown']}, folded {state['folded']}")
        elif expected and expected not in state["text"]:
            failures.append(f"cell {index}: expected {expected!r}, shows {state['text'][:200]!r}")
        elif not expected and not state["pictures"]:
            failures.append(f"cell {index}: its picture does not show")
    print()
    assert not failures, "\n".join(failures)
    assert not lab_page.problems(page), "\n".join(lab_page.problems(page))


def test_no_answer_shows_when_a_notebook_opens_in_jupyterlab(page, lab, root):
    assert_none_visible(count_everywhere(page, lab, root, WITH_PREDICTS))


def test_no_answer_shows_when_a_notebook_opens_in_notebook7(nb7_page, notebook7, root):
    assert_none_visible(count_everywhere(nb7_page, notebook7, root, IN_NOTEBOOK7))


@pytest.mark.parametrize("app", ["jupyterlab", "notebook7"])
def test_running_an_answer_cell_shows_its_output(app, request, root):
    if app == "jupyterlab":
        page, server, notebook = request.getfixturevalue("page"), request.getfixturevalue("lab"), RUN_IN_LAB
    else:
        page, server = request.getfixturevalue("nb7_page"), request.getfixturevalue("notebook7")
        notebook = RUN_IN_NOTEBOOK7
    shown_after_running(page, server, root, notebook)
