"""Turn a percent-format .py (``# %%`` code cells, ``# %% [markdown]`` prose) into a notebook.

    python scripts/py2nb.py draft.py notebooks/03_scaling_sqrt_dk.ipynb
    make notebooks NB=notebooks/03_scaling_sqrt_dk.ipynb   # execute and store outputs

The reverse, to edit an existing notebook as text: ``jupytext --to py:percent NB.ipynb``.
When ``dest`` exists, its cell ids are kept (an unchanged cell keeps its id; an edited one keeps
the id of the cell of the same kind at its place): the Korean translations are keyed by them.
"""

import sys
from pathlib import Path

import jupytext
import nbformat

KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}


def keep_ids(cells: list, old_cells: list) -> None:
    """Give ``cells`` the ids of ``old_cells``: same kind and text first, then same kind and place."""
    by_text = {(c.cell_type, c.source): c.id for c in old_cells}
    taken = set()
    for cell in cells:
        old = by_text.get((cell.cell_type, cell.source))
        if old and old not in taken:
            cell.id = old
            taken.add(old)
    for i, cell in enumerate(cells):
        if cell.id in taken or i >= len(old_cells):
            continue
        old = old_cells[i]
        if old.cell_type == cell.cell_type and old.id not in taken and old.id not in {c.id for c in cells}:
            cell.id = old.id
            taken.add(old.id)


def main(src: str, dest: str) -> None:
    notebook = jupytext.read(src, fmt="py:percent")
    notebook.metadata = {"kernelspec": KERNELSPEC, "language_info": {"name": "python"}}
    for cell in notebook.cells:
        cell.metadata = {k: v for k, v in cell.metadata.items() if k == "tags"}
    if Path(dest).exists():
        keep_ids(notebook.cells, nbformat.read(dest, as_version=4).cells)
    nbformat.write(notebook, dest)


if __name__ == "__main__":
    main(*sys.argv[1:])
