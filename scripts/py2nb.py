"""Turn a percent-format .py (``# %%`` code cells, ``# %% [markdown]`` prose) into a notebook.

    python scripts/py2nb.py draft.py notebooks/03_scaling_sqrt_dk.ipynb
    make notebooks NB=notebooks/03_scaling_sqrt_dk.ipynb   # execute and store outputs

The reverse, to edit an existing notebook as text: ``jupytext --to py:percent NB.ipynb``.
"""

import sys

import jupytext
import nbformat

KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}


def main(src: str, dest: str) -> None:
    notebook = jupytext.read(src, fmt="py:percent")
    notebook.metadata = {"kernelspec": KERNELSPEC, "language_info": {"name": "python"}}
    for cell in notebook.cells:
        cell.metadata = {k: v for k, v in cell.metadata.items() if k == "tags"}
    nbformat.write(notebook, dest)


if __name__ == "__main__":
    main(*sys.argv[1:])
