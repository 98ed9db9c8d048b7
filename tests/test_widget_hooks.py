"""LiveFigure's hooks for drawing a position in one step (used by the static site's frames)."""

import helpers.widgets
from tests.test_widgets import toy_explorer


def test_held_moves_several_controls_with_one_redraw():
    live = toy_explorer()
    calls = []
    compute = live._compute
    live._compute = lambda **values: calls.append(values) or compute(**values)
    with live.held():
        live.set(n=16)
        live.set(temperature=0.1, causal=True)
        assert calls == [], "a change inside held() must not redraw"
    assert calls == [{"n": 16, "temperature": 0.1, "causal": True}]
    before = live.image.value
    with live.held(redraw=False):
        live.set(n=4)
    assert len(calls) == 1 and live.image.value == before
    live.set(n=8)  # outside held() every change redraws again
    assert len(calls) == 2 and live.image.value != before


def test_held_redraws_nothing_when_the_block_raises():
    live = toy_explorer()
    try:
        with live.held():
            live.set(n=16)
            raise RuntimeError("stop")
    except RuntimeError:
        pass
    assert not live._held, "held() must end even when its block raises"


def test_format_readout_is_what_the_table_shows():
    assert helpers.widgets.format_readout(0.12345) == "0.123"
    assert helpers.widgets.format_readout(3) == "3" and helpers.widgets.format_readout("yes") == "yes"
    assert ">0.123<" in helpers.widgets.format_readouts({"x": 0.12345})
