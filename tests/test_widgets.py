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


def test_pasted_images_and_titles_are_the_pixels_agg_draws():
    """LiveFigure.paste copies nearest-neighbour images through a pixel map read back from Agg,
    and a LiveHeatmap's title from its first drawing: the picture must be Agg's, pixel for pixel,
    at every position (new shapes, masks, NaN cells left transparent, positions visited twice)."""
    live = toy_explorer()
    positions = [{"n": 8}, {"n": 13}, {"causal": True}, {"temperature": 0.1}, {"n": 40}, {"causal": False},
                 {"n": 13}, {"causal": True}, {"n": 8}]
    for values in positions:
        live.set(**values)
        pasted = live.image.value
        live.paste = False
        drawn = live.render()
        live.paste = True
        assert pasted == drawn, values
    assert live._pixel_maps and live._text_boxes  # the pasting did happen


def test_a_nan_cell_shows_the_background_when_pasted():
    fig = new_figure((3, 3))
    ax = fig.add_subplot()
    ax.set_facecolor("red")
    image = ax.imshow(np.eye(4), interpolation="nearest")

    def update(hole):
        grid = np.eye(4)
        grid[hole, hole] = np.nan
        image.set_data(grid)

    live = LiveFigure(fig, update, {"hole": widgets.IntSlider(value=0, min=0, max=3)}, animated=[image])
    for hole in (1, 2, 1):
        live.set(hole=hole)
        pasted = live.image.value
        live.paste = False
        assert live.render() == pasted
        live.paste = True
    assert live._pixel_maps


def test_a_background_kept_by_key_is_the_one_drawn_afresh():
    """invalidate(layout=False, key=...) keeps each background drawn under a key and reuses it:
    the picture is the one a fresh explorer draws at the same values."""
    def make():
        fig = new_figure((3, 2))
        ax = fig.add_subplot()
        (curve,) = ax.plot([0, 1], [0, 1])
        (dot,) = ax.plot([0.5], [0.5], "o")
        live = []

        def update(slope, x):
            if live:
                live[0].invalidate(layout=False, key=slope)
            curve.set_ydata([0, slope])
            dot.set_data([x], [x * slope])

        live.append(LiveFigure(fig, update, {"slope": widgets.Dropdown(options=[1, 2, 3], value=1),
                                             "x": widgets.FloatSlider(value=0.5, min=0, max=1)}, animated=[dot]))
        return live[0]

    visited = make()
    for slope in (2, 3, 1, 2, 3):
        visited.set(slope=slope)
    for slope in (1, 2, 3):
        visited.set(slope=slope, x=0.25)
        fresh = make()
        fresh.set(slope=slope, x=0.25)
        assert visited.image.value == fresh.image.value, slope
        visited.set(x=0.5)
    assert len(visited._kept_backgrounds) == 3


def test_a_control_moved_in_the_front_end_is_not_echoed_back():
    """A value from the front end redraws without an echo_update message (ipywidgets 8 sends one
    per change unless the trait says otherwise; 7.x sends none), for the explorer's controls
    only: a slider elsewhere still echoes; a value set in the kernel still goes to the front end."""
    live = toy_explorer()
    control, other = live.controls["n"], widgets.IntSlider(value=8, min=2, max=64)
    sent = {id(control): [], id(other): []}

    def recorder(log: list):
        return lambda msg, buffers=None: log.append(msg)

    for widget in (control, other):
        widget._send = recorder(sent[id(widget)])
    before = live.image.value
    control.set_state({"value": 16})  # as the front end's comm message does
    other.set_state({"value": 16})
    assert control.value == 16 and live.image.value != before
    assert not [m for m in sent[id(control)] if m["method"] == "echo_update"]
    if int(widgets.__version__.split(".")[0]) >= 8:
        assert [m["method"] for m in sent[id(other)]] == ["echo_update"]
    live.set(n=24)
    if getattr(control.comm, "kernel", True) is not None:  # ipywidgets 7 sends nothing without a kernel
        assert sent[id(control)][-1]["state"] == {"value": 24}
