"""Notebook 00: a warm-up exercise that shows how checking works."""

from helpers.checks import exercise


@exercise("00.1", hint="how many entries does a 3 × 4 matrix hold? Rows times columns.")
def _entries_in_3x4(answer) -> bool:
    return int(answer) == 3 * 4 and float(answer) == int(answer)
