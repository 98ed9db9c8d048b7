"""Mark the answer cells of every Predict, so that a notebook opens with its answers folded.

The series teaches by **Predict → run → explain**: a markdown cell says ``**Predict:**``
(``**예측해 보기:**`` in the Korean edition), and a code cell's output answers it. The outputs
stay stored (they are the textbook and nbval's oracle), so each answer cell carries

- the cell tag ``answer`` (what our own tools, the static site included, read), and
- the standard ``"jupyter": {"outputs_hidden": true}`` metadata, which JupyterLab and
  Jupyter Notebook 7 honour: the output is folded to a "…" bar when the notebook opens, and
  unfolds when the learner runs the cell or clicks the bar.

The rule: a markdown cell that contains the marker is a Predict, and its answer cells are the
code cells with a stored output that follow it up to the next markdown cell (the "explain"
cell). The explain cell often opens with the verdict, so it is folded too: when it comes right
after the answer cells and holds no heading and no other Predict, it carries the tag
``answer-explanation`` and ``"jupyter": {"source_hidden": true}`` (JupyterLab folds the text to a
"…" bar until the learner clicks it; the site shows it with the answer). An explain cell that
holds a heading stays open: its first sentence must not give the verdict. ``OVERRIDES`` lists, per notebook, the Predicts the rule gets wrong. A live explorer's questions
("which word does each pick, and why?") are answered the same way, by the markdown cell right
after the explorer: ``EXPLORER_ANSWERS`` names those cells, which are folded as explanations (the
explorer itself stays open: it is played, not predicted). The Korean twins
share the English cell ids, so one table serves both editions, and ``translations.py build``
copies the English cells' metadata to the twins.

    python scripts/mark_answers.py            # mark both editions (idempotent), print the counts
    python scripts/mark_answers.py --check    # exit 1, saying where, if a mark is missing or stray
    python scripts/mark_answers.py notebooks/05_masking.ipynb   # only these notebooks
"""

from __future__ import annotations

import argparse
import copy
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
KOREAN = NOTEBOOKS / "ko"
TAG = "answer"
EXPLAIN_TAG = "answer-explanation"
MARKERS = {"en": "**Predict:**", "ko": "**예측해 보기:**"}

# Where the rule is wrong: notebook (file stem) -> {Predict cell id: [answer cell ids]}.
# An empty list: the cell mentions the marker but asks nothing (no answer to hide).
OVERRIDES: dict[str, dict[str, list[str]]] = {
    # "How every notebook works" and "How long a notebook takes" describe the method.
    "00_start_here": {"ce89ac19": [], "1074e799": []},
    # "Will S be symmetric?": the loop's S, then Q Kᵀ printed again, its heatmap, and the
    # explicit check after "Your prediction, checked:" all show S[0, 1] != S[1, 0].
    "01_dot_product": {"ec0ef6dc": ["4143626b", "af9ef364", "a52cf308", "3be28fb1"]},
    # The training curve: the first cell only prints the arrays' shapes; the steepest fall
    # and the plot come after the markdown "Where does it fall fastest?".
    "10b_induction_heads": {"c3c3d2d1": ["5815005c", "a8d85cc4"]},
}

# Explanations that answer the questions a live explorer asks, not a Predict: notebook (file stem) ->
# {explorer cell id: the markdown cell right after it that answers them}. They are folded like the
# explanation of a Predict; the explorer cell is not an answer (its output is the control panel).
EXPLORER_ANSWERS: dict[str, dict[str, str]] = {
    # "Try 'it' in the cat and the robot sentence: which word does each pick, and why? Then 'red':
    # why does it split evenly?": the cell under the explorer answers all three.
    "04_self_attention_qkv": {"ca79850c": "0a8f5be0"},
}


def edition(path: Path) -> str:
    return "ko" if KOREAN in path.resolve().parents else "en"


def all_notebooks() -> list[Path]:
    """Every notebook of both editions, chapters and solutions."""
    return sorted(p for p in NOTEBOOKS.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)


def is_predict(cell, marker: str) -> bool:
    return cell.cell_type == "markdown" and marker in cell.source


def has_output(cell) -> bool:
    return cell.cell_type == "code" and bool(cell.get("outputs"))


def foldable_explanation(cell, marker: str) -> bool:
    """A markdown cell that only explains: no heading, no Predict, no anchor to link to."""
    text = cell.source
    return (cell.cell_type == "markdown" and marker not in text and not re.search(r"^#", text, re.MULTILINE)
            and "<a id=" not in text)


@dataclass
class Plan:
    """What a notebook's marks must be: each Predict's answer cells, and what is wrong."""

    answers: dict[str, list[str]] = field(default_factory=dict)  # Predict id -> answer ids
    explains: dict[str, str] = field(default_factory=dict)  # Predict (or explorer) id -> its folded explain cell
    problems: list[str] = field(default_factory=list)

    @property
    def explain_ids(self) -> set[str]:
        return set(self.explains.values())

    @property
    def answer_ids(self) -> set[str]:
        return {cell_id for ids in self.answers.values() for cell_id in ids}


def plan(nb: nbformat.NotebookNode, path: Path) -> Plan:
    """Find the Predicts of ``nb`` (read from ``path``) and their answer cells."""
    marker, overrides = MARKERS[edition(path)], OVERRIDES.get(path.stem, {})
    cells, result = nb.cells, Plan()
    ids = {cell.id for cell in cells}
    for index, cell in enumerate(cells):
        if not is_predict(cell, marker):
            continue
        if cell.id in overrides:
            result.answers[cell.id] = list(overrides[cell.id])
            continue
        following = []
        for after in cells[index + 1:]:
            if after.cell_type == "markdown":
                break
            if has_output(after):
                following.append(after.id)
        result.answers[cell.id] = following
        if not following:
            result.problems.append(f"Predict in cell {cell.id}: no code cell with an output before the "
                                   "next markdown cell; add its answer cells to OVERRIDES in scripts/mark_answers.py")
    position = {cell.id: i for i, cell in enumerate(cells)}
    for predict_id, answer_ids in result.answers.items():
        if not answer_ids:
            continue
        after = max(position[a] for a in answer_ids) + 1
        if after < len(cells) and foldable_explanation(cells[after], marker):
            result.explains[predict_id] = cells[after].id
    for explorer_id, explain_id in EXPLORER_ANSWERS.get(path.stem, {}).items():
        if explorer_id not in position or explain_id not in position:
            result.problems.append(f"EXPLORER_ANSWERS names cell {explorer_id} or {explain_id}, which is not in the notebook")
        elif (position[explain_id] != position[explorer_id] + 1 or cells[position[explorer_id]].cell_type != "code"
              or not foldable_explanation(cells[position[explain_id]], marker)):
            result.problems.append(f"EXPLORER_ANSWERS: cell {explain_id} must be a markdown cell without a heading "
                                   f"right after the explorer cell {explorer_id}")
        else:
            result.explains[explorer_id] = explain_id
    for predict_id, answer_ids in overrides.items():
        if predict_id not in result.answers:
            result.problems.append(f"OVERRIDES names cell {predict_id}, which is not a Predict here")
        for answer_id in answer_ids:
            if answer_id not in ids:
                result.problems.append(f"OVERRIDES names answer cell {answer_id}, which is not in the notebook")
    return result


def is_marked(cell) -> tuple[bool, bool]:
    """(has the tag, has its output hidden) for one cell."""
    hidden = bool(cell.metadata.get("jupyter", {}).get("outputs_hidden")) or bool(cell.metadata.get("collapsed"))
    return TAG in cell.metadata.get("tags", []), hidden


def _set_flag(cell, tag: str, key: str, on: bool) -> bool:
    """Add (or remove) a tag and its ``jupyter`` metadata key together; True if the metadata changed."""
    before = copy.deepcopy(cell.metadata)
    tags = [t for t in cell.metadata.get("tags", []) if t != tag]
    jupyter = {k: v for k, v in cell.metadata.get("jupyter", {}).items() if k != key}
    if on:
        tags.append(tag)
        jupyter[key] = True
    for name, value in (("tags", tags), ("jupyter", jupyter)):
        if value:
            cell.metadata[name] = value
        else:
            cell.metadata.pop(name, None)
    return cell.metadata != before


def set_mark(cell, on: bool) -> bool:
    """Mark (or unmark) one answer cell; True if its metadata changed."""
    changed = "collapsed" in cell.metadata
    cell.metadata.pop("collapsed", None)  # the old Notebook's key; outputs_hidden is the standard one
    return _set_flag(cell, TAG, "outputs_hidden", on) or changed


def is_folded_explanation(cell) -> tuple[bool, bool]:
    """(has the explanation tag, has its text hidden) for one cell."""
    return EXPLAIN_TAG in cell.metadata.get("tags", []), bool(cell.metadata.get("jupyter", {}).get("source_hidden"))


def set_explanation_mark(cell, on: bool) -> bool:
    """Fold (or unfold) one explain cell; True if its metadata changed."""
    return _set_flag(cell, EXPLAIN_TAG, "source_hidden", on)


def check(nb: nbformat.NotebookNode, path: Path) -> list[str]:
    """What is wrong with the marks of one notebook (an empty list: nothing)."""
    wanted = plan(nb, path)
    problems = list(wanted.problems)
    for cell in nb.cells:
        tagged, hidden = is_marked(cell)
        if cell.id in wanted.answer_ids:
            if cell.cell_type != "code":
                problems.append(f"answer cell {cell.id} is a {cell.cell_type} cell")
            if not (tagged and hidden):
                problems.append(f"answer cell {cell.id} is not marked (tag {TAG!r} and outputs_hidden)")
        elif tagged or hidden:
            problems.append(f"cell {cell.id} is marked as an answer but no Predict above it asks for it")
        tagged, hidden = is_folded_explanation(cell)
        if cell.id in wanted.explain_ids and not (tagged and hidden):
            problems.append(f"explain cell {cell.id} is not folded (tag {EXPLAIN_TAG!r} and source_hidden)")
        elif cell.id not in wanted.explain_ids and (tagged or hidden):
            problems.append(f"cell {cell.id} is folded as an explanation but explains no Predict (nor an explorer in EXPLORER_ANSWERS)")
        if "collapsed" in cell.metadata:  # JupyterLab writes it beside outputs_hidden on save
            problems.append(f"cell {cell.id} has the old 'collapsed' key; outputs_hidden is the one mark")
    return problems


def mark(nb: nbformat.NotebookNode, path: Path) -> bool:
    """Bring the marks of ``nb`` in line with its plan; True if anything changed."""
    wanted = plan(nb, path)
    changed = False
    for cell in nb.cells:
        changed |= set_mark(cell, cell.id in wanted.answer_ids)
        changed |= set_explanation_mark(cell, cell.id in wanted.explain_ids)
    return changed


def read(path: Path) -> nbformat.NotebookNode:
    return nbformat.read(path, as_version=4)


def write(nb: nbformat.NotebookNode, path: Path) -> None:
    path.write_text(nbformat.writes(nb) + "\n", encoding="utf-8")  # as translations.py writes


def twin_problems(paths: list[Path]) -> list[str]:
    """A Korean twin must have its Predicts and answer cells where the English notebook has them."""
    problems = []
    for path in paths:
        twin = KOREAN / path.relative_to(NOTEBOOKS)
        if edition(path) != "en" or not twin.exists():
            continue
        en, ko = plan(read(path), path), plan(read(twin), twin)
        if en.answers != ko.answers or en.explains != ko.explains:
            problems.append(f"{twin.relative_to(ROOT)}: Predicts or answer cells differ from the English "
                            f"({sorted(en.answers)} vs {sorted(ko.answers)})")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="*", type=Path, help="default: every notebook, both editions")
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if a mark is missing or stray")
    args = parser.parse_args(argv)
    paths = [p.resolve() for p in args.notebooks] or all_notebooks()

    failed, predicts, answers, explains = [], 0, 0, 0
    for path in paths:
        nb = read(path)
        wanted = plan(nb, path)
        predicts += sum(1 for ids in wanted.answers.values() if ids)
        answers += len(wanted.answer_ids)
        explains += len(wanted.explain_ids)
        if not args.check and not wanted.problems and mark(nb, path):
            write(nb, path)
            print(f"marked {path.relative_to(ROOT)}")
        failed += [f"{path.relative_to(ROOT)}: {p}" for p in check(nb, path)]
    failed += twin_problems(paths)
    print(f"{predicts} Predicts with an answer, {answers} answer cells, {explains} explanations folded, "
          f"in {len(paths)} notebooks")
    if failed:
        print("\n".join(failed), file=sys.stderr)
        if args.check:
            print("run `python scripts/mark_answers.py` to mark them", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
