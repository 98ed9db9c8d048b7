"""Notebook 07's explorer: depth and norm placement -> activation and gradient scale per layer.

Wires controls to the experiment notebook 07 builds: a stack of ``helpers.EncoderBlock``s at
initialisation, run forward on random tokens; after each block the RMS of the residual
stream, and at each block's input the RMS of the gradient of a random linear read-out.
Post-norm and pre-norm use the *same* weights (only ``norm_first`` differs); the pre-norm
stack ends in a final LayerNorm, as GPT-2 and Llama do. The branch gain scales each block's
two output projections; one of its settings is GPT-2's initialisation, 1/√(2L) with L = 32.
"""

from __future__ import annotations

from functools import lru_cache

import ipywidgets as widgets
import numpy as np
import torch

from helpers.i18n import N_
from helpers.i18n import translate as tr

from ..layers import EncoderBlock, LayerNorm
from ..training import one_thread
from ..widgets import LiveFigure, new_figure

MAX_DEPTH = 32
D_MODEL, NUM_HEADS, D_FF = 32, 4, 128
PLACEMENTS = {N_("post-norm (2017)"): False, N_("pre-norm (modern)"): True}
ACTIVATION_LIMITS = (0.5, 40.0)  # fixed axes, so positions can be compared by eye
GRADIENT_LIMITS = (0.01, 10.0)
GPT2_GAIN = 1 / (2 * MAX_DEPTH) ** 0.5  # GPT-2 scales residual projections by 1/√N, N = 2L branches
GAINS = (GPT2_GAIN, 1.0, 2.0, 4.0)  # the explorer's branch gains
GAIN_LABELS = {GPT2_GAIN: "1/√64 (GPT-2)", 1.0: "1", 2.0: "2", 4.0: "4"}


def make_stack(depth: int, gain: float = 1.0, seed: int = 0) -> tuple[list[EncoderBlock], LayerNorm]:
    """The first ``depth`` of MAX_DEPTH freshly initialised blocks (the same for every depth).

    ``gain`` multiplies each block's two output projections (W_O and the FFN's second
    matrix): how strongly each residual branch writes into the stream. ``GPT2_GAIN`` is
    GPT-2's 1/√(2 · MAX_DEPTH), the same for every depth because a shallow stack is the start
    of the 32-block one.
    """
    if not 1 <= depth <= MAX_DEPTH:
        raise ValueError(tr(f"depth must be between 1 and {MAX_DEPTH}, got {depth}"))
    torch.manual_seed(seed)
    blocks = [EncoderBlock(D_MODEL, NUM_HEADS, D_FF) for _ in range(MAX_DEPTH)][:depth]
    with torch.no_grad():
        for block in blocks:
            block.self_attn.w_o.weight.mul_(gain)
            block.ffn.down.weight.mul_(gain)
    return blocks, LayerNorm(D_MODEL)


@lru_cache(maxsize=8)
def _full_stack(gain: float, seed: int) -> tuple[list[EncoderBlock], LayerNorm]:
    """make_stack(MAX_DEPTH), built once per (gain, seed): building is slower than running."""
    with one_thread():
        return make_stack(MAX_DEPTH, gain, seed)


def rms(t: torch.Tensor) -> float:
    """Root mean square of all entries."""
    return float(t.detach().pow(2).mean().sqrt())


@lru_cache(maxsize=16)
def depth_table(norm_first: bool, gain: float = 1.0, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Every depth L = 1..MAX_DEPTH at once, for the explorer's slider.

    Returns ``activations`` (MAX_DEPTH,), the stream RMS after each block (the same for
    every depth: a shallow stack is the start of the deep one), and ``gradients``
    (MAX_DEPTH, MAX_DEPTH): row L - 1 holds the gradient RMS at the input of blocks 1..L
    of the stack of depth L, then NaN (those blocks are not in that stack).

    The gradients do depend on L (the loss sits on top of block L), so each depth needs its
    own backward pass. Instead of 32 of them, one pass runs MAX_DEPTH copies of the tokens
    side by side in the batch: copy c stops after block c + 1 (its loss is taken there and
    it leaves the batch), and since sequences never mix, one ``backward`` gives every
    copy's gradients. The tests check each row against a stack run at that depth alone.
    """
    blocks, final_norm = _full_stack(gain, seed)
    g = torch.Generator().manual_seed(seed + 1)
    x = torch.randn(2, 10, D_MODEL, generator=g)  # 2 sequences of 10 tokens, RMS about 1
    readout = torch.randn(2, 10, D_MODEL, generator=g)
    activations, inputs, losses = [], [], []
    with one_thread():
        h = x.repeat(MAX_DEPTH, 1, 1).requires_grad_(True)  # copy c: rows 2c and 2c + 1
        for block in blocks:
            block.norm_first = norm_first
            h.retain_grad()  # keep d loss / d (this block's input), for the copies still here
            inputs.append(h)
            h = block(h)
            done = h[:2]  # the first copy in the batch ends after this block
            activations.append(rms(done))
            losses.append(((final_norm(done) if norm_first else done) * readout).sum())
            h = h[2:]
        torch.stack(losses).sum().backward()
    gradients = np.full((MAX_DEPTH, MAX_DEPTH), np.nan)
    for layer, t in enumerate(inputs):  # t holds copies layer, ..., MAX_DEPTH - 1
        per_copy = t.grad.view(-1, 2 * 10 * D_MODEL).pow(2).mean(dim=1).sqrt()
        gradients[layer:, layer] = per_copy.numpy()
    for block in blocks:
        block.zero_grad(set_to_none=True)  # the cached blocks keep no gradients around
    activations = np.array(activations)
    activations.flags.writeable = gradients.flags.writeable = False  # cached: shared by every caller
    return activations, gradients


def layer_scales(depth: int, norm_first: bool, gain: float = 1.0, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Per block ℓ = 1..depth: RMS of the stream after it, RMS of the gradient at its input.

    Input: (2, 10, D_MODEL) standard normal tokens (RMS 1). Loss: the sum of the output
    (after a final LayerNorm for pre-norm) times a fixed standard normal tensor, so a stack
    that did nothing would pass back a gradient of RMS about 1 at every layer. The numbers
    come from :func:`depth_table`, computed once for all depths.
    """
    if not 1 <= depth <= MAX_DEPTH:
        raise ValueError(tr(f"depth must be between 1 and {MAX_DEPTH}, got {depth}"))
    activations, gradients = depth_table(bool(norm_first), float(gain), seed)
    return activations[:depth], gradients[depth - 1, :depth]


def depth_explorer(depth: int = 12, placement: str = "post-norm (2017)", gain: float = 1.0) -> LiveFigure:
    """Depth, norm placement and branch gain -> per-layer activation and gradient scale.

    The chosen placement is drawn in blue; the other one, same weights, in grey dashes.
    Axes are fixed and drawn once; an update redraws only the lines and the label.
    """
    if placement not in PLACEMENTS:
        raise ValueError(tr(f"placement must be one of {list(PLACEMENTS)}, got {placement!r}"))
    fig = new_figure((10.0, 3.9))
    ax_act, ax_grad = fig.subplots(1, 2)
    layers = np.arange(1, MAX_DEPTH + 1)
    lines = {}
    for ax, key, limits, title, ylabel in (
        (ax_act, "act", ACTIVATION_LIMITS, tr("activation: RMS of the stream after block ℓ"), tr("stream RMS (input: 1)")),
        (ax_grad, "grad", GRADIENT_LIMITS, tr("gradient: RMS of d loss / d (input of block ℓ)"),
         tr("gradient RMS (dotted: if blocks did nothing)")),
    ):
        ax.axhline(1.0, color="black", lw=0.8, ls=":")
        (lines[key, "other"],) = ax.plot(layers, np.ones(MAX_DEPTH), ls="--", color="0.6", lw=1.5)
        (lines[key, "this"],) = ax.plot(layers, np.ones(MAX_DEPTH), marker="o", ms=3.5, lw=2, color="tab:blue")
        ax.set(yscale="log", ylim=limits, xlim=(0.5, MAX_DEPTH + 0.5), xlabel=tr("block ℓ"), ylabel=ylabel, title=title)
    label = ax_act.text(0.02, 0.97, "", transform=ax_act.transAxes, va="top", fontsize=8.5)

    def update(depth: int, placement: str, gain: float):
        other = next(p for p in PLACEMENTS if p != placement)
        x = layers[:depth]
        for which, name in (("other", other), ("this", placement)):
            act, grad = layer_scales(depth, PLACEMENTS[name], float(gain))
            lines["act", which].set_data(x, act)
            lines["grad", which].set_data(x, grad)
        gain_label = GAIN_LABELS.get(gain, f"{gain:g}")
        label.set_text(tr(f"blue: {placement}\ngrey dashes: {other}, same weights\n"
                          f"branch gain {gain_label}, depth {depth}"))
        return {
            N_("stream RMS after the last block"): round(float(act[-1]), 3),
            N_("gradient RMS at block 1 / at block L"): round(float(grad[0] / grad[-1]), 3),
            N_("smallest gradient RMS"): round(float(grad.min()), 4),
        }

    controls = {
        "depth": widgets.IntSlider(value=depth, min=1, max=MAX_DEPTH, description=tr("depth L")),
        "placement": widgets.ToggleButtons(options=[(tr(p), p) for p in PLACEMENTS], value=placement, description=tr("norm")),
        "gain": widgets.ToggleButtons(options=[(GAIN_LABELS[g], g) for g in GAINS], value=float(gain),
                                      description=tr("branch gain")),
    }
    for table_gain in GAINS:  # every position of every control, computed now (about 0.1 s of CPU each):
        for norm_first in PLACEMENTS.values():  # an update then only redraws the lines
            layer_scales(MAX_DEPTH, norm_first, table_gain)  # the same cache key as update's calls
    return LiveFigure(fig, update, controls, [*lines.values(), label])
