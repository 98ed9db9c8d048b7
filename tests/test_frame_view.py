"""Drawing ahead (helpers/widgets.py, FrameView): the positions a move can reach, the picture drawn
ahead equal to the one the kernel draws when the controls get there, and the kernel's loop that
draws them between messages.

The browser's side (painting a picture kept ahead the moment a control moves) runs in JupyterLab
in e2e/test_latency.py, which counts the steps painted that way.
"""

from __future__ import annotations

import asyncio
import json
import math
import random
import sys
import types

import ipywidgets as widgets
import numpy as np
import pytest

from helpers import widgets as live_widgets
from helpers.explorers.registry import EXPLORER_CELLS, build_explorer
from helpers.widgets import HeatmapFrame, LiveHeatmap, picture_widget, positions_along


def test_a_front_end_not_tested_gets_the_canvas_when_asked(monkeypatch):
    monkeypatch.setenv("VSCODE_PID", "1")
    assert live_widgets.picture_kind() == "image"
    monkeypatch.setenv("ATTENTION_LAB_PICTURE", "canvas")
    assert live_widgets.picture_kind() == "canvas" and type(picture_widget()).__name__ == "FrameView"


def test_the_picture_is_a_frame_view_with_the_controls_it_follows():
    live = LiveHeatmap(lambda n, flip: np.eye(n)[::-1] if flip else np.eye(n), {
        "n": widgets.IntSlider(value=3, min=2, max=6), "flip": widgets.Checkbox(value=False)})
    view = live.image
    assert type(view).__name__ == "FrameView"
    assert view.control_ids == [c.model_id for c in live.controls.values()]
    assert view.control_traits == ["value", "value"]
    assert json.loads(view.key) == [3, False] and view.value.startswith(b"\x89PNG")
    live.set(n=5)
    assert json.loads(view.key) == [5, False]
    assert live.widget.children[1].children == (view,)  # the view shows its own readouts


@pytest.mark.parametrize("why", ["anywidget missing", "asked for", "VS Code", "Colab"])
def test_without_anywidget_the_picture_is_a_plain_image(monkeypatch, why):
    monkeypatch.delenv("ATTENTION_LAB_PICTURE", raising=False)
    if why == "asked for":
        monkeypatch.setenv("ATTENTION_LAB_PICTURE", "image")
    elif why == "VS Code":
        monkeypatch.setenv("VSCODE_PID", "1")
    elif why == "Colab":
        monkeypatch.setitem(sys.modules, "google.colab", types.ModuleType("google.colab"))
    else:
        monkeypatch.setattr(live_widgets, "_FRAME_VIEW", [None])
    live = LiveHeatmap(lambda n: np.eye(n), {"n": widgets.IntSlider(value=3, min=2, max=6)})
    assert isinstance(live.image, widgets.Image) and isinstance(picture_widget(), widgets.Image)
    live.set(n=4)
    assert bytes(live.image.value).startswith(b"\x89PNG") and live.readout_box in live.widget.children[1].children


@pytest.mark.parametrize("seed", range(40))
def test_a_slider_s_positions_nearest_first_within_its_range(seed):
    rng = random.Random(seed)
    low = rng.randint(-5, 5)
    high = low + rng.randint(1, 40)
    slider = widgets.IntSlider(min=low, max=high, value=rng.randint(low, high), step=rng.choice([1, 2, 3]))
    moved = rng.choice([-1, 0, 1])
    found = positions_along(slider, moved, reach=1000)
    on_grid = [v for v in range(low, high + 1) if (v - slider.value) % slider.step == 0 and v != slider.value]
    assert sorted(found) == on_grid  # every position one move or more away, once
    distances = [abs(v - slider.value) for v in found]
    assert distances == sorted(distances)  # nearest first
    for a, b in zip(found, found[1:], strict=False):
        if abs(a - slider.value) == abs(b - slider.value) and moved:  # a tie: the way it moved first
            assert np.sign(a - slider.value) == moved
    assert positions_along(slider, moved, reach=3) == found[:3]


@pytest.mark.parametrize("seed", range(10))
def test_a_log_slider_steps_in_the_exponent(seed):
    rng = random.Random(seed)
    lo = rng.randint(-3, 2)
    hi = lo + rng.randint(2, 10)
    at = rng.randint(lo, hi)
    slider = widgets.FloatLogSlider(base=2, min=lo, max=hi, step=1, value=2.0**at)
    found = positions_along(slider, 1, reach=100)
    exponents = sorted(round(math.log2(v), 9) for v in found)
    assert exponents == [e for e in range(lo, hi + 1) if e != at]


def test_a_selection_s_other_options_and_a_checkbox_s_other_state():
    menu = widgets.Dropdown(options=[("a", 10), ("b", 20), ("c", 30), ("d", 40)], value=30)
    assert positions_along(menu, 0) == [20, 40, 10]  # the neighbours first
    assert positions_along(menu, -1)[:2] == [20, 40]  # moving back: the one before first
    assert positions_along(widgets.Checkbox(value=True)) == [False]


def test_a_follower_is_clamped_as_its_leader_s_move_will_clamp_it():
    def compute(length, pads):
        assert pads <= length - 1, (length, pads)  # what the limit guarantees
        return HeatmapFrame(np.eye(length), title=f"{length} {pads}")

    live = LiveHeatmap(compute, {"length": widgets.IntSlider(value=6, min=2, max=8),
                                 "pads": widgets.IntSlider(value=5, min=0, max=5)},
                       limits={"pads": ("length", lambda length: length - 1)})
    assert live._free == {"length": True, "pads": True}  # the limit is LiveFigure's own: both drawn ahead
    picture, _, alt = live.draw_at(length=3)  # pads 5 -> 2
    assert alt == "3 2"
    live.set(length=3)
    assert live.controls["pads"].max == 2 and live.controls["pads"].value == 2
    assert live.image.value == picture


def sample_of(plan: list[dict], k: int) -> list[dict]:
    """The first position along each control, then every few of the rest."""
    firsts = list({next(iter(p)): p for p in reversed(plan)}.values())
    rest = [p for p in plan if p not in firsts]
    return firsts + rest[:: max(1, len(rest) // k)][:k]


@pytest.mark.parametrize(("stem", "cell"), EXPLORER_CELLS, ids=[s for s, _ in EXPLORER_CELLS])
def test_a_picture_drawn_ahead_is_the_one_the_kernel_draws_there(stem, cell, monkeypatch):
    monkeypatch.chdir("notebooks")
    live = build_explorer(stem + ".ipynb", cell)
    start, first = live.values, live.image.value
    positions = sample_of(live.ahead_plan(), 4)
    assert positions, "nothing to draw ahead"
    drawn = [live.draw_at(**p) for p in positions]  # all of them first: the figure's history differs from a walk
    assert live.key() == live.key(start)  # drawing ahead moves no control
    for position, (picture, readouts, alt) in zip(positions[::-1], drawn[::-1], strict=True):
        live.set(**position)
        assert live.image.value == picture, (position, "picture")
        assert live.image.readouts == readouts and live.image.alt == alt, position
        with live.held():
            live.set(**start)
    assert live.image.value == first  # and back where it started, the first picture again


def test_the_kernel_draws_ahead_between_messages_and_uses_what_it_drew():
    calls = []

    def compute(n, seed):
        calls.append((n, seed))
        return HeatmapFrame(np.random.default_rng(seed).random((n, n)), readouts={"n": n})

    live = LiveHeatmap(compute, {"n": widgets.IntSlider(value=4, min=2, max=7),
                                 "seed": widgets.IntSlider(value=0, min=0, max=2)})
    sent = []
    live.image.send = lambda content, buffers=None: sent.append((content, buffers))
    first = live.image.value

    async def look():  # a front end shows the explorer: it asks for what lies ahead
        live._on_view_message(live.image, {"type": "ready"}, [])
        assert live.image.drawing_ahead
        while live._ahead_running:
            await asyncio.sleep(0.01)

    asyncio.run(look())
    ahead = [c for c, _ in sent if c["type"] == "ahead"]
    want = [live.key(p) for p in live.ahead_plan()]
    assert [c["keys"][0] for c in ahead] == want  # every position, nearest first, each once
    assert not live.image.drawing_ahead and live.image.value == first
    assert live.render() == first  # the figure is put back where the controls are
    picture = next(b[0] for c, b in sent if c["type"] == "ahead" and c["keys"] == [[5, 0]])
    before = len(calls)
    live.set(n=5)  # drawn ahead: shown from what was drawn, without computing it again
    assert len(calls) == before and live.image.value == picture and live.readouts == {"n": 5}
    assert json.loads(live.image.key) == [5, 0]


def test_outside_an_event_loop_nothing_is_drawn_ahead():
    live = LiveHeatmap(lambda n: np.eye(n), {"n": widgets.IntSlider(value=3, min=2, max=6)})
    live.image.send = lambda *a, **k: pytest.fail("sent ahead outside a kernel")
    live._on_view_message(live.image, {"type": "ready"}, [])
    live.set(n=4)
    assert not live._ahead_sent and not live._ahead_running
