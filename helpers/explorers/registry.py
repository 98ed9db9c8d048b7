"""Every live explorer the notebooks display, buildable without running its notebook.

Keyed by the notebook's file name (without ``.ipynb``) and the id of the cell that displays the
explorer; the Korean edition's cells keep the English ids, so one entry serves both editions.
A value either builds the same explorer the cell builds, with no argument (a notebook variable
the cell passes, such as the shipped model, is made here by the same helpers function the
notebook calls), or is :data:`SELF_CONTAINED`: the cell makes its explorer from its own source,
which :func:`build_explorer` then runs alone.

The static site renders each explorer's pictures from these builders.
``tests/test_explorer_registry.py`` checks that every explorer cell has an entry and that each
builder's picture is, pixel for pixel, the one stored in its cell.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Callable
from pathlib import Path

from helpers.widgets import LiveFigure

SELF_CONTAINED = "self-contained"  # the cell builds its explorer from its own source alone
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def _vectors() -> LiveFigure:
    from helpers.explorers.vectors import vectors_explorer

    return vectors_explorer(angle=60, q_length=1.5, k_length=2.0)


def _temperature() -> LiveFigure:
    from helpers.explorers.temperature import temperature_explorer

    return temperature_explorer(temperature=1.0, seed=0)


def _saturation() -> LiveFigure:
    from helpers.explorers.saturation import saturation_explorer

    return saturation_explorer(d_k=128, n=16, scale=False, seed=0)


def _sentence() -> LiveFigure:
    from helpers.explorers.sentence import sentence_explorer

    return sentence_explorer()


def _masking() -> LiveFigure:
    from helpers.explorers.masking import masking_explorer

    return masking_explorer()


def _heads() -> LiveFigure:
    from helpers.explorers.heads import heads_explorer

    return heads_explorer(num_heads=4, head=0)


def _depth() -> LiveFigure:
    from helpers.explorers.depth import depth_explorer

    return depth_explorer(depth=32, placement="post-norm (2017)", gain=1.0)


def _position() -> LiveFigure:
    from helpers.explorers.position import demo_sentence, position_explorer

    return position_explorer(*demo_sentence())  # the notebook's tokens, x, W_q, W_k, W_v


def _scale() -> LiveFigure:
    from helpers.explorers.scale import scale_explorer

    return scale_explorer()


def _trained() -> LiveFigure:
    from helpers.explorers.trained import trained_explorer

    return trained_explorer()


def _induction() -> LiveFigure:
    from helpers.explorers.induction import induction_explorer
    from helpers.induction import load_model

    return induction_explorer(load_model())  # the notebook's `shipped`


def _vla() -> LiveFigure:
    from helpers.explorers.vla import vla_explorer
    from helpers.vla import QUERIES, load_models

    shipped = load_models()
    explorer = vla_explorer(shipped)
    explorer.set(layer=0, query=QUERIES[0], head=0)  # as the cell leaves it: the colour word's looking head (section 8)
    return explorer


EXPLORER_CELLS: dict[tuple[str, str], Callable[[], LiveFigure] | str] = {
    ("00_start_here", "3073b881"): SELF_CONTAINED,
    ("01_dot_product", "8ee1daed"): _vectors,
    ("02_softmax", "3928e1dc"): _temperature,
    ("03_scaling_sqrt_dk", "1e5ebf0a"): _saturation,
    ("04_self_attention_qkv", "ca79850c"): _sentence,
    ("05_masking", "6aa2e2e5"): _masking,
    ("06_multi_head_attention", "68eaa66c"): _heads,
    ("07_transformer_block", "2e495b28"): _depth,
    ("08_position", "6b25fa82"): _position,
    ("09_attention_at_scale", "0e44f937"): _scale,
    ("10_trained_attention", "5f272dd6"): _trained,
    ("10b_induction_heads", "76ab2cbe"): _induction,
    ("11_tiny_vla", "ede0b579"): _vla,
}


def explorer_cells(notebook: Path) -> list[dict]:
    """The code cells of a notebook whose stored output is a live widget, in order."""
    cells = json.loads(Path(notebook).read_text(encoding="utf-8"))["cells"]
    return [c for c in cells if c["cell_type"] == "code"
            and any(WIDGET_VIEW in o.get("data", {}) for o in c.get("outputs", []))]


def run_cell(source: str) -> LiveFigure:
    """Run a self-contained cell's source in a fresh namespace; return its last expression's value."""
    tree = ast.parse(source)
    if not tree.body or not isinstance(tree.body[-1], ast.Expr):
        raise ValueError("a self-contained explorer cell must end with the explorer as an expression")
    namespace: dict = {"__name__": "__explorer_cell__"}
    exec(compile(ast.Module(tree.body[:-1], type_ignores=[]), "<explorer cell>", "exec"), namespace)  # noqa: S102
    return eval(compile(ast.Expression(tree.body[-1].value), "<explorer cell>", "eval"), namespace)  # noqa: S307


def build_explorer(notebook: Path, cell_id: str) -> LiveFigure:
    """The explorer that cell ``cell_id`` of ``notebook`` displays, built without the rest of the notebook."""
    key = (Path(notebook).stem, cell_id)
    if key not in EXPLORER_CELLS:
        raise KeyError(f"no registered explorer for cell {cell_id} of {Path(notebook).name}; "
                       "add it to helpers/explorers/registry.py")
    builder = EXPLORER_CELLS[key]
    if builder == SELF_CONTAINED:
        cell = next(c for c in explorer_cells(notebook) if c.get("id") == cell_id)
        return run_cell("".join(cell["source"]))
    return builder()
