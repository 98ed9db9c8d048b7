"""A picture does not depend on the pictures before it: what an explorer draws at a position is
what a new explorer draws there first. The site's frames (drawn in one order), a picture drawn
ahead (website/frames.py, helpers/widgets.py FrameView) and the kernel's answer after a walk must
all be the same picture; a layout or background kept from an earlier picture must not leak.

Its own file, so that pytest-xdist (--dist loadfile) runs it beside tests/test_frame_view.py.
"""

from __future__ import annotations

import pytest

from helpers import i18n
from helpers.explorers.registry import EXPLORER_CELLS, build_explorer


@pytest.mark.parametrize("language", ["en", "ko"])
@pytest.mark.parametrize(("stem", "cell"), EXPLORER_CELLS, ids=[s for s, _ in EXPLORER_CELLS])
def test_a_picture_does_not_depend_on_the_pictures_before_it(stem, cell, language, monkeypatch):
    """One explorer walks through one move of each control and every two of them at once; at each
    position its picture is, byte for byte, the one a new explorer draws there first. (A layout
    kept from the first picture of a label set must be the one any picture of that set would make:
    03's titles differ in height.)"""
    monkeypatch.chdir("notebooks/ko" if language == "ko" else "notebooks")
    i18n.set_language(language)
    try:
        walker = build_explorer(stem + ".ipynb", cell)
        firsts = list({next(iter(p)): p for p in reversed(walker.ahead_plan())}.values())
        pairs = [{**a, **b} for i, a in enumerate(firsts) for b in firsts[i + 1:]]
        for position in firsts + pairs:
            fresh = build_explorer(stem + ".ipynb", cell).draw_at(**position)[0]
            assert walker.draw_at(**position)[0] == fresh, position
    finally:
        i18n.set_language(None)
