"""The registry of explorer cells: complete, and each builder draws what its cell stored."""

import base64
import io
import re
from pathlib import Path

import matplotlib
import numpy as np
import pytest
from PIL import Image

from helpers import i18n
from helpers.explorers.registry import (
    EXPLORER_CELLS,
    SELF_CONTAINED,
    build_explorer,
    explorer_cells,
    run_cell,
)
from helpers.widgets import LiveFigure

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
ALL_NOTEBOOKS = sorted(NOTEBOOKS.rglob("*.ipynb"))
PINNED_MATPLOTLIB = re.search(r"^matplotlib==(\S+)", (ROOT / "requirements.txt").read_text(), re.M).group(1)


def pixels(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))


@pytest.mark.parametrize("notebook", ALL_NOTEBOOKS, ids=lambda p: str(p.relative_to(NOTEBOOKS)))
def test_every_explorer_cell_is_registered(notebook):
    for cell in explorer_cells(notebook):
        assert (notebook.stem, cell.get("id")) in EXPLORER_CELLS, (
            f"{notebook.name}: cell {cell.get('id')} shows a live widget but helpers/explorers/registry.py "
            "has no entry for it (the static site could not render it)")


def test_every_entry_names_an_explorer_cell():
    for stem, cell_id in EXPLORER_CELLS:
        ids = [c.get("id") for c in explorer_cells(NOTEBOOKS / f"{stem}.ipynb")]
        assert cell_id in ids, f"{stem}: no explorer cell with id {cell_id} (cells: {ids})"


@pytest.mark.parametrize("key", sorted(EXPLORER_CELLS), ids="/".join)
@pytest.mark.skipif(matplotlib.__version__ != PINNED_MATPLOTLIB,
                    reason="the stored pictures were drawn by the matplotlib requirements.txt pins")
def test_builder_draws_the_stored_picture(key):
    """The builder makes the explorer the cell displays: the same picture. Pixel for pixel on the
    machine that stored it; another CPU may move a colour one step where a value sits on a colour
    boundary (float noise), so up to 1 % of the pixels may differ, by a few levels at most."""
    stem, cell_id = key
    notebook = NOTEBOOKS / f"{stem}.ipynb"
    cell = next(c for c in explorer_cells(notebook) if c.get("id") == cell_id)
    stored = next(o["data"]["image/png"] for o in cell["outputs"] if "image/png" in o.get("data", {}))
    i18n.set_language("en")
    try:
        explorer = build_explorer(notebook, cell_id)
    finally:
        i18n.set_language(None)
    assert isinstance(explorer, LiveFigure)
    want, got = pixels(base64.b64decode(stored)), pixels(explorer.image.value)
    assert want.shape == got.shape, f"{stem}: stored picture {want.shape}, builder's {got.shape}"
    differ = (want != got).any(axis=-1)
    assert differ.mean() < 0.01, f"{stem}: the builder's picture differs from the cell's stored one ({differ.mean():.1%} of pixels)"
    assert np.abs(want.astype(int) - got.astype(int)).max() <= 24, f"{stem}: some pixels differ by more than float noise explains"


def test_self_contained_cell_runs_alone():
    source = "from helpers.widgets import LiveFigure\nx = 1\nx + 1"
    assert run_cell(source) == 2
    with pytest.raises(ValueError, match="must end with the explorer"):
        run_cell("x = 1")
    assert SELF_CONTAINED in EXPLORER_CELLS.values()


def test_unregistered_cell_is_a_clear_error():
    with pytest.raises(KeyError, match="registry.py"):
        build_explorer(NOTEBOOKS / "03_scaling_sqrt_dk.ipynb", "nope")
