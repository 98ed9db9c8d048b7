"""Notebook 09's explorer: context length -> memory of the scores and the KV cache, and FLOPs.

Left panel: one layer's score matrices (all heads, if stored: plain attention holds them
one layer at a time, during prefill) and the whole KV cache (every layer, kept while
decoding), against context length, for Llama 2-7B shapes; the chosen length is marked.
Right panel: where one new token's FLOPs go at that length, the attention sublayer's two
parts (n × n scores and weights × V; Q, K, V, O projections) side by side. All numbers
come from ``helpers.scale``.
"""

from __future__ import annotations

import dataclasses

import ipywidgets as widgets
import numpy as np

from helpers.i18n import N_
from helpers.i18n import translate as tr
from helpers.scale import (
    LLAMA2_7B,
    DecoderShape,
    flops_per_token,
    kv_cache_bytes,
    score_matrix_bytes,
)
from helpers.widgets import LiveFigure, new_figure

CONTEXTS = [2**p for p in range(8, 18)]  # 256 .. 131072 tokens
GIB = 2**30
GPU_GIB = 80  # an "80 GB" A100 or H100: nvidia-smi reports 81920 MiB (80.0 GiB) and 81559 MiB (79.6 GiB); a little less usable
GPU_LABEL = N_("\"80 GB\" A100 / H100: 80.0 / 79.6 GiB of HBM\n(a little less usable)")  # two short lines: clear of the curves
PARTS = {  # right panel: FLOP groups and their colours; the first two make the attention sublayer
    N_("n × n attention"): ("attention scores q·k", "attention weights × V"),
    N_("Q, K, V, O projections"): ("Q, K, V, O projections",),
    "MLP": ("MLP",),
    N_("LM head"): ("LM head",),
}
COLOURS = ["tab:red", "lightsalmon", "tab:blue", "tab:grey"]


def flop_shares(context: int, shape: DecoderShape = LLAMA2_7B) -> dict[str, float]:
    """Percent of one token's FLOPs in each group of :data:`PARTS`."""
    parts = flops_per_token(context, shape)
    total = sum(parts.values())
    return {group: 100 * sum(parts[p] for p in members) / total for group, members in PARTS.items()}


def scale_explorer(shape: DecoderShape = LLAMA2_7B) -> LiveFigure:
    """Controls: context length, number of KV heads (grouped-query attention), bytes per number."""
    fig = new_figure((10.0, 3.9))
    mem_ax, flop_ax = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1.4, 1]})
    lengths = np.array(CONTEXTS, dtype=float)
    (score_line,) = mem_ax.loglog(lengths, lengths, "o-", ms=3, label=tr(f"score matrix, 1 layer at a time, {shape.n_heads} heads"))
    (kv_line,) = mem_ax.loglog(lengths, lengths, "s-", ms=3, label=tr(f"KV cache, all {shape.n_layers} layers"))
    (score_dot,) = mem_ax.plot([1], [1], "o", ms=10, color=score_line.get_color())
    (kv_dot,) = mem_ax.plot([1], [1], "s", ms=10, color=kv_line.get_color())
    cursor = mem_ax.axvline(CONTEXTS[0], color="black", lw=1, ls=":")
    mem_ax.axhline(GPU_GIB, color="grey", lw=1)
    mem_ax.text(lengths[0] * 1.25, GPU_GIB / 1.6, tr(GPU_LABEL), color="grey", fontsize=8, va="top")  # under the line: clear of the legend and the start cursor
    mem_ax.set(xlabel=tr("context length n (tokens)"), ylabel=tr("GiB"), xlim=(lengths[0] / 1.5, lengths[-1] * 1.5), ylim=(1e-3, 1e4), title=tr(f"{shape.name}: memory"))
    mem_ax.legend(loc="upper left", fontsize=8)

    bars = []
    for group, colour in zip(PARTS, COLOURS, strict=True):
        bars.append(flop_ax.barh([0], [0.0], height=0.5, left=[0.0], color=colour, label=tr(group))[0])
    flop_ax.set(xlim=(0, 100), ylim=(-0.8, 1.2), yticks=[], xlabel=tr("% of one token's FLOPs"), title=tr("where the FLOPs go"))
    flop_ax.legend(loc="upper center", ncols=2, fontsize=8, frameon=False)
    share_text = flop_ax.text(50, -0.55, "", ha="center", fontsize=9)

    live: list[LiveFigure] = []  # the explorer, once built
    drawn_for: list = [None]  # (kv_heads, bytes) the cached background shows

    def update(context, kv_heads, bytes_per_value):
        if live and drawn_for[0] != (kv_heads, bytes_per_value):  # the curves and legend change: another
            live[0].invalidate(layout=False, key=(kv_heads, bytes_per_value))  # background, drawn once per pair
        drawn_for[0] = (kv_heads, bytes_per_value)
        model = dataclasses.replace(shape, n_kv_heads=kv_heads)
        score_gib = np.array([score_matrix_bytes(int(n), shape.n_heads, bytes_per_value) for n in lengths]) / GIB
        kv_gib = np.array([kv_cache_bytes(int(n), model, bytes_per_value) for n in lengths]) / GIB
        score_line.set_ydata(score_gib)
        kv_line.set_ydata(kv_gib)
        kv_line.set_label(tr(f"KV cache, all {shape.n_layers} layers, {kv_heads} KV heads"))
        mem_ax.legend(loc="upper left", fontsize=8)
        here = CONTEXTS.index(context)
        score_dot.set_data([context], [score_gib[here]])
        kv_dot.set_data([context], [kv_gib[here]])
        cursor.set_xdata([context, context])
        shares = flop_shares(context, model)
        left = 0.0
        for bar, value in zip(bars, shares.values(), strict=True):
            bar.set_x(left)
            bar.set_width(value)
            left += value
        sublayer = shares["n × n attention"] + shares["Q, K, V, O projections"]
        share_text.set_text(tr(f"n = {context:,}: n × n part {shares['n × n attention']:.1f}%, whole attention sublayer {sublayer:.1f}%"))
        return {
            N_("score matrix, 1 layer (GiB)"): float(score_gib[here]),
            N_("KV cache, all layers (GiB)"): float(kv_gib[here]),
            N_("n × n part of FLOPs (%)"): round(shares["n × n attention"], 2),
            N_("attention sublayer of FLOPs (%)"): round(sublayer, 2),
            N_("GFLOPs per token"): round(sum(flops_per_token(context, model).values()) / 1e9, 2),
        }

    controls = {
        "context": widgets.SelectionSlider(options=CONTEXTS, value=256, description=tr("context n")),
        "kv_heads": widgets.Dropdown(
            options=[(tr(f"{shape.n_heads} (one per head)"), shape.n_heads), (tr("8 (grouped-query)"), 8), (tr("1 (multi-query)"), 1)],
            value=shape.n_heads,
            description=tr("KV heads"),
        ),
        "bytes_per_value": widgets.ToggleButtons(options=[("fp16", 2), ("fp32", 4)], value=2, description=tr("dtype")),
    }
    # Only the markers, the cursor, the bars and the text move with the context length; the
    # log axes (slow to draw) are cached and redrawn only when the curves change.
    live.append(LiveFigure(fig, update, controls, animated=[score_dot, kv_dot, cursor, *bars, share_text]))
    return live[0]
