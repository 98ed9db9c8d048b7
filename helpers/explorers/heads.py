"""Notebook 06's explorer: the number of heads h and a head selector -> that head's heatmap.

Wires controls to what notebook 06 builds: ``helpers.MultiHeadAttention`` holding eight
hand-set one-dimensional relations (``RELATIONS``) over the toy embeddings. The same
W_Q and W_K serve every h: h heads of d_k = 8 / h simply group the relations h ways, so
the parameter count never moves while the pictures do.
"""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np
import torch
from matplotlib.figure import Figure

from ..embeddings import load_toy_embeddings, tokenize
from ..layers import MultiHeadAttention
from ..widgets import HeatmapFrame, LiveHeatmap

# One relation per feature of the queries and keys: (name, query axis, key axis).
# Feature j of a query is GAIN · x[query axis]; feature j of a key is x[key axis], so
# the score adds GAIN · x_query[query axis] · x_key[key axis] for every relation in a head.
RELATIONS = (
    ("who acts?", "action", "living"),
    ("described as?", "living", "colour"),
    ("on what?", "action", "object"),
    ("which thing?", "colour", "object"),
    ("same kind: beings", "living", "living"),
    ("same kind: things", "object", "object"),
    ("where?", "action", "place"),
    ("grammar word", "function", "function"),
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
        raise ValueError(f"{len(RELATIONS)} relations need d_model = {len(RELATIONS)} axes, got {d_model}")
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


def head_weights(sentence: str, num_heads: int) -> np.ndarray:
    """All heads' attention weights on a sentence, shape (h, n, n)."""
    emb = load_toy_embeddings()
    x = emb.embed(sentence)[None]  # (1, n, 8)
    with torch.no_grad():
        _, weights = hand_set_attention(num_heads, emb.axes)(x, x, x)
    return weights[0].numpy()


def mean_entropy(weights: np.ndarray) -> float:
    """Average over rows of the entropy (nats) of each attention row: 0 = one key, log n = uniform."""
    p = np.clip(weights, 1e-12, 1.0)
    return float(np.mean(-(weights * np.log(p)).sum(axis=-1)))


def heads_explorer(sentence: str = SENTENCES[0], num_heads: int = 4, head: int = 0) -> LiveHeatmap:
    """Heads h (divisors of d_model = 8) and a head selector -> that head's attention heatmap."""
    options = [h for h in range(1, len(RELATIONS) + 1) if len(RELATIONS) % h == 0]
    if num_heads not in options:
        raise ValueError(f"num_heads must divide d_model = {len(RELATIONS)}: one of {options}, got {num_heads}")
    cache: dict[tuple[str, int], np.ndarray] = {}

    def compute(sentence: str, num_heads: int, head: int) -> HeatmapFrame:
        if (sentence, num_heads) not in cache:
            cache[sentence, num_heads] = head_weights(sentence, num_heads)
        head = min(head, num_heads - 1)  # the head slider follows h; this guards the moment between
        weights = cache[sentence, num_heads][head]
        tokens = tokenize(sentence)
        return HeatmapFrame(weights, tokens, tokens, readouts={
            "head": f"{head} of h = {num_heads}",
            "d_k = 8 / h": len(RELATIONS) // num_heads,
            "this head compares": ", ".join(head_relations(num_heads, head)),
            "mean row entropy (nats)": round(mean_entropy(weights), 3),
            "parameters (any h)": 4 * len(RELATIONS) ** 2,
        })

    heads = widgets.ToggleButtons(options=options, value=num_heads, description="heads h")
    selector = widgets.IntSlider(value=min(head, num_heads - 1), min=0, max=num_heads - 1, description="head")

    def follow_heads(change) -> None:  # registered before the explorer's own observer: runs first
        selector.max = change["new"] - 1

    heads.observe(follow_heads, names="value")
    return LiveHeatmap(compute, {
        "sentence": widgets.Dropdown(options=list(SENTENCES), value=sentence, description="sentence",
                                     layout=widgets.Layout(width="32em")),
        "num_heads": heads,
        "head": selector,
    }, title="one head's attention weights", figsize=(6.0, 5.0))


def split_diagram(n: int = 5, d_model: int = 8, num_heads: int = 4) -> Figure:
    """Picture of split_heads: (n, d_model) -> h matrices (n, d_k), one colour per head."""
    import matplotlib.pyplot as plt

    d_k = d_model // num_heads
    colours = plt.get_cmap("tab10")(np.arange(num_heads))
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.4), width_ratios=[1.1, 1.6], layout="constrained")
    grid = colours[np.arange(d_model) // d_k][None].repeat(n, axis=0)  # (n, d_model, 4)
    left.imshow(grid, aspect="equal")
    left.set_xticks(range(d_model), [str(j) for j in range(d_model)])
    left.set_yticks(range(n), [f"token {i}" for i in range(n)])
    left.set(xlabel="feature of Q = x W_Q", title=f"Q of one sequence: (n, d_model) = ({n}, {d_model})")
    for j in range(1, num_heads):
        left.axvline(j * d_k - 0.5, color="white", lw=3)
    gap = 1
    width = num_heads * d_k + (num_heads - 1) * gap
    canvas = np.ones((n, width, 4))
    for i in range(num_heads):
        canvas[:, i * (d_k + gap) : i * (d_k + gap) + d_k] = colours[i]
    right.imshow(canvas, aspect="equal")
    right.set_xticks([i * (d_k + gap) + (d_k - 1) / 2 for i in range(num_heads)],
                     [f"head {i}\nfeatures {i * d_k}-{(i + 1) * d_k - 1}" for i in range(num_heads)])
    right.set_yticks(range(n), [f"token {i}" for i in range(n)])
    right.set(title=f"→ split_heads: (h, n, d_k) = ({num_heads}, {n}, {d_k})")
    return fig
