"""Pad text by the columns it takes on screen, so printed tables line up in both editions.

Python's ``f"{label:<8}"`` pads by characters, but a Hangul syllable (like every East Asian
wide or fullwidth character) takes two columns of a monospace cell output, so a table with
Korean labels comes out ragged. ``ljust``, ``rjust`` and ``center`` pad by display width:

    print(f"{ljust(genre, 8)} {mine} × {theirs}")
"""

from __future__ import annotations

import math
import unicodedata

from .i18n import language

WIDE = ("W", "F")  # unicodedata.east_asian_width: wide and fullwidth characters take two columns


def width(text: object) -> int:
    """The columns ``text`` (or ``str(text)``) takes in a monospace output: two for each East
    Asian wide or fullwidth character, none for a combining mark, one for any other."""
    text = str(text)
    return sum(0 if unicodedata.combining(ch) else 2 if unicodedata.east_asian_width(ch) in WIDE else 1
               for ch in text)


def pad(text: object, columns: int, align: str = "<") -> str:
    """``str(text)`` padded with spaces to ``columns`` display columns: ``align`` "<" pads on the
    right, ">" on the left, "^" on both sides (like ``format``); text already as wide is kept."""
    text = str(text)
    gap = max(columns - width(text), 0)
    if align == "<":
        return text + " " * gap
    if align == ">":
        return " " * gap + text
    if align == "^":
        return " " * (gap // 2) + text + " " * (gap - gap // 2)
    raise ValueError(f"align must be '<', '>' or '^', got {align!r}")


def ljust(text: object, columns: int) -> str:
    """``text`` left-aligned in ``columns`` display columns (``f"{text:<columns}"`` by width)."""
    return pad(text, columns, "<")


def rjust(text: object, columns: int) -> str:
    """``text`` right-aligned in ``columns`` display columns (``f"{text:>columns}"`` by width)."""
    return pad(text, columns, ">")


def center(text: object, columns: int) -> str:
    """``text`` centred in ``columns`` display columns (``f"{text:^columns}"`` by width)."""
    return pad(text, columns, "^")



def count(n: float, unit: float, english: str = "B") -> str:
    """A large count rounded to ``unit`` (a power of ten), as the learner's language writes it:
    in English in ``english`` units, "B" (10⁹: "2.15 B") or "M" (10⁶: "67 M"); in Korean in 억
    (10⁸: "21.5억") from 10⁸ up, else in 만 (10⁴: "6,700만")."""
    n = float(n)
    if language() != "ko":
        size = {"B": 1e9, "M": 1e6}[english]
        return f"{n / size:.{max(0, round(math.log10(size / unit)))}f} {english}"
    if abs(n) >= 1e8:
        return f"{n / 1e8:.{max(0, round(math.log10(1e8 / unit)))}f}억"
    return f"{round(n / unit) * unit / 1e4:,.0f}만"  # 만 groups its digits (6,700만), no decimals
