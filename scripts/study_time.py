"""How long a notebook takes: the core path and the optional deep dives, estimated one way for all.

The estimate counts what a learner does, at fixed rates (the same for every notebook):

- reads prose at 180 words a minute (markdown cells, code spans and maths included);
- runs and looks at each code cell: 20 seconds, plus 4 seconds per line of code (comments and
  blank lines not counted), plus 20 seconds per figure it draws;
- stops to think at each **Predict:** prompt: 1 minute;
- plays with each live explorer: 2 minutes;
- answers each checked exercise: 4 minutes.

A deep dive is a section whose heading contains "Deep dive" (it runs to the next heading of the
same or a higher level), or an exercise marked "(optional)" after its number. Everything else is
the core path, which must take at most 45 minutes. The first cell of every chapter states both
times, rounded to 5 minutes (the second as "the optional exercises" where a notebook has no deep dive); `tests/test_notebooks.py` checks that the statement is this estimate.

    python scripts/study_time.py            # the table, every English notebook
    python scripts/study_time.py --write    # rewrite each notebook's "**Time:**" line to match
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
CORE_LIMIT = 45  # minutes

WORDS_PER_MINUTE = 180
CELL_SECONDS, LINE_SECONDS, FIGURE_SECONDS = 20, 4, 20
PREDICT_MINUTES, EXPLORER_MINUTES, EXERCISE_MINUTES = 1, 2, 4

HEADING = re.compile(r"^(#{1,6})\s+(.*)$", re.MULTILINE)
EXERCISE = re.compile(r"^\*\*\d\d[a-z]?\.\d+\*\*(.*)$", re.MULTILINE)
TIME_LINE = re.compile(r"^\*\*Time:\*\*.*$", re.MULTILINE)


@dataclass
class Estimate:
    core: float  # minutes
    deep: float
    deep_dives: bool = True  # False when the optional part is only exercises marked "(optional)"

    def rounded(self) -> tuple[int, int]:
        """Both times rounded up to 5 minutes, as the notebooks state them."""
        return 5 * math.ceil(self.core / 5), 5 * math.ceil(self.deep / 5)


def cell_minutes(cell) -> float:
    """What one cell costs a learner, in minutes."""
    if cell.cell_type == "markdown":
        words = len(cell.source.split())
        return words / WORDS_PER_MINUTE + PREDICT_MINUTES * cell.source.count("**Predict:**")
    if cell.cell_type != "code":
        return 0.0
    lines = [line for line in cell.source.splitlines() if line.strip() and not line.strip().startswith("#")]
    figures = sum("image/png" in out.get("data", {}) for out in cell.get("outputs", []))
    seconds = CELL_SECONDS + LINE_SECONDS * len(lines) + FIGURE_SECONDS * figures
    explorer = "nbval-ignore-output" in cell.metadata.get("tags", []) and "_explorer(" in cell.source
    checks = cell.source.count('check("')
    return seconds / 60 + EXPLORER_MINUTES * explorer + EXERCISE_MINUTES * checks


def estimate(path: Path) -> Estimate:
    """Core-path and deep-dive minutes of one notebook."""
    nb = nbformat.read(path, as_version=4)
    core = deep = 0.0
    deep_dives = False
    deep_level = None  # heading level of the deep dive we are in, if any
    optional_exercise = False
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for hashes, title in HEADING.findall(cell.source):
                level = len(hashes)
                if deep_level is not None and level <= deep_level and "Deep dive" not in title:
                    deep_level = None
                if deep_level is None and "Deep dive" in title:
                    deep_level, deep_dives = level, True
            numbers = EXERCISE.findall(cell.source)
            if numbers:
                optional_exercise = "(optional)" in numbers[-1]
        elif 'check("' not in cell.source:
            optional_exercise = False
        minutes = cell_minutes(cell)
        if deep_level is not None or optional_exercise:
            deep += minutes
        else:
            core += minutes
    return Estimate(core, deep, deep_dives)


def statement(est: Estimate) -> str:
    """The line the first cell of a chapter carries."""
    core, deep = est.rounded()
    optional = "deep dives" if est.deep_dives else "exercises"
    more = f"; the optional {optional} about {deep} minutes more" if deep else ""
    return (f"**Time:** the core path takes about {core} minutes, exercises included{more} "
            f"([how we estimate](00_start_here.ipynb#how-long-a-notebook-takes)).")


def chapters() -> list[Path]:
    return sorted(NOTEBOOKS.glob("[0-9][0-9]*_*.ipynb"))


def write(path: Path) -> bool:
    """Rewrite the notebook's **Time:** line; True if it changed."""
    nb = nbformat.read(path, as_version=4)
    first = nb.cells[0]
    new = TIME_LINE.sub(statement(estimate(path)), first.source)
    if new == first.source:
        return False
    first.source = new
    nbformat.write(nb, path)
    return True


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="rewrite each notebook's **Time:** line")
    args = parser.parse_args()
    print(f"{'notebook':<34}{'core':>6}{'deep dives':>12}   (minutes, rounded up to 5)")
    over = []
    for path in chapters():
        core, deep = estimate(path).rounded()
        print(f"{path.name:<34}{core:>6}{deep:>12}" + (f"   over the {CORE_LIMIT}-minute core path" if core > CORE_LIMIT else ""))
        over += [path.name] if core > CORE_LIMIT else []
        if args.write and write(path):
            print("  rewrote its **Time:** line")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
