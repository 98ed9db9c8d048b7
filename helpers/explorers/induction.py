"""Notebook 10b's explorer: the trained decoder's heads on one repeated sequence, and what it predicts.

Loads the committed weights (``data/induction_2layer.safetensors``, no pickle) at once.
"""

from __future__ import annotations

import ipywidgets as widgets
import torch

from helpers.i18n import N_
from helpers.i18n import translate as tr
from helpers.induction import (
    LETTERS,
    TinyDecoder,
    load_model,
    prefix_matching_score,
    previous_token_score,
    repeated_sequence,
)
from helpers.masks import causal_mask
from helpers.plots import mask_overlay
from helpers.widgets import HeatmapFrame, LiveHeatmap


class CausalHeatmap(LiveHeatmap):
    """A LiveHeatmap of n × n causal attention whose hatched future is drawn once.

    The hatching goes into the static background (not redrawn per update, which halves the
    update time); frames leave the future cells NaN, which the heatmap draws transparent.
    """

    def __init__(self, compute, controls, n: int, **kwargs) -> None:
        self.n = n
        self.future = None
        super().__init__(compute, controls, **kwargs)

    def _draw_frame(self, **values):
        if self.future is None:  # before the first draw, so the background includes it
            blocked = ~causal_mask(self.n).numpy()
            extent = (-0.5, self.n - 0.5, self.n - 0.5, -0.5)
            self.future = self.ax.imshow(mask_overlay(blocked), extent=extent, interpolation="nearest", zorder=0)
        return super()._draw_frame(**values)


def run_sequence(model: TinyDecoder, period: int, seed: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """One repeated sequence (n,), the model's attention (layers, h, n, n) and predictions (n,)."""
    x = repeated_sequence(period, seed, model.config)
    with torch.no_grad():
        predicted = model(x[None]).argmax(dim=-1)[0]
    return x, model.attention()[:, 0], predicted


def induction_explorer(model: TinyDecoder | None = None) -> LiveHeatmap:
    """Sequence seed and period, layer, head -> that head's attention; rows say 'token → prediction'."""
    model = model if model is not None else load_model()
    config = model.config
    n = config.n
    future = ~causal_mask(n)
    runs: dict[tuple[int, int], tuple] = {}  # (period, seed) -> run_sequence's result: moving layer or head reruns nothing

    def compute(seed, period, layer, head):
        if (period, seed) not in runs:
            runs[period, seed] = run_sequence(model, period, seed)
        x, attention, predicted = runs[period, seed]
        weights = attention[layer, head]  # (n, n)
        shown = weights.masked_fill(future, float("nan")).numpy()  # the future: transparent over the hatching
        letters = [LETTERS[int(t)] for t in x]
        correct = (predicted[period:-1] == x[period + 1 :]).float().mean().item()
        return HeatmapFrame(
            shown,
            [f"{t}→{LETTERS[int(p)]}" for t, p in zip(letters, predicted, strict=True)],
            letters,
            readouts={
                N_("block repeated"): "".join(letters[:period]),
                N_("predictions on the repeats"): "".join(LETTERS[int(p)] for p in predicted[period:-1]),
                N_("accuracy on the repeats"): round(correct, 3),
                N_("previous-token score"): round(previous_token_score(weights).item(), 3),
                N_("prefix-matching score"): round(prefix_matching_score(weights[None, None], x[None]).item(), 3),
            },
            title=tr(f"layer {layer}, head {head}, period {period}"),
        )

    return CausalHeatmap(
        compute,
        {
            "seed": widgets.IntSlider(value=0, min=0, max=9, description=tr("sequence")),
            "period": widgets.IntSlider(value=10, min=config.min_period, max=config.max_period, description=tr("period P")),
            "layer": widgets.ToggleButtons(options=[(tr(f"layer {i}"), i) for i in range(config.num_layers)], value=config.num_layers - 1, description=tr("layer")),
            "head": widgets.ToggleButtons(options=[(tr(f"head {i}"), i) for i in range(config.num_heads)], value=0, description=tr("head")),
        },
        n=n,
        figsize=(6.4, 5.6),
    )
