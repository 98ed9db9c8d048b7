"""Every explorer of the Korean edition shows Korean: control labels, the options of dropdowns and
toggles, and the readouts hold no English word beyond code identifiers, maths, units and the toy
vocabulary (the words the models read)."""

import html
import re
from pathlib import Path

import pytest

from helpers import i18n
from helpers.explorers.registry import EXPLORER_CELLS, build_explorer

ROOT = Path(__file__).resolve().parent.parent
WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*[A-Za-z]|[A-Za-z]")
# Words a Korean learner may read in English: identifiers and names the prose uses as they are,
# units, and the toy vocabulary (tokens are inputs, not labels).
ALLOWED = {
    # identifiers, names, maths and units
    "F", "sdpa", "d_k", "d", "k", "q", "v", "x", "y", "n", "h", "s", "i", "j", "T", "QK", "NaN", "max", "min",
    "fp", "GPT", "nats", "bits", "RoPE", "pre-norm", "post-norm", "kv", "KV", "px", "MiB", "GiB", "KiB", "GB", "MB", "dtype",
    "softmax", "LayerNorm", "FFN", "MLP", "PAD", "pad", "BOS", "EOS", "out", "e", "cos", "log", "model",
    "L", "P", "RMS", "FLOPs", "GFLOPs", "helpers",
    # 07's term, kept in English by the Korean prose of 07 until the glossary settles it (issue 27)
    "branch", "gain",
    "the", "robot", "picks", "up", "cup", "bowl", "she", "paid", "loan", "cat", "sat", "on", "mat",
}


def toy_words() -> set[str]:
    """The words the explorers' models read (sentences, scene words), shown as tokens."""
    words = set()
    from helpers import vla
    from helpers.explorers import sentence
    from helpers.explorers.trained import WORDS
    words |= {w for w in WORDS}
    for name in ("COLOURS", "SHAPES", "VERBS"):
        words |= set(getattr(vla, name, ()))
    for text in getattr(sentence, "SENTENCES", {}) or {}:
        words |= set(WORD.findall(text))
    from helpers.explorers import heads
    for text in getattr(heads, "SENTENCES", {}) or {}:
        words |= set(WORD.findall(text))
    words |= set(vla.VERBS)  # the VLA instructions are inputs too
    from helpers.embeddings import load_toy_embeddings
    words |= set(load_toy_embeddings().vocab)
    return {w for t in words for w in WORD.findall(str(t))}


def visible_strings(explorer) -> list[str]:
    """What a learner reads around the picture: control labels, option labels, readouts."""
    shown = []
    for control in explorer.controls.values():
        shown.append(control.description)
        shown += [str(label) for label in getattr(control, "_options_labels", ())]
    shown.append(re.sub(r"<[^>]+>", " ", html.unescape(explorer.readout_box.value)))
    return shown


def english_words(text: str, allowed: set[str]) -> list[str]:
    """Latin words of ``text`` outside ``allowed``; a run of capitals (a toy sequence such as
    BADGE, or an acronym) is a token, not a word."""
    return [w for w in WORD.findall(text) if w not in allowed and w.lower() not in allowed
            and not (len(w) > 1 and w.isupper())]


@pytest.mark.parametrize("key", sorted(EXPLORER_CELLS), ids=lambda k: f"{k[0]}-{k[1]}")
def test_korean_explorers_show_no_english_words(key, monkeypatch):
    monkeypatch.setenv(i18n.ENV, "ko")
    explorer = build_explorer(ROOT / "notebooks" / "ko" / f"{key[0]}.ipynb", key[1])
    allowed = ALLOWED | toy_words()
    found = {text: words for text in visible_strings(explorer) if (words := english_words(text, allowed))}
    assert not found, f"{key[0]}: English a Korean learner reads in the explorer: {found}"


def test_the_english_check_sees_an_untranslated_option():
    assert english_words("swap 2nd and last", ALLOWED) == ["swap", "nd", "and", "last"]
    assert english_words("원래 순서, d_k = 8, F.sdpa", ALLOWED) == []
