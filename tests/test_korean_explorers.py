"""Every explorer of the Korean edition shows Korean: control labels, the options of dropdowns and
toggles, the readouts, and the text drawn in the picture (titles, axis and tick labels, legends,
notes, in every state a dropdown or toggle gives) hold no English word beyond code identifiers,
maths, units and the toy vocabulary (the words the models read)."""

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
    "softmax", "LayerNorm", "FFN", "MLP", "PAD", "pad", "BOS", "EOS", "e", "cos", "log",
    "L", "P", "RMS", "FLOPs", "GFLOPs", "helpers", "Llama",
    "prefix-LM",  # the glossary keeps it as the Korean name of notebook 11's mask
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
    from helpers.explorers.position import demo_sentence
    words |= set(demo_sentence()[0])  # 08's sentence
    return {w for t in words for w in WORD.findall(str(t))}


def visible_strings(explorer) -> list[str]:
    """What a learner reads around the picture: control labels, option labels, readouts."""
    shown = []
    for control in explorer.controls.values():
        shown.append(control.description)
        shown += [str(label) for label in getattr(control, "_options_labels", ())]
    shown.append(re.sub(r"<[^>]+>", " ", html.unescape(explorer.readout_box.value)))
    return shown


def figure_strings(explorer) -> list[str]:
    """The text drawn in the explorer's picture (titles, axis and tick labels, legends, notes) in
    its first state and with each option of each dropdown or toggle chosen in turn."""
    from matplotlib.text import Text

    def drawn() -> list[str]:
        explorer.render()
        texts = [re.sub(r"\$[^$]*\$", " ", t.get_text()) for t in explorer.fig.findobj(Text) if t.get_visible()]
        return [t for t in texts if t.strip()]  # maths between $...$ (log-axis ticks) is maths

    shown = drawn()
    for name, control in explorer.controls.items():
        values = list(getattr(control, "_options_values", ()))
        if not values or len(values) > 12:
            continue
        first = control.value
        for value in values:
            if value != first:
                explorer.set(**{name: value})
                shown += drawn()
        explorer.set(**{name: first})
    return list(dict.fromkeys(shown))


# Code inside a label: identifiers with an underscore or a dot (d_model, F.sdpa, .transpose), keyword
# arguments (dim=0) and quoted values ('left'); output_i is the word 'output' with a subscript.
CODE = re.compile(r"\.\w+|[A-Za-z_][\w.]*(?:_|\.|=)[\w.=-]*|'[^'\s]*'")
SUBSCRIPT = re.compile(r"_[A-Za-z0-9]\b")


def english_words(text: str, allowed: set[str]) -> list[str]:
    """Latin words of ``text`` outside ``allowed``; a run of capitals (a toy sequence such as
    BADGE, or an acronym) is a token and a lone letter a symbol, not a word."""
    text = CODE.sub(" ", SUBSCRIPT.sub(" ", text))
    return [w for w in WORD.findall(text) if w not in allowed and w.lower() not in allowed
            and not w.isupper() and len(w) > 1]


def english_in_explorer(key, strings) -> dict[str, list[str]]:
    """The texts ``strings(explorer)`` gives for the Korean edition's explorer ``key`` that hold English words."""
    explorer = build_explorer(ROOT / "notebooks" / "ko" / f"{key[0]}.ipynb", key[1])
    allowed = ALLOWED | toy_words()
    return {text: words for text in strings(explorer) if (words := english_words(text, allowed))}


@pytest.mark.parametrize("key", sorted(EXPLORER_CELLS), ids=lambda k: f"{k[0]}-{k[1]}")
def test_korean_explorers_show_no_english_words(key, monkeypatch):
    monkeypatch.setenv(i18n.ENV, "ko")
    found = english_in_explorer(key, visible_strings)
    assert not found, f"{key[0]}: English a Korean learner reads in the explorer: {found}"


@pytest.mark.parametrize("key", sorted(EXPLORER_CELLS), ids=lambda k: f"{k[0]}-{k[1]}")
def test_korean_explorers_draw_no_english_words(key, monkeypatch):
    """Titles, axis labels, ticks and legends of the picture, in every state a dropdown or toggle gives."""
    monkeypatch.setenv(i18n.ENV, "ko")
    found = english_in_explorer(key, figure_strings)
    assert not found, f"{key[0]}: English a Korean learner reads in the explorer's picture: {found}"


def test_the_english_check_sees_an_untranslated_option():
    assert english_words("swap 2nd and last", ALLOWED) == ["swap", "nd", "and", "last"]
    assert english_words("원래 순서, d_k = 8, F.sdpa", ALLOWED) == []
