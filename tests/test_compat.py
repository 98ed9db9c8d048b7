"""Runs where learners are: every explorer displays under the ipywidgets installed (7.7+ or 8;
`make test-compat` runs this file under the oldest supported versions), `helpers`' mathematics
imports without the widget stack, and each notebook's first cell explains a missing install."""

import importlib
import inspect
import json
import pkgutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from IPython.core.interactiveshell import InteractiveShell

import helpers.explorers

ROOT = Path(__file__).resolve().parent.parent
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def explorer_factories() -> list:
    """Every `*_explorer` function in helpers/explorers that builds an explorer with no argument,
    found by name (new ones included; the registry's build_explorer(notebook, cell) is not one)."""
    found = []
    for module in pkgutil.iter_modules(helpers.explorers.__path__):
        mod = importlib.import_module(f"helpers.explorers.{module.name}")
        found += [f for name, f in inspect.getmembers(mod, inspect.isfunction)
                  if name.endswith("_explorer") and f.__module__ == mod.__name__
                  and all(p.default is not p.empty for p in inspect.signature(f).parameters.values())]
    return found


@pytest.mark.parametrize("factory", explorer_factories(), ids=lambda f: f.__name__)
def test_every_explorer_displays_live_with_a_static_picture(factory):
    explorer = factory()
    data, _ = InteractiveShell.instance().display_formatter.format(explorer)  # what display() publishes
    view = data[WIDGET_VIEW]
    assert isinstance(view["model_id"], str) and view["model_id"] and view["version_major"] == 2
    assert data["image/png"], "no static picture for headless readers"
    assert data["text/plain"].startswith(type(explorer).__name__)


BLOCK_IPYWIDGETS = """
import importlib.abc, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("ipywidgets", "IPython", "ipykernel"):
            raise ModuleNotFoundError(f"No module named {name!r}")
sys.meta_path.insert(0, Block())
"""


def run_python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)


def test_helpers_mathematics_imports_without_the_widget_stack():
    done = run_python(BLOCK_IPYWIDGETS + """
import torch
import helpers
from helpers import MultiHeadAttention, scaled_dot_product_attention, softmax, check
import helpers.layers, helpers.masks, helpers.position, helpers.scale, helpers.toy_model, helpers.plots
x = torch.randn(2, 5, 8)
y = MultiHeadAttention(8, 2)(x, x, x)[0]
assert y.shape == (2, 5, 8)
assert "ipywidgets" not in sys.modules
try:
    helpers.LiveFigure(helpers.widgets.new_figure((2, 2)), lambda: None, {})
except ModuleNotFoundError as exc:
    assert "pip install ipywidgets" in str(exc), exc
else:
    raise AssertionError("a live figure without ipywidgets must say what to install")
print("ok")
""")
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


@pytest.mark.parametrize("backend", ["module://matplotlib_inline.backend_inline", "Agg"])
def test_figures_draw_inside_an_ipython_session(backend):
    """What a notebook does: an IPython shell, a backend, a heatmap and an explorer's picture.
    The inline backend is Jupyter's default; Agg stands for any other (ipympl, a saved file).
    matplotlib 3.8 fails here with Agg under IPython 9 (it imports `backend2gui`, which IPython 9
    removed), which is why pyproject.toml asks for matplotlib 3.9."""
    done = run_python(f"""
import matplotlib
import numpy as np
from IPython.core.interactiveshell import InteractiveShell
shell = InteractiveShell.instance()
matplotlib.use({backend!r})
from helpers.plots import attention_heatmap
from helpers.explorers.saturation import saturation_explorer
attention_heatmap(np.full((2, 3), 1 / 3), ["a", "b"], ["x", "y", "z"], title="t")
data, _ = shell.display_formatter.format(saturation_explorer())
assert data["image/png"]
print("ok")
""")
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


def first_code_cell(path: Path) -> str:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return "".join(next(c for c in cells if c["cell_type"] == "code")["source"])


NOTEBOOKS = sorted(p for p in (ROOT / "notebooks").rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: str(p.relative_to(ROOT / "notebooks")))
def test_first_cell_says_how_to_install_helpers_when_it_is_missing(path):
    guard = first_code_cell(path).split("\n\n")[0]
    assert guard.startswith("try:") and "except ModuleNotFoundError" in guard, "the first code cell must start with the install guard"
    block_helpers = BLOCK_IPYWIDGETS.replace('("ipywidgets", "IPython", "ipykernel")', '("helpers",)')
    done = run_python(block_helpers + guard)
    assert done.returncode != 0, "the guard must stop the notebook"
    assert "make lab" in done.stdout and "pip install -e ." in done.stdout and "Colab" in done.stdout
    assert done.stderr.strip().splitlines()[-1].startswith("ModuleNotFoundError: No module named 'helpers': ")

