"""An exercise must not be answerable by copying from a cell above it.

For each exercise listed here, the expressions that carry its answer (as the solutions notebook
writes them, and the formulas that spell them out) appear nowhere before the exercise: not in a
markdown cell, not in a code cell, not in a stored output, in either edition. Spaces are
ignored. ``code`` expressions must also appear in the exercise's solution cell, so that an
entry keeps describing the real solution; ``also`` lists other forms (a formula in the row
layout, a printed value) that would give the answer away as well.

To cover another exercise, add an entry: its id, the solution's key expressions, and any other
form of the answer.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"

KEY_EXPRESSIONS: dict[str, dict[str, list[str]]] = {
    # 06.2: the module's return line once carried the weights' shape as a comment, (B, h, n_q, n_k);
    # now the learner puts it together from the q, k comments and the self-attention shape printed.
    "06.2": {
        "code": [],
        "also": ["(B, h, n_q, n_k)", "(2, 8, 10, 7)"],
    },
    # 07.2: SwiGLU with W₁ and W₃ fused into one (2·d_ff, d_model) matrix; the notebook shows only
    # the column form W₂(SiLU(W₁x) ⊙ W₃x), never the row form or the split of the fused weight.
    "07.2": {
        "code": ["(x @ w13.T).chunk(2, dim=-1)", "F.silu(gate) * up"],
        "also": ["(SiLU(x W₁ᵀ) ⊙ x W₃ᵀ) W₂ᵀ", "F.silu(x @ w1.T)", "x @ w13.T"],
    },
    # 08.3: the encoding of one position was `sinusoidal(6, 6)[5]`, a call to a cell above; the dot
    # product of two encodings for d_model = 6 is printed nowhere and is worked from section 2's identity.
    "08.3": {
        "code": ["sum(math.cos(delta * w) for w in omega)"],
        "also": ["sinusoidal(6, 6)", "sinusoidal(9, 6)", "PE[5] · PE[8]"],
    },
    # 09.3: the bytes per token are one substitution into section 3's formula, so the exercise asks
    # how many 4,096-token caches fit beside Llama 2-13B's weights in 80 GiB.
    "09.3": {
        "code": ["4096 * bytes_per_token", "80 * 2**30 - 2 * 13_015_864_320", "free // per_sequence"],
        "also": ["13_015_864_320", "13,015,864,320"],
    },
    # 09.5: the answer is the two rescaling factors as well as denom (any procedure gives denom, the
    # online softmax being exact); no cell above prints the factors e^(3−5) and e^(5−6).
    "09.5": {
        "code": ["factors.append(math.exp(row_max - new_max))"],
        "also": ["0.1353", "0.3679", "e^(3−5)", "e^(5−6)"],
    },
    # 10b.5: the one-layer head's copying score (+0.999) was what the notebook prints for the two-layer
    # model's induction heads, so it was guessable; the exercise now asks for the logit gap of the
    # one-layer head's OV matrix, which no cell above computes or prints.
    "10b.5": {
        "code": ["ov_circuit(one_layer, 0, 0)", "ov[off_diagonal].mean()"],
        "also": ["17.05", "17.1 logits", "ov.diagonal().mean()"],
    },
}


def squeeze(text: str) -> str:
    return re.sub(r"\s+", "", text)


def cells(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def text_of(cell: dict) -> str:
    """A cell's source and the text of its stored outputs."""
    parts = ["".join(cell["source"])]
    for out in cell.get("outputs", []):
        parts.append("".join(out.get("text", "")))
        parts.append("".join(out.get("data", {}).get("text/plain", "")))
    return "\n".join(parts)


def chapter(exercise_id: str, folder: Path = NOTEBOOKS) -> Path:
    number = exercise_id.split(".")[0]
    (path,) = sorted(folder.glob(f"{number}_*.ipynb"))
    return path


def statement_index(path: Path, exercise_id: str) -> int:
    """Index of the markdown cell that states the exercise (it starts with **NN.k**)."""
    for i, cell in enumerate(cells(path)):
        if cell["cell_type"] == "markdown" and f"**{exercise_id}**" in "".join(cell["source"]):
            return i
    raise AssertionError(f"{path.name} states no exercise {exercise_id}")


def solution_source(exercise_id: str) -> str:
    """The code of the solutions notebook from the exercise's explanation to its check."""
    path = NOTEBOOKS / "solutions" / chapter(exercise_id).name.replace(".ipynb", "_solutions.ipynb")
    code, inside = [], False
    for cell in cells(path):
        source = "".join(cell["source"])
        if cell["cell_type"] == "markdown":
            inside = f"**{exercise_id}**" in source
        elif inside:
            code.append(source)
            if f'check("{exercise_id}"' in source:
                break
    assert code, f"no solution cell for {exercise_id} in {path.name}"
    return "\n".join(code)


EDITIONS = [NOTEBOOKS, NOTEBOOKS / "ko"]


@pytest.mark.parametrize("exercise_id", sorted(KEY_EXPRESSIONS))
def test_the_key_expressions_are_the_solutions(exercise_id):
    solution = squeeze(solution_source(exercise_id))
    for expression in KEY_EXPRESSIONS[exercise_id]["code"]:
        assert squeeze(expression) in solution, f"{exercise_id}'s solution no longer contains {expression!r}"


@pytest.mark.parametrize("folder", EDITIONS, ids=["en", "ko"])
@pytest.mark.parametrize("exercise_id", sorted(KEY_EXPRESSIONS))
def test_no_cell_above_the_exercise_holds_its_answer(exercise_id, folder):
    path = chapter(exercise_id, folder)
    above = cells(path)[: statement_index(path, exercise_id)]
    forms = KEY_EXPRESSIONS[exercise_id]["code"] + KEY_EXPRESSIONS[exercise_id]["also"]
    for i, cell in enumerate(above):
        text = squeeze(text_of(cell))
        for form in forms:
            assert squeeze(form) not in text, (
                f"{path.relative_to(NOTEBOOKS)} cell {i} (above exercise {exercise_id}) contains {form!r}: "
                "the exercise could be answered by copying it")


def test_the_check_finds_a_copyable_expression(tmp_path):
    """The search sees an expression in a cell above, whatever its spacing."""
    notebook = {"cells": [
        {"cell_type": "code", "source": ["y = (x@w13.T).chunk(2,  dim=-1)\n"], "outputs": []},
        {"cell_type": "markdown", "source": ["**99.1** Write it."]},
    ]}
    path = tmp_path / "99_demo.ipynb"
    path.write_text(json.dumps(notebook), encoding="utf-8")
    above = cells(path)[: statement_index(path, "99.1")]
    assert any(squeeze("(x @ w13.T).chunk(2, dim=-1)") in squeeze(text_of(c)) for c in above)
