"""Notebook 06's explorer: the number of heads h, the score scale and a head selector -> that head's heatmap.

Wires controls to what notebook 06 builds: ``helpers.MultiHeadAttention`` holding eight
hand-set one-dimensional relations (``RELATIONS``) over the toy embeddings. The same
W_Q and W_K serve every h: h heads of d_k = 8 / h simply group the relations h ways, so
the parameter count never moves while the pictures do. The scale control separates the
two things h changes: the grouping, and the 1/√d_k that multiplies each head's scores
("none" and "1/√d_model" keep that factor the same for every h; "1/√d_model" is the
classic bug).
"""

from __future__ import annotations

import math

import ipywidgets as widgets
import numpy as np
import torch
from matplotlib.figure import Figure

from helpers.i18n import N_
from helpers.i18n import translate as tr

from ..attention import scaled_dot_product_attention
from ..embeddings import load_toy_embeddings, tokenize
from ..layers import MultiHeadAttention, split_heads
from ..widgets import HeatmapFrame, LiveHeatmap

# One relation per feature of the queries and keys: (name, query axis, key axis).
# Feature j of a query is GAIN · x[query axis]; feature j of a key is x[key axis], so
# the score adds GAIN · x_query[query axis] · x_key[key axis] for every relation in a head.
RELATIONS = (
    (N_("who acts?"), "action", "living"),
    (N_("described as?"), "living", "colour"),
    (N_("on what?"), "action", "object"),
    (N_("which thing?"), "colour", "object"),
    (N_("same kind: beings"), "living", "living"),
    (N_("same kind: things"), "object", "object"),
    (N_("where?"), "action", "place"),
    (N_("grammar word"), "function", "function"),
)
GAIN = 8.0  # how sharp a match is; a trained model learns its own scale
SENTENCES = (
    "the cat sat on the mat because it was tired",
    "the robot picks up the red cup and puts it in the bowl",
)


def hand_set_weights(axes) -> tuple[torch.Tensor, torch.Tensor]:
    """W_Q and W_K in the formula's layout (d_model, d_model): Q = X W_Q, column j = relation j."""
    axes = list(axes)
    d_model = len(axes)
    if d_model != len(RELATIONS):
        raise ValueError(tr(f"{len(RELATIONS)} relations need d_model = {len(RELATIONS)} axes, got {d_model}"))
    W_q, W_k = torch.zeros(d_model, d_model), torch.zeros(d_model, d_model)
    for j, (_, query_axis, key_axis) in enumerate(RELATIONS):
        W_q[axes.index(query_axis), j] = GAIN
        W_k[axes.index(key_axis), j] = 1.0
    return W_q, W_k


def hand_set_attention(num_heads: int, axes) -> MultiHeadAttention:
    """``MultiHeadAttention(8, num_heads, bias=False)`` with the RELATIONS; W_V = W_O = identity."""
    W_q, W_k = hand_set_weights(axes)
    mha = MultiHeadAttention(len(axes), num_heads, bias=False)
    with torch.no_grad():
        mha.w_q.weight.copy_(W_q.T)  # nn.Linear stores (out, in)
        mha.w_k.weight.copy_(W_k.T)
        mha.w_v.weight.copy_(torch.eye(len(axes)))
        mha.w_o.weight.copy_(torch.eye(len(axes)))
    return mha.requires_grad_(False)


def head_relations(num_heads: int, head: int) -> list[str]:
    """The names of the relations head ``head`` of ``num_heads`` compares (its d_k features)."""
    d_k = len(RELATIONS) // num_heads
    return [name for name, _, _ in RELATIONS[head * d_k : (head + 1) * d_k]]


SCALES = ("1/√d_k", "1/√d_model", N_("none"))  # what each head's scores are multiplied by


def score_scale(scale: str, d_model: int, num_heads: int) -> float:
    """The factor each head's scores q·k are multiplied by: 1/√d_k (right), 1/√d_model (the bug) or 1."""
    factors = {"1/√d_k": 1 / math.sqrt(d_model // num_heads), "1/√d_model": 1 / math.sqrt(d_model), "none": 1.0}
    if scale not in factors:
        raise ValueError(tr(f"scale must be one of {SCALES}, got {scale!r}"))
    return factors[scale]


def head_weights(sentence: str, num_heads: int, scale: str = "1/√d_k") -> np.ndarray:
    """All heads' attention weights on a sentence, shape (h, n, n), scores multiplied by ``scale``.

    With the default this is exactly ``hand_set_attention(num_heads, axes)``'s weights.
    """
    emb = load_toy_embeddings()
    x = emb.embed(sentence)[None]  # (1, n, 8)
    mha = hand_set_attention(num_heads, emb.axes)
    q = split_heads(mha.w_q(x), num_heads)  # (1, h, n, d_k)
    k = split_heads(mha.w_k(x), num_heads)
    v = split_heads(mha.w_v(x), num_heads)
    factor = score_scale(scale, len(emb.axes), num_heads)
    _, weights = scaled_dot_product_attention(q, k, v, scale=factor)  # (1, h, n, n)
    return weights[0].numpy()


def mean_entropy(weights: np.ndarray) -> float:
    """Average over rows of the entropy (nats) of each attention row: 0 = one key, log n = uniform."""
    p = np.clip(weights, 1e-12, 1.0)
    return float(np.mean(-(weights * np.log(p)).sum(axis=-1)))


def heads_explorer(
    sentence: str = SENTENCES[0], num_heads: int = 4, head: int = 0, scale: str = "1/√d_k"
) -> LiveHeatmap:
    """Heads h (divisors of d_model = 8), the score scale and a head selector -> that head's heatmap."""
    d_model = len(RELATIONS)
    options = [h for h in range(1, d_model + 1) if d_model % h == 0]
    if num_heads not in options:
        raise ValueError(tr(f"num_heads must divide d_model = {d_model}: one of {options}, got {num_heads}"))
    score_scale(scale, d_model, num_heads)  # rejects an unknown scale now, not at the first update
    cache: dict[tuple[str, int, str], np.ndarray] = {}

    def compute(sentence: str, num_heads: int, scale: str, head: int) -> HeatmapFrame:
        if (sentence, num_heads, scale) not in cache:
            cache[sentence, num_heads, scale] = head_weights(sentence, num_heads, scale)
        head = min(head, num_heads - 1)  # the head slider follows h; this guards the moment between
        weights = cache[sentence, num_heads, scale][head]
        tokens = tokenize(sentence)
        return HeatmapFrame(weights, tokens, tokens, readouts={
            N_("head"): tr(f"{head} of h = {num_heads}"),
            "d_k = 8 / h": d_model // num_heads,
            N_("this head compares"): ", ".join(tr(name) for name in head_relations(num_heads, head)),
            N_("scores multiplied by"): round(score_scale(scale, d_model, num_heads), 3),
            N_("mean row entropy (nats)"): round(mean_entropy(weights), 3),
            N_("parameters (any h)"): 4 * d_model**2,
        })

    heads = widgets.ToggleButtons(options=options, value=num_heads, description=tr("heads h"))
    selector = widgets.IntSlider(value=min(head, num_heads - 1), min=0, max=num_heads - 1, description=tr("head"))

    return LiveHeatmap(compute, {
        "sentence": widgets.Dropdown(options=list(SENTENCES), value=sentence, description=tr("sentence"),
                                     layout=widgets.Layout(width="32em")),
        # scale before heads: at h = 1 the two scales are the same number (d_k = d_model)
        "scale": widgets.ToggleButtons(options=[(tr(s), s) for s in SCALES], value=scale, description=tr("scale")),
        "num_heads": heads,
        "head": selector,
    }, title=tr("one head's attention weights"), figsize=(6.0, 5.0),
        limits={"head": ("num_heads", lambda num_heads: num_heads - 1)})  # a head of the h there are


def _draw_heads(ax, token: np.ndarray, feature: np.ndarray, d_k: int, colours: np.ndarray, title: str) -> None:
    """h blocks of (n, d_k) side by side; each entry coloured by the head its feature belongs
    to and labelled with the token it came from. token, feature: (h, n, d_k) integer arrays."""
    num_heads, n, _ = token.shape
    gap = 1
    canvas = np.ones((n, num_heads * (d_k + gap) - gap, 4))
    for i in range(num_heads):
        left = i * (d_k + gap)
        canvas[:, left : left + d_k] = colours[feature[i] // d_k]
        for row in range(n):
            for col in range(d_k):
                ax.text(left + col, row, str(token[i, row, col]), ha="center", va="center", color="white",
                        fontsize=9)
    ax.imshow(canvas, aspect="equal")
    ax.set_xticks([i * (d_k + gap) + (d_k - 1) / 2 for i in range(num_heads)], [tr(f"head {i}") for i in range(num_heads)])
    ax.set_yticks(range(n), [tr(f"row {r}") for r in range(n)])
    ax.set_title(tr(title))


def split_diagram(n: int = 5, d_model: int = 8, num_heads: int = 4, show_wrong_view: bool = False) -> Figure:
    """Picture of split_heads: (n, d_model) -> h matrices (n, d_k), one colour per head's features.

    Every entry is labelled with the token it came from. With ``show_wrong_view`` a third panel
    shows ``view(h, n, d_k)`` without the transpose: rows that mix two tokens' features.
    """
    import matplotlib.pyplot as plt

    if d_model % num_heads:
        raise ValueError(tr(f"num_heads={num_heads} must divide d_model={d_model}"))
    d_k = d_model // num_heads
    colours = plt.get_cmap("tab10")(np.arange(num_heads))
    ratios = [1.1, 1.6, 1.6] if show_wrong_view else [1.1, 1.6]
    fig, axes = plt.subplots(1, len(ratios), figsize=(4.7 * len(ratios), 3.6), width_ratios=ratios,
                             layout="constrained")
    token = np.arange(n)[:, None].repeat(d_model, axis=1)  # (n, d_model): the token of each entry of Q
    feature = np.arange(d_model)[None].repeat(n, axis=0)
    left = axes[0]
    left.imshow(colours[feature // d_k], aspect="equal")
    for i in range(n):
        for j in range(d_model):
            left.text(j, i, str(i), ha="center", va="center", color="white", fontsize=9)
    left.set_xticks(range(d_model), [str(j) for j in range(d_model)])
    left.set_yticks(range(n), [tr(f"token {i}") for i in range(n)])
    left.set(xlabel=tr("feature of Q = x W_Q (number in a cell: its token)"),
             title=tr(f"Q of one sequence: (n, d_model) = ({n}, {d_model})"))
    for j in range(1, num_heads):
        left.axvline(j * d_k - 0.5, color="white", lw=3)
    right = token.reshape(n, num_heads, d_k).transpose(1, 0, 2)  # split_heads: (h, n, d_k)
    _draw_heads(axes[1], right, feature.reshape(n, num_heads, d_k).transpose(1, 0, 2), d_k, colours,
                N_(f"split_heads: view(n, h, d_k).transpose → ({num_heads}, {n}, {d_k})"))
    if show_wrong_view:  # memory order read straight as (h, n, d_k)
        _draw_heads(axes[2], token.reshape(num_heads, n, d_k), feature.reshape(num_heads, n, d_k), d_k, colours,
                    N_(f"wrong: view(h, n, d_k) → ({num_heads}, {n}, {d_k}), same shape"))
    return fig
