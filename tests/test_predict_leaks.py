"""The text never answers its own Predict.

A **Predict:** asks the learner to commit to an answer before running the cell that shows it
(its answer cells: scripts/mark_answers.py's plan, which both editions share). Three kinds of
leak were found by expert reads, and each is searched for in every notebook of both editions:

1. **A number of the answer in the prose above.** Between the previous heading and the prompt
   (the Predict's own cell included, up to the marker), a number that an answer cell prints in
   its stored output. Numbers that say nothing are left out: 0, 1 and 2; numbers the question
   itself uses; numbers written in the answer cells' code (inputs such as a size or a seed,
   printed back); and numbers a cell above the Predict already printed (known by then).
2. **A heading that states the result.** The section heading right above the Predict holds a
   number of the answer, or is a statement about what the Predict asks: a verb of being or
   doing, or an emphasised claim, with a content word of the question.
3. **A code comment or an assert message that states the answer.** In a code cell between the
   previous heading and the Predict, or in an answer cell itself (read before it is run), a
   comment or an assert message holding a number of the answer.

``ALLOWED`` lists the leaks that are known and left for their notebook's owner to fix, each with
a reason; an entry that no longer matches a leak fails the test, so the list only shrinks.
"""

from __future__ import annotations

import ast
import io
import re
import sys
import tokenize
import warnings
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import mark_answers  # noqa: E402

NOTEBOOKS = mark_answers.all_notebooks()

# (notebook path relative to notebooks/, Predict cell id, kind, the text found) -> why it is allowed.
# Leaks kept on purpose, each with its reason (none today).
ALLOWED: dict[tuple[str, str, str, str], str] = {}

HEADING = re.compile(r"^(#{1,6})\s+(.*)$", re.MULTILINE)
NUMBER = re.compile(r"(?<![\w.])[-−]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?")
TRIVIAL = {0.0, 1.0, 2.0}
# A heading that states something: a verb of being or doing, a negation or an emphasis.
STATEMENT_EN = re.compile(r"\*\*|\b(is|are|was|were|does|did|has|equals|never|cannot|can't|only|always|"
                          r"beats|wins|fails|breaks|changes|moves|stays|matters|grows|falls|survives)\b",
                          re.IGNORECASE)
# "measure what breaks", "which heads matter": a question in a heading states nothing.
QUESTION_WORDS = re.compile(r"\b(what|which|how|whether|where|when|why)\s+\w+(\s+\w+)?", re.IGNORECASE)
STATEMENT_KO = re.compile(r"\*\*|(이다|한다|된다|않는다|없다|있다|같다|다르다|입니다|합니다|않습니다|없습니다)\s*[.!]?\s*$")
STOP = {"the", "a", "an", "and", "or", "of", "to", "in", "on", "at", "for", "by", "with", "what", "which",
        "how", "will", "does", "is", "are", "it", "its", "that", "this", "before", "after", "your", "you",
        "from", "be", "as", "do", "each", "one", "two", "than", "more", "less", "much", "many", "write",
        "guess", "down", "cell", "run", "predict", "section", "notebook", "same", "every", "first"}


def numbers(text: str) -> set[str]:
    """The numbers written in ``text``, normalised ("18,123" -> "18123", "−0.5" -> "-0.5")."""
    found = set()
    for match in NUMBER.findall(text):
        value = match.replace(",", "").replace("−", "-")
        try:
            if abs(float(value)) in TRIVIAL:
                continue
        except ValueError:
            continue
        found.add(f"{float(value):.12g}")  # "20.0" and "20", "18,123" and "18123" are one number
    return found


def output_text(cell) -> str:
    parts = []
    for out in cell.get("outputs", []):
        text = out.get("text", "")
        parts.append(text if isinstance(text, str) else "".join(text))
        plain = out.get("data", {}).get("text/plain", "")
        parts.append(plain if isinstance(plain, str) else "".join(plain))
    return "\n".join(parts)


def comments_and_messages(source: str) -> list[str]:
    """The comments of a code cell and the messages of its asserts (what a reader takes as prose)."""
    found = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type == tokenize.COMMENT:
                found.append(token.string.lstrip("#").strip())
    except (tokenize.TokenError, IndentationError, SyntaxError):
        found += [line.split("#", 1)[1] for line in source.splitlines() if "#" in line]
    try:
        tree = ast.parse("\n".join(line for line in source.splitlines() if not line.lstrip().startswith(("%", "!"))))
    except SyntaxError:
        return found
    for node in ast.walk(tree):
        if isinstance(node, ast.Assert) and node.msg is not None:
            found.append(" ".join(str(part.value) for part in ast.walk(node.msg)
                                  if isinstance(part, ast.Constant) and isinstance(part.value, str)))
    return found


def code_without_comments(source: str) -> str:
    """The code a reader sees as code: without its comments and its assert messages."""
    try:
        tree = ast.parse("\n".join(line for line in source.splitlines() if not line.lstrip().startswith(("%", "!"))))
        for node in ast.walk(tree):
            if isinstance(node, ast.Assert) and node.msg is not None:
                source = source.replace(ast.get_source_segment(source, node.msg) or "\0", " ")
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return source
    return " ".join(t.string for t in tokens if t.type != tokenize.COMMENT)


def words(text: str) -> set[str]:
    """Content words, cut to 5 letters (so that "patches" meets "patch"); Hangul runs kept whole."""
    latin = {w.lower()[:5] for w in re.findall(r"[A-Za-z]{3,}", text) if w.lower() not in STOP}
    hangul = {w[:2] for w in re.findall(r"[\uac00-\ud7a3]{2,}", text)}
    return latin | hangul


def leaks(nb: nbformat.NotebookNode, path: Path) -> list[tuple[str, str, str]]:
    """(Predict cell id, kind, what was found) for every leak in one notebook."""
    marker = mark_answers.MARKERS[mark_answers.edition(path)]
    statement = STATEMENT_KO if mark_answers.edition(path) == "ko" else STATEMENT_EN
    cells, found = nb.cells, []
    index = {cell.id: i for i, cell in enumerate(cells)}
    for predict_id, answer_ids in mark_answers.plan(nb, path).answers.items():
        if not answer_ids:
            continue
        at = index[predict_id]
        before_marker, _, after_marker = cells[at].source.partition(marker)
        question = after_marker.split("\n\n")[0]
        answer_numbers = set().union(*(numbers(output_text(cells[index[a]])) for a in answer_ids))
        answer_numbers -= numbers(question)
        answer_numbers -= set().union(*(numbers(code_without_comments(cells[index[a]].source)) for a in answer_ids))
        answer_numbers -= set().union(set(), *(numbers(output_text(c)) for c in cells[:at]))

        # The section above the prompt: back to the previous heading, in this cell or an earlier one.
        prose, code, heading = [], [], None
        for i in range(at, -1, -1):
            cell = cells[i]
            text = before_marker if i == at else cell.source
            if cell.cell_type == "markdown":
                headings = list(HEADING.finditer(text))
                if headings:
                    heading = headings[-1].group(2)
                    prose.append(text[headings[-1].end():])
                    break
                prose.append(text)
            elif cell.cell_type == "code":
                code.append(cell.source)
        for number in sorted(answer_numbers & numbers("\n".join(prose))):
            found.append((predict_id, "number in the prose above", number))
        if heading is not None:
            heading = re.sub(r"^\s*\d+(\.\d+)*\.?\s", "", heading)  # "5. After training": a section's number says nothing
            for number in sorted(answer_numbers & numbers(heading)):
                found.append((predict_id, "number in the heading", number))
            claim = QUESTION_WORDS.sub(" ", heading)
            if statement.search(claim) and words(claim) & words(question):
                found.append((predict_id, "heading states a result", heading.strip()))
        readable = code + [cells[index[a]].source for a in answer_ids]
        said = "\n".join(text for source in readable for text in comments_and_messages(source))
        for number in sorted(answer_numbers & numbers(said)):
            found.append((predict_id, "number in a code comment or assert message", number))
    return found


def relative(path: Path) -> str:
    return path.relative_to(ROOT / "notebooks").as_posix()


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[relative(p) for p in NOTEBOOKS])
def test_no_predict_is_answered_above_its_prompt(path):
    nb = nbformat.read(path, as_version=4)
    unexpected = [leak for leak in leaks(nb, path) if (relative(path), *leak) not in ALLOWED]
    assert not unexpected, "\n".join(f"{relative(path)}: Predict {p}: {kind}: {what!r}" for p, kind, what in unexpected)


def test_allowed_leaks_that_were_fixed_are_reported():
    """An allowed leak that was fixed should leave the list: a warning names it (its fix may land
    from another branch, so this does not fail)."""
    current = {(relative(p), *leak) for p in NOTEBOOKS for leak in leaks(nbformat.read(p, as_version=4), p)}
    for entry in sorted(set(ALLOWED) - current):
        warnings.warn(f"fixed, remove from ALLOWED in tests/test_predict_leaks.py: {entry}", stacklevel=1)


# ---------------------------------------------------------------- the search can fail

def synthetic(path: Path, *cells) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    for i, (kind, source, output) in enumerate(cells):
        if kind == "md":
            cell = nbformat.v4.new_markdown_cell(source)
        else:
            cell = nbformat.v4.new_code_cell(source)
            if output:
                cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=output)]
        cell.id = f"c{i}"
        nb.cells.append(cell)
    return nb


PATH = ROOT / "notebooks" / "99_synthetic.ipynb"


def three_cells(section: str, question: str, answer_code: str, output: str, *, code_above: str | None = None):
    """A section (heading and prose), maybe a code cell, a Predict, and its answer cell."""
    above = [("code", code_above, None)] if code_above else []
    return synthetic(PATH, ("md", section, None), *above, ("md", f"**Predict:** {question}", None),
                     ("code", answer_code, output))


CAUGHT = {
    "a number of the answer in the prose above": (
        three_cells("## 3. Zeroing a layer\n\nZeroing it leaves 43.2% of the tokens right.",
                    "how many tokens stay right without layer 0?", "print(f'{accuracy:.1%}')", "43.2%\n"),
        ("c1", "number in the prose above", "43.2")),
    "a heading that states the result": (
        three_cells("## 4. The patch embedding is a strided convolution",
                    "is a convolution with stride p the same as cutting patches?",
                    "print(torch.equal(by_conv, by_matrix))", "True\n"),
        ("c1", "heading states a result", "The patch embedding is a strided convolution")),
    "a heading with a number of the answer": (
        three_cells("## 2. Doubling n costs 4 times the memory", "doubling n multiplies the memory by how much?",
                    "print(f'{ratio:.0f}x')", "4x\n"),
        ("c1", "number in the heading", "4")),
    "a comment in a code cell above": (
        three_cells("## 8. Swapping layer 0's output", "how much survives the swap?", "print(f'{swap:.1%}')",
                    "99.9%\n", code_above="swap = accuracy_with(other)  # keeps 99.9% of the tokens right"),
        ("c2", "number in a code comment or assert message", "99.9")),
    "an assert message in the answer cell": (
        three_cells("## 8. Swapping layer 0's output", "how much survives a swap from any length?",
                    "print(f'{swap:.1%}')\nassert swap < 0.5, 'falls to 40.3%'", "40.3%\n"),
        ("c1", "number in a code comment or assert message", "40.3")),
}


@pytest.mark.parametrize("kind", list(CAUGHT))
def test_each_kind_of_leak_is_caught(kind):
    nb, leak = CAUGHT[kind]
    assert leak in leaks(nb, PATH)


NOT_LEAKS = {
    "numbers of the question, trivial numbers and inputs": three_cells(
        "## 3. Training\n\nWe train for 200 steps, 1 or 2 at a time, with seed 7.", "how long will 200 steps take?",
        "seed = 7\nprint(f'200 steps in {t:.1f} s, seed {seed}, 1 run, 2 threads')",
        "200 steps in 6.1 s, seed 7, 1 run, 2 threads\n"),
    "a heading that names the subject": three_cells(
        "## 4. The patch embedding and a convolution", "is a convolution with stride p the same as cutting patches?",
        "print(torch.equal(by_conv, by_matrix))", "True\n"),
    "a heading that asks": three_cells(
        "## 7. Ablation: remove a head, measure what breaks", "remove the head: what breaks?",
        "print(f'{accuracy:.3f}')", "0.346\n"),
}


@pytest.mark.parametrize("case", list(NOT_LEAKS))
def test_what_is_not_a_leak_passes(case):
    assert leaks(NOT_LEAKS[case], PATH) == []


def test_the_section_ends_at_the_previous_heading():
    """A number in an earlier section is not "above the Predict"."""
    nb = synthetic(PATH, ("md", "## 1. Earlier\n\nIt printed 43.2% there.", None),
                   ("md", "## 2. Now\n\n**Predict:** what accuracy now?", None),
                   ("code", "print(f'{a:.1%}')", "43.2%\n"))
    assert leaks(nb, PATH) == []
