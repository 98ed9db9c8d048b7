"""Notebook 10's explorer: the trained toy reverser's heads, layer by layer, word by word.

Loads the committed weights (``data/toy_reverse_model.safetensors``, no pickle) at once;
the "untrained" position shows the same architecture at its seeded initialisation.
"""

from __future__ import annotations

import ipywidgets as widgets
import torch

from helpers.i18n import N_
from helpers.i18n import translate as tr
from helpers.toy_model import PAD, VOCAB, ToyReverser, build_model, decode, encode, load_model
from helpers.widgets import HeatmapFrame, LiveHeatmap

WORDS = ["ABCDEFGH", "BADGE", "FACADE", "BEACH", "HIDE", "CAFE", "JIG", "AB"]


def mirror_weight(weights: torch.Tensor, length: int) -> float:
    """Mean weight that output position i puts on input position length - 1 - i (real tokens only)."""
    idx = torch.arange(length)
    return float(weights[..., idx, length - 1 - idx].mean())


def heads_for(model: ToyReverser, word: str) -> tuple[torch.Tensor, str]:
    """All attention weights for one word, (layers, heads, n, n), and the model's answer."""
    x = encode(word, model.config.max_len)[None]
    with torch.no_grad():
        predicted = model(x).argmax(dim=-1)[0, : len(word)]
    return model.attention()[:, 0], decode(predicted)


def trained_explorer(model: ToyReverser | None = None, untrained: ToyReverser | None = None) -> LiveHeatmap:
    """Layer, head, input word, trained or not -> that head's attention weights."""
    model = model if model is not None else load_model()
    untrained = untrained if untrained is not None else build_model(model.config).eval()
    config = model.config

    def compute(layer, head, word, weights):
        chosen = model if weights == "trained" else untrained
        attention, answer = heads_for(chosen, word)
        x = encode(word, config.max_len)
        real = x != PAD
        labels = [VOCAB[int(i)] for i in x]
        return HeatmapFrame(
            attention[layer, head],
            [tr(f"out {i}") for i in range(len(labels))],
            labels,
            mask=(real[:, None] & real[None, :]).numpy(),
            readouts={
                N_("input"): word,
                N_("model's output"): answer,
                N_("correct"): N_("yes") if answer == word[::-1] else N_("no"),
                N_("weight on the mirror position"): round(mirror_weight(attention[layer, head], len(word)), 3),
            },
        )

    return LiveHeatmap(
        compute,
        {
            "layer": widgets.ToggleButtons(options=[(tr(f"layer {i}"), i) for i in range(config.num_layers)], value=config.num_layers - 1, description=tr("layer")),
            "head": widgets.ToggleButtons(options=[(tr(f"head {i}"), i) for i in range(config.num_heads)], value=0, description=tr("head")),
            "word": widgets.Dropdown(options=WORDS, value=WORDS[1], description=tr("input")),
            "weights": widgets.ToggleButtons(options=[(tr(w), w) for w in (N_("trained"), N_("untrained"))], value="trained", description=tr("model")),
        },
        title=tr("rows: output positions, columns: input tokens"),
        figsize=(5.4, 4.6),
    )
