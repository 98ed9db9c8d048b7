"""The explorers of notebooks 04 (sentence -> attention row + heatmap) and 05 (masks).

Every control is swept over its whole range (no exception, warning or NaN; the picture
changes), and the masking explorer over every combination of its four controls.
"""

import base64
import itertools
import warnings

import ipywidgets as widgets
import numpy as np
import pytest
import torch

from helpers.embeddings import load_sentences, load_toy_embeddings, tokenize
from helpers.explorers.masking import MAX_LENGTH, masked_attention, masking_explorer
from helpers.explorers.sentence import sentence_explorer
from helpers.qkv import hand_set_projection, self_attention
from tests.widget_sweep import sweep

STANDARD = (widgets.IntSlider, widgets.Checkbox, widgets.Dropdown, widgets.ToggleButtons)


@pytest.mark.parametrize("build", [sentence_explorer, masking_explorer], ids=["04-sentence", "05-masking"])
def test_sweep_every_control(build):
    sweep(build())


@pytest.mark.parametrize("build", [sentence_explorer, masking_explorer], ids=["04-sentence", "05-masking"])
def test_controls_are_standard_widgets_with_descriptions(build):
    """A browser test drives these by keyboard: standard ipywidgets controls, each labelled."""
    for name, control in build().controls.items():
        assert isinstance(control, STANDARD), f"{name} is a {type(control).__name__}"
        assert control.description, f"{name} has no description"


@pytest.mark.parametrize("build", [sentence_explorer, masking_explorer], ids=["04-sentence", "05-masking"])
def test_headless_display_carries_a_static_png(build):
    live = build()
    bundle = live._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert base64.b64decode(bundle["image/png"]) == live.image.value


# --- 04: sentence explorer -------------------------------------------------------------


def test_sentence_explorer_every_sentence_and_query():
    live = sentence_explorer()
    emb = load_toy_embeddings()
    proj = hand_set_projection(emb.axes)
    for text in load_sentences():
        live.set(sentence=text)
        words = tokenize(text)
        assert [v for _, v in live.controls["query"].options] == list(range(len(words)))
        _, w = self_attention(emb.embed(words), proj)
        for t in range(len(words)):
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                live.set(query=t)
            heights = np.array([bar.get_height() for bar in live.bars[: len(words)]])
            np.testing.assert_allclose(heights, w[t].numpy(), atol=1e-6)
            assert abs(heights.sum() - 1) < 1e-5
            assert not any(bar.get_visible() for bar in live.bars[len(words):])
            top = int(w[t].argmax())
            assert live.readouts["most attended key"] == f"{top} · {words[top]}"
            assert np.isfinite(live.readouts["entropy (bits)"]) and np.isfinite(live.readouts["its weight"])


def test_sentence_change_keeps_the_query_position_and_redraws_once():
    live = sentence_explorer()
    sentences = load_sentences()
    refreshes = []
    original = live.refresh
    live.refresh = lambda: (refreshes.append(1), original())[1]
    live.set(query=6)
    refreshes.clear()
    live.set(sentence=sentences[4])  # 10 words: position 6 still exists
    assert live.controls["query"].value == 6 and len(refreshes) == 1
    live.set(sentence=sentences[3])  # 7 words: position 6 still exists
    live.set(query=6)
    live.set(sentence=sentences[0])  # 7 words
    assert live.controls["query"].value == 6
    live.set(sentence=sentences[4])
    live.set(query=9)
    live.set(sentence=sentences[0])  # 7 words: clamps to the last token
    assert live.controls["query"].value == 6


def test_bank_has_two_different_outputs():
    """Notebook 04's claim, pinned: the same input vector of "bank" leaves attention two ways."""
    emb = load_toy_embeddings()
    proj = hand_set_projection(emb.axes)
    a, b = "i went to the bank to fish", "i went to the bank to deposit"
    out_a, _ = self_attention(emb.embed(a), proj)
    out_b, _ = self_attention(emb.embed(b), proj)
    water, money = emb.axes.index("water"), emb.axes.index("money")
    assert torch.equal(emb.embed(a)[4], emb.embed(b)[4])
    assert out_a[4, water] - out_b[4, water] > 0.25 and out_b[4, money] - out_a[4, money] > 0.25


# --- 05: masking explorer --------------------------------------------------------------


def test_masking_every_combination():
    """All lengths x pad counts x causal x side: finite, rows sum to 1 or are empty (all 0)."""
    for length, causal, side in itertools.product(range(2, MAX_LENGTH + 1), (False, True), ("left", "right")):
        for pads in range(length):
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                frame = masked_attention(length, pads, causal, side)
            w, allowed = frame.weights, np.broadcast_to(frame.mask, frame.weights.shape)
            assert w.shape == (length, length) and np.isfinite(w).all()
            assert (w[~allowed] == 0).all()
            empty = ~allowed.any(-1)
            np.testing.assert_allclose(w[~empty].sum(-1), 1, atol=1e-5)
            assert (w[empty] == 0).all()
            expected_empty = pads if (causal and side == "left") else 0
            assert frame.readouts["fully-masked query rows"] == expected_empty
            assert frame.readouts["pad tokens"] == pads
            assert frame.readouts["F.sdpa rows with NaN"] == 0
            assert frame.readouts["max |helpers − F.sdpa|"] < 1e-5
            assert frame.query_labels.count("<pad>") == pads
            pad_at = [i for i, t in enumerate(frame.key_labels) if t == "<pad>"]
            assert pad_at == (list(range(pads)) if side == "left" else list(range(length - pads, length)))


def test_pad_slider_follows_length():
    live = masking_explorer()
    live.set(length=12, pads=9)
    live.set(length=4)
    assert live.controls["pads"].max == 3 and live.controls["pads"].value == 3
    assert live.readouts["pad tokens"] == 3
    live.set(length=MAX_LENGTH)
    assert live.controls["pads"].max == MAX_LENGTH - 1
