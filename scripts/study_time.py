"""How long a notebook takes: the core path and the optional deep dives, estimated one way for all.

The estimate counts what a learner does, at fixed rates (the same for every notebook). The
learner we write for (00_start_here, "Who it is for") knows Python, NumPy and a little PyTorch,
and the maths of a first course (matrix products and transposes, derivatives and the chain rule,
mean and variance), and reads every line: the maths is
dense and the code is meant to be run, read and changed. The rates are set for that learner,
and checked against three expert reads of the whole series, who put the core paths of 01, 02,
04 and 05 at 43-47 minutes and of 06-09 at 49-75, where the old rates (180 words a minute, 4 s a
line, 4 minutes for any exercise) said 38-40:

- reads prose at 120 words a minute (markdown cells, code spans and maths included): the speed
  of careful reading of technical text, where a formula or a shape is read and understood, not
  skimmed as a word;
- runs and looks at each code cell: 20 seconds, plus 8 seconds per line of code (comments and
  blank lines not counted), plus 20 seconds per figure it draws: a line of tensor code is
  read for its shapes, and its output compared with what the text says;
- only runs a cell whose output varies from machine to machine (tagged ``nbval-ignore-output``)
  and that is not a live explorer: 20 seconds. Such a cell checks the learner's setup (00's
  environment check, widgets) or times something; its code is plumbing the learner runs, not
  the lesson, and what it teaches is in the text around it;
- stops to think at each **Predict:** prompt (a paragraph that starts with it): 1 minute;
- plays with each live explorer: 2 minutes;
- answers each checked exercise by its kind (the table EXERCISE_KIND, one entry per exercise):
  - "value", 3 minutes: a number, shape or choice worked by hand or with one short expression;
  - "code", 8 minutes: a few lines of code, or a value that needs a few lines of code to
    compute (a measurement, a small function, a mask);
  - "build", 15 minutes: a component written from its description (attention with masks
    and heads, a gradient, a feed-forward, weights designed by hand), tested on inputs the
    checker draws, with a wrong try or two on the way.

A deep dive is a section whose heading contains "Deep dive" (it runs to the next heading of the
same or a higher level), or an exercise marked "(optional)" after its number. Everything else is
the core path, which must take at most 45 minutes (CORE_LIMIT). The first cell of every chapter
states both times, rounded up to 5 minutes (the second as "the optional exercises" where a
notebook has no deep dive); `tests/test_notebooks.py` checks that the statement is this estimate.

    python scripts/study_time.py            # the table, every English notebook
    python scripts/study_time.py --write    # rewrite each notebook's "**Time:**" line (and the Korean
                                            # translation's "**소요 시간:**" line; then translations.py build)
    python scripts/study_time.py --sections 05 10b   # where each notebook's time goes, by section
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

WORDS_PER_MINUTE = 120
CELL_SECONDS, LINE_SECONDS, FIGURE_SECONDS = 20, 8, 20
PREDICT_MINUTES, EXPLORER_MINUTES = 1, 2
KIND_MINUTES = {"value": 3, "code": 8, "build": 15}

# Every checked exercise by kind (see the docstring). tests/test_notebooks.py checks that every
# exercise helpers.checks knows is here, with a known kind.
EXERCISE_KIND = {
    "00.1": "value",   # entries of a 3 x 4 matrix
    "01.1": "value",   # one dot product by hand
    "01.2": "value",   # one cosine, one expression
    "01.3": "value",   # Cauchy-Schwarz bound: sqrt(46 * 51)
    "01.4": "code",    # cosine_scores: normalise, then one matmul, with batch axes
    "01.5": "value",   # count the multiplications of Q K^T
    "02.1": "value",   # softmax of three numbers
    "02.2": "code",    # a stable log_softmax along any axis: a few lines
    "02.3": "value",   # a choice, then one stable softmax
    "02.4": "value",   # solve 300 e^s = float16 max
    "02.5": "code",    # chain rule through the softmax Jacobian, confirmed with autograd
    "03.1": "value",   # Var(q . k) with uniform keys
    "03.2": "build",   # query_gradient: backward through softmax and the scores, no autograd
    "03.3": "value",   # Var(q . k) at variance 4
    "03.4": "value",   # the worked example without the scale: one expression
    "04.1": "value",   # an output shape
    "04.2": "build",   # batched cross-attention in the nn.Linear layout
    "04.3": "value",   # parameters of W_Q, W_K, W_V
    "04.4": "build",   # design a W_Q by hand for a one-sided rule
    "04.5": "value",   # which points lie in the hull of the values
    "05.1": "build",   # masked attention with empty rows and broadcasting masks
    "05.2": "code",    # a batched prefix-LM mask
    "05.3": "code",    # five masks: decide which leak, confirm with dependence
    "05.4": "code",    # one attn_mask for nn.MultiheadAttention: padding, causality, heads
    "05.5": "value",   # fully masked rows of padding & sliding window
    "06.1": "value",   # parameters of T5-3B's attention
    "06.2": "value",   # a weights shape
    "06.3": "build",   # causal multi-head self-attention in the fused layout
    "06.4": "value",   # KV cache numbers per token per layer
    "06.5": "code",    # repeat_kv for grouped-query attention
    "07.1": "value",   # the dominant path length: argmax of a binomial term
    "07.2": "build",   # SwiGLU with fused weights
    "07.3": "value",   # parameters of a TinyLlama block
    "07.4": "code",    # run the depth experiment at a new setting, take a ratio
    "08.1": "value",   # rows of a position table
    "08.2": "value",   # where an output moves under a permutation
    "08.3": "value",   # PE[5] . PE[8] by hand
    "08.4": "value",   # the slowest sinusoid's wavelength
    "08.5": "value",   # RoPE's best key position
    "09.1": "code",    # measure a peak memory
    "09.2": "value",   # MiB of score matrices
    "09.3": "value",   # sequences whose KV cache fits
    "09.4": "value",   # the context length where n x n reaches half
    "09.5": "value",   # online softmax by hand
    "10.1": "code",    # ablate a layer, measure accuracy
    "10.2": "value",   # parameters of one block by hand
    "10.3": "code",    # run the model without its mask, measure
    "10.4": "code",    # mean weight on the mirror position
    "10.5": "code",    # build and train a one-layer model with the helpers, measure
    "10.6": "code",    # per-position accuracies, then a choice
    "10b.1": "value",  # one call of generate
    "10b.2": "code",   # remove one head, measure prefix matching
    "10b.3": "code",   # a mean cross-entropy over 50 sequences
    "10b.4": "code",   # sample 2000 continuations, count
    "10b.5": "code",   # the copying score of an OV circuit
    "11.1": "value",   # parameters of a Llama 3-8B block
    "11.2": "code",    # unpatchify: reshape and permute
    "11.3": "value",   # a memory-bandwidth floor
    "11.4": "code",    # knock out one look, measure success
    "11.5": "code",    # patch one position of the residual, measure recovery
    "11.6": "value",   # a patching recovery from three runs' logits, by hand
}

HEADING = re.compile(r"^(#{1,6})\s+(.*)$", re.MULTILINE)
EXERCISE = re.compile(r"^\*\*\d\d[a-z]?\.\d+\*\*(.*)$", re.MULTILINE)
CHECK = re.compile(r'check\("([^"]+)"')
TIME_LINE = re.compile(r"^\*\*Time:\*\*.*$", re.MULTILINE)
KOREAN_TIME_LINE = re.compile(r"^\*\*소요 시간:\*\*.*$", re.MULTILINE)


@dataclass
class Estimate:
    core: float  # minutes
    deep: float
    deep_dives: bool = True  # False when the optional part is only exercises marked "(optional)"
    core_exercises: int = 1  # checked exercises on the core path

    def rounded(self) -> tuple[int, int]:
        """Both times rounded up to 5 minutes, as the notebooks state them."""
        return 5 * math.ceil(self.core / 5), 5 * math.ceil(self.deep / 5)


def cell_minutes(cell) -> float:
    """What one cell costs a learner, in minutes."""
    if cell.cell_type == "markdown":
        words = len(cell.source.split())
        predicts = len(re.findall(r"^\*\*Predict:\*\*", cell.source, re.MULTILINE))  # a prompt, not a mention
        return words / WORDS_PER_MINUTE + PREDICT_MINUTES * predicts
    if cell.cell_type != "code":
        return 0.0
    varies = "nbval-ignore-output" in cell.metadata.get("tags", [])
    explorer = varies and "_explorer(" in cell.source
    if varies and not explorer:  # run-only: a setup check or a timing, read in the text around it
        return CELL_SECONDS / 60 + sum(KIND_MINUTES[EXERCISE_KIND[n]] for n in CHECK.findall(cell.source))
    lines = [line for line in cell.source.splitlines() if line.strip() and not line.strip().startswith("#")]
    figures = sum("image/png" in out.get("data", {}) for out in cell.get("outputs", []))
    seconds = CELL_SECONDS + LINE_SECONDS * len(lines) + FIGURE_SECONDS * figures
    exercises = sum(KIND_MINUTES[EXERCISE_KIND[number]] for number in CHECK.findall(cell.source))
    return seconds / 60 + EXPLORER_MINUTES * explorer + exercises


def walk(nb) -> list[tuple[int, str, float, bool]]:
    """(cell index, the section it is in, its minutes, whether it is optional) for every cell."""
    rows = []
    section, deep_level, optional_exercise = "(before the first heading)", None, False
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            if HEADING.search(cell.source):  # a new section ends an optional exercise
                optional_exercise = False
            for hashes, title in HEADING.findall(cell.source):
                level, section = len(hashes), f"{hashes} {title}"
                if deep_level is not None and level <= deep_level and "Deep dive" not in title:
                    deep_level = None
                if "Deep dive" in title:  # a deep dive of a higher level widens the one we are in
                    deep_level = level if deep_level is None else min(deep_level, level)
            numbers = EXERCISE.findall(cell.source)
            if numbers:
                optional_exercise = "(optional)" in numbers[-1]
        elif 'check("' not in cell.source:
            optional_exercise = False
        rows.append((index, section, cell_minutes(cell), deep_level is not None or optional_exercise))
    return rows


def estimate(path: Path) -> Estimate:
    """Core-path and deep-dive minutes of one notebook."""
    nb = nbformat.read(path, as_version=4)
    rows = walk(nb)
    core = sum(minutes for _, _, minutes, optional in rows if not optional)
    deep = sum(minutes for _, _, minutes, optional in rows if optional)
    deep_dives = any("Deep dive" in title for _, title in HEADING.findall("\n".join(
        cell.source for cell in nb.cells if cell.cell_type == "markdown")))
    core_exercises = sum(len(CHECK.findall(nb.cells[i].source)) for i, _, _, optional in rows
                         if not optional and nb.cells[i].cell_type == "code")
    return Estimate(core, deep, deep_dives, core_exercises)


def sections(path: Path) -> str:
    """Each section's core and optional minutes: where a notebook's time goes."""
    lines, last = [], None
    for index, section, minutes, optional in walk(nbformat.read(path, as_version=4)):
        if section != last:
            lines.append([index, section, 0.0, 0.0])
            last = section
        lines[-1][3 if optional else 2] += minutes
    return "\n".join(f"  cell {i:>3} {core:5.1f} {deep:5.1f}  {title[:80]}" for i, title, core, deep in lines)


def statement(est: Estimate) -> str:
    """The line the first cell of a chapter carries."""
    core, deep = est.rounded()
    optional = "deep dives" if est.deep_dives else "exercises"
    if est.core_exercises:
        first = f"the core path takes about {core} minutes, exercises included"
    else:  # every exercise is optional: say so
        first, optional = f"the core path takes about {core} minutes", f"{optional} and exercises"
    more = f"; the optional {optional} about {deep} minutes more" if deep else ""
    return f"**Time:** {first}{more} ([how we estimate](00_start_here.ipynb#how-long-a-notebook-takes))."


def korean_statement(est: Estimate) -> str:
    """The same line in the Korean edition (its first cell's translation carries it)."""
    core, deep = est.rounded()
    optional = "선택 심화 학습은" if est.deep_dives else "선택 연습문제는"  # the particle follows the noun
    if est.core_exercises:
        first = f"핵심 경로는 연습문제를 포함해 약 {core}분이 걸"
    else:
        first = f"핵심 경로는 약 {core}분이 걸"
        optional = "선택 심화 학습과 연습문제는" if est.deep_dives else "선택 연습문제는"
    ending = f"리고, {optional} 약 {deep}분이 더 걸립니다" if deep else "립니다"
    return f"**소요 시간:** {first}{ending}([추정 방법](00_start_here.ipynb#how-long-a-notebook-takes))."


def chapters() -> list[Path]:
    return sorted(NOTEBOOKS.glob("[0-9][0-9]*_*.ipynb"))


def write(path: Path) -> bool:
    """Rewrite the notebook's **Time:** line, and the Korean translation's line to match (run
    ``scripts/translations.py build`` after); True if anything changed."""
    import json

    sys.path.insert(0, str(ROOT / "scripts"))
    from translations import digest

    nb = nbformat.read(path, as_version=4)
    first, est = nb.cells[0], estimate(path)
    new = TIME_LINE.sub(statement(est), first.source)
    store_path = ROOT / "i18n" / "ko" / f"{path.stem}.json"
    store = json.loads(store_path.read_text(encoding="utf-8"))
    entry = store["cells"].get(first.id)
    korean = KOREAN_TIME_LINE.sub(korean_statement(est), entry["ko"]) if entry else None
    if new == first.source and (entry is None or korean == entry["ko"]):
        return False
    if entry is not None:
        if entry["en_sha"] == digest(first.source):  # the translation was current: keep it so
            entry["en_sha"] = digest(new)
        entry["ko"] = korean
        store_path.write_text(json.dumps(store, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    first.source = new
    nbformat.write(nb, path)
    return True


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", nargs="*", metavar="NOTEBOOK",
                        help="rewrite the **Time:** lines (both editions) of these notebooks (e.g. 05 10b), or of all")
    parser.add_argument("--sections", metavar="NOTEBOOK", nargs="+",
                        help="where the time goes: each section's core and optional minutes (e.g. 05 10b)")
    args = parser.parse_args()
    if args.sections:
        for prefix in args.sections:
            path = next(NOTEBOOKS.glob(f"{prefix}_*.ipynb"))
            est = estimate(path)
            print(f"{path.name}: core {est.core:.1f}, optional {est.deep:.1f} minutes\n  cell   core  opt.  section")
            print(sections(path))
        return 0
    print(f"{'notebook':<34}{'core':>6}{'deep dives':>12}   (minutes, rounded up to 5)")
    over = []
    for path in chapters():
        core, deep = estimate(path).rounded()
        print(f"{path.name:<34}{core:>6}{deep:>12}" + (f"   over the {CORE_LIMIT}-minute core path" if estimate(path).core > CORE_LIMIT else ""))
        over += [path.name] if estimate(path).core > CORE_LIMIT else []
        chosen = args.write is not None and (not args.write or any(path.name.startswith(f"{n}_") for n in args.write))
        if chosen and write(path):
            print("  rewrote its **Time:** lines (run scripts/translations.py build for the Korean twin)")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
