"""Pad text by the columns it takes on screen, so printed tables line up in both editions.

Python's ``f"{label:<8}"`` pads by characters, but a Hangul syllable (like every East Asian
wide or fullwidth character) takes two columns of a monospace cell output, so a table with
Korean labels comes out ragged. ``ljust``, ``rjust`` and ``center`` pad by display width:

    print(f"{ljust(genre, 8)} {mine} × {theirs}")
"""

from __future__ import annotations

import unicodedata

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
