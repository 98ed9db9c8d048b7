"""The live heatmap component: updates in place, fast, and safe at every control position."""

import base64

import ipywidgets as widgets
import numpy as np
import pytest

import helpers
from helpers.widgets import HeatmapFrame, LiveFigure, LiveHeatmap, new_figure
from tests.widget_sweep import sweep


def toy_explorer() -> LiveHeatmap:
    def compute(n, temperature, causal):
        scores = np.random.default_rng(n).standard_normal((n, n))
        mask = np.tril(np.ones((n, n), bool)) if causal else None
        _, weights = helpers.scaled_dot_product_attention(scores, scores, scores, mask=mask, scale=1 / temperature)
        return HeatmapFrame(weights, mask=mask, readouts={"max weight": float(weights.max())})

    return LiveHeatmap(compute, {
        "n": widgets.IntSlider(value=8, min=2, max=64),
        "temperature": widgets.FloatLogSlider(value=1.0, min=-2, max=2),
        "causal": widgets.Checkbox(value=False),
    })


def test_sweep_changes_picture_warns_nothing_no_nan():
    sweep(toy_explorer())


def test_figure_is_made_once_and_reused():
    live = toy_explorer()
    fig, image = live.fig, live.heat
    live.set(n=32)
    live.set(temperature=0.1)
    assert live.fig is fig and live.heat is image and len(live.ax.images) == 2


def test_headless_display_carries_a_static_png():
    live = toy_explorer()
    bundle = live._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    png = base64.b64decode(bundle["image/png"])
    assert png.startswith(b"\x89PNG") and png == live.image.value


def test_mask_cells_are_drawn_differently():
    live = toy_explorer()
    live.set(causal=False)
    plain = live.image.value
    live.set(causal=True)
    assert live.overlay.get_visible() and live.image.value != plain


def test_unknown_control_is_a_clear_error():
    with pytest.raises(ValueError, match="no control named 'm'"):
        toy_explorer().set(m=3)


def test_live_figure_generic_update():
    fig = new_figure((3, 2))
    ax = fig.add_subplot()
    (line,) = ax.plot([0, 1], [0, 1])

    def update(slope):
        line.set_ydata([0, slope])
        return {"slope": float(slope)}

    live = LiveFigure(fig, update, {"slope": widgets.FloatSlider(value=1, min=-1, max=1)})
    assert live.readouts == {"slope": 1.0}
    sweep(live)
