"""Hangul in every figure, on any machine: a font shipped with ``helpers``, added as a fallback.

matplotlib's default font, DejaVu Sans, has no Hangul. ``helpers/locale/fonts/`` ships a
subset of Noto Sans KR (Hangul only, SIL Open Font License; see the README there), so a fresh
``make lab``, CI and Colab draw Korean text with nothing installed from the system and nothing
downloaded. :func:`register` (run when ``helpers`` is imported) adds it to matplotlib's font
manager and after the default family, so matplotlib (3.6 and newer) takes each glyph from the
first font that has it: Latin letters, digits and mathematical signs from DejaVu Sans as
before, Hangul from Noto Sans KR. English figures look exactly as they did.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import matplotlib
from matplotlib import font_manager

HANGUL_FONT = Path(__file__).resolve().parent / "locale" / "fonts" / "NotoSansKR-Hangul.otf"
HANGUL_FAMILY = "Noto Sans KR"
# Fixed-width text (readings in a figure): DejaVu Sans Mono, then DejaVu Sans for the signs it lacks
# (ℓ, ‖), then Hangul.
MONOSPACE = ["monospace", "sans-serif", HANGUL_FAMILY]


def register() -> None:
    """Make the Hangul font known to matplotlib and a fallback of the default family (idempotent).

    The subset has one weight; it is also entered as the family's bold, so a bold title draws its
    Hangul in the regular weight instead of matplotlib warning that no bold Noto Sans KR exists."""
    manager = font_manager.fontManager
    if HANGUL_FAMILY not in {entry.name for entry in manager.ttflist}:
        manager.addfont(str(HANGUL_FONT))
        regular = next(entry for entry in manager.ttflist if entry.name == HANGUL_FAMILY)
        manager.ttflist.append(dataclasses.replace(regular, weight=700))
    families = list(matplotlib.rcParams["font.family"])
    if HANGUL_FAMILY not in families:
        matplotlib.rcParams["font.family"] = [*families, HANGUL_FAMILY]
