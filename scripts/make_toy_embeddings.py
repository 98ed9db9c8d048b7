"""Build data/toy_embeddings.json and data/sentences.json: a tiny, hand-designed word table.

    .venv/bin/python scripts/make_toy_embeddings.py          # rewrite both files
    .venv/bin/python scripts/make_toy_embeddings.py --check  # exit 1 if the files are stale

Real embeddings are learned and have hundreds of unnamed axes. These have 8 axes, each
with a name and a meaning, so a reader can see *why* one word matches another. Every
vector is written out below by hand: no randomness, no download, the same file every run.

Axes (d_model = 8):
    money    finance: bank accounts, loans, paying
    water    rivers, boats, fishing
    living   people and animals, and things that act like agents (a robot, "it")
    object   physical things you can pick up, sit on or sail
    action   verbs: something happens
    place    somewhere you can be (a bank, a river, a mat)
    colour   describes how a thing looks
    function grammar glue: the, to, of, on, ...

"bank" is the ambiguous word of notebook 04: half money, half water, and a place.
Only its sentence says which sense is meant.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

DATA = Path(__file__).resolve().parent.parent / "data"

AXES = ["money", "water", "living", "object", "action", "place", "colour", "function"]
AXIS_MEANING = {
    "money": "finance: bank accounts, loans, paying",
    "water": "rivers, boats, fishing",
    "living": "people, animals and agents (a robot, 'it')",
    "object": "physical things you can pick up, sit on or sail",
    "action": "verbs: something happens",
    "place": "somewhere you can be",
    "colour": "describes how a thing looks",
    "function": "grammar glue: the, to, of, on",
}

# word: {axis: value}; axes not named are 0. Values are on a 0..1 scale by design.
WORDS: dict[str, dict[str, float]] = {
    # the ambiguous word
    "bank": {"money": 0.5, "water": 0.5, "place": 1.0},
    # money words
    "deposit": {"money": 1.0, "action": 0.6},
    "loan": {"money": 1.0, "object": 0.2},
    "money": {"money": 1.0, "object": 0.4},
    "account": {"money": 0.9, "object": 0.2},
    "paid": {"money": 0.8, "action": 0.8},
    # water words
    "fish": {"water": 0.9, "living": 0.3, "action": 0.4},
    "river": {"water": 1.0, "place": 0.7},
    "boat": {"water": 0.8, "object": 0.6},
    "swam": {"water": 0.7, "action": 0.8},
    # people, animals, agents
    "i": {"living": 0.8, "function": 0.2},
    "she": {"living": 0.8, "function": 0.2},
    "we": {"living": 0.8, "function": 0.2},
    "cat": {"living": 1.0, "object": 0.2},
    "it": {"living": 0.5, "object": 0.3, "function": 0.4},
    "robot": {"living": 0.5, "object": 0.6},
    "tired": {"living": 0.6, "colour": 0.3},
    # things
    "mat": {"object": 1.0, "place": 0.3},
    "cup": {"object": 1.0},
    "bowl": {"object": 1.0, "place": 0.1},
    # actions
    "went": {"action": 0.8},
    "sat": {"action": 0.8, "place": 0.2},
    "picks": {"action": 1.0},
    "puts": {"action": 1.0},
    "was": {"action": 0.3, "function": 0.5},
    # how things look
    "red": {"colour": 1.0},
    "blue": {"colour": 1.0},
    # grammar glue
    "the": {"function": 1.0},
    "a": {"function": 1.0},
    "to": {"function": 1.0},
    "at": {"function": 1.0, "place": 0.2},
    "on": {"function": 1.0, "place": 0.2},
    "in": {"function": 1.0, "place": 0.2},
    "of": {"function": 1.0},
    "up": {"function": 0.6, "action": 0.3},
    "because": {"function": 1.0},
    "and": {"function": 1.0},
}

PAD = "<pad>"  # id 0, the zero vector: padding (notebook 05)

SENTENCES = [
    "i went to the bank to fish",
    "i went to the bank to deposit",
    "we sat on the bank of the river",
    "she paid the loan at the bank",
    "the cat sat on the mat because it was tired",
    "the robot picks up the red cup and puts it in the bowl",
]


def build() -> tuple[dict, dict]:
    unknown = {axis for vec in WORDS.values() for axis in vec} - set(AXES)
    if unknown:
        raise ValueError(f"unknown axes {sorted(unknown)}; axes are {AXES}")
    vocab = [PAD, *WORDS]  # the pad token first, so pad id = 0
    vectors = [[0.0] * len(AXES)] + [[float(WORDS[w].get(a, 0.0)) for a in AXES] for w in WORDS]
    for sentence in SENTENCES:
        missing = [w for w in sentence.split() if w not in WORDS]
        if missing:
            raise ValueError(f"{sentence!r} uses words with no vector: {missing}")
    table = {
        "description": "Hand-designed toy word embeddings for Attention Lab (scripts/make_toy_embeddings.py).",
        "axes": AXES,
        "axis_meaning": AXIS_MEANING,
        "pad_token": PAD,
        "pad_id": 0,
        "vectors": dict(zip(vocab, vectors, strict=True)),
    }
    sentences = {
        "description": "Sentences for notebooks 04-05; every word is in data/toy_embeddings.json.",
        "sentences": SENTENCES,
    }
    return table, sentences


def dump(obj: dict) -> str:
    """JSON with every list of numbers on one line: readable and diff-friendly."""
    text = json.dumps(obj, indent=1, ensure_ascii=False)
    # join the lines of each list of plain numbers onto one line
    return re.sub(r"\[[-0-9.,\s]*\]", lambda m: re.sub(r"\s*\n\s*", " ", m.group(0)).replace("[ ", "[").replace(" ]", "]"), text) + "\n"


def main(argv: list[str]) -> int:
    table, sentences = build()
    files = {DATA / "toy_embeddings.json": dump(table), DATA / "sentences.json": dump(sentences)}
    if "--check" in argv:
        stale = [p.name for p, text in files.items() if not p.exists() or p.read_text(encoding="utf-8") != text]
        if stale:
            print(f"stale: {stale}; run scripts/make_toy_embeddings.py")
        return 1 if stale else 0
    DATA.mkdir(exist_ok=True)
    for path, text in files.items():
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path.relative_to(DATA.parent)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
