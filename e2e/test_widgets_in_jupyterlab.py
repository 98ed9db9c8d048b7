"""Every live explorer works in a real JupyterLab, moved from the keyboard as a learner would.

For each notebook with a widget (a stored output holding a widget view): open it, wait for
an idle kernel (status bar), Run All, check that no cell shows an error or a widget that
failed to display, then change every control of every explorer by keyboard and check that
its picture and its readouts change. One screenshot per notebook goes to build/e2e/.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from e2e import lab_page
from e2e.jupyter_server import widget_notebooks

NOTEBOOKS_WITH_WIDGETS = [str(path) for path in widget_notebooks()]
NOT_A_NUMBER = re.compile(r"\b(nan|inf)\b", re.IGNORECASE)


def screenshot(page, explorer, out_dir: Path, name: str) -> Path:
    """The whole JupyterLab window with the explorer in the middle of the notebook."""
    path = out_dir / f"{name}.png"
    explorer.evaluate("el => el.scrollIntoView({block: 'center'})")
    page.wait_for_timeout(300)
    page.screenshot(path=str(path))
    return path


@pytest.mark.parametrize("notebook", NOTEBOOKS_WITH_WIDGETS)
def test_every_control_changes_the_picture(page, lab, out_dir, notebook):
    lab_page.open_notebook(page, lab, notebook)
    seconds = lab_page.run_all(page)
    print(f"\n{notebook}: Run All took {seconds:.1f} s")
    assert not lab_page.problems(page), "\n".join(lab_page.problems(page))
    assert not lab_page.unrun_cells(page), f"code cells {lab_page.unrun_cells(page)} did not run"

    views = lab_page.explorers(page)
    assert views, f"{notebook} stores a widget output but shows no live explorer after Run All"
    failures = []
    for number, explorer in enumerate(views, start=1):
        explorer.scroll_into_view_if_needed()
        controls = lab_page.controls(explorer)
        assert controls, f"explorer {number} of {notebook} has no control"
        readouts_moved, readouts_kept = [], []
        for control in controls:
            before = lab_page.snapshot(explorer)
            action = lab_page.change(control)
            after = lab_page.wait_for_new_picture(explorer, before)
            where = f"explorer {number}, {control} ({action})"
            if [p["digest"] for p in after["pictures"]] == [p["digest"] for p in before["pictures"]]:
                failures.append(f"{where}: the picture did not change")
                continue
            note = "picture changed"
            if before["readouts"]:
                after = lab_page.wait_for_new_readouts(explorer, before)
                moved = after["readouts"] != before["readouts"]
                (readouts_moved if moved else readouts_kept).append(str(control))
                note += ", readouts changed" if moved else ", readouts the same"
                if NOT_A_NUMBER.search(after["readouts"]):
                    failures.append(f"{where}: a readout is not a number:\n{after['readouts']}")
            print(f"  {where}: {note}")
        # Some controls rightly leave every readout as it was (e.g. a permutation that the
        # readouts prove changes nothing), but readouts that never move are a stale display.
        if readouts_kept and not readouts_moved:
            failures.append(f"explorer {number}: no control changed the readouts ({', '.join(readouts_kept)})")
        lab_page.wait_kernel_idle(page, settle=0.2)
    name = Path(notebook).stem
    screenshot(page, views[0], out_dir, name)
    for number, explorer in enumerate(views, start=1):
        explorer.screenshot(path=str(out_dir / f"{name}.explorer{number}.png"))
    assert not failures, "\n".join(failures)
    assert not lab_page.problems(page), "\n".join(lab_page.problems(page))


BROKEN = [
    "import ipywidgets as widgets\nwidgets.IntSlider(description='fine')",
    "import warnings\nwarnings.warn('a warning a learner would see', UserWarning)",
    "import sys\nprint('progress 100%', file=sys.stderr)  # stderr alone is fine",
    "raise ValueError('a cell that fails')",
]


def test_the_harness_sees_errors_and_warnings(page, lab, lab_root):
    """The checks above must be able to fail: a notebook with a warning and an error."""
    nb = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell(code) for code in BROKEN],
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}},
    )
    nbformat.write(nb, lab_root / "e2e_broken.ipynb")
    lab_page.open_notebook(page, lab, "e2e_broken.ipynb")
    lab_page.run_all(page)
    found = lab_page.problems(page)
    assert len(found) == 2, found
    assert "UserWarning" in found[0] and "ValueError" in found[1], found
