"""Notebook 08's explorer: shuffle the tokens, switch positions on or off, watch the weights.

Without positions, self-attention is permutation-equivariant: the shuffled sentence gets
the same weights in shuffled cells and exactly the shuffled outputs. Sinusoidal encodings
(added to x) or rotary embeddings (rotating q and k) make the order matter.
"""

from __future__ import annotations

import ipywidgets as widgets
import torch

from helpers.attention import scaled_dot_product_attention
from helpers.i18n import N_
from helpers.i18n import translate as tr
from helpers.position import rope, sinusoidal_encoding
from helpers.widgets import HeatmapFrame, LiveHeatmap

ORDERS = {
    N_("as written"): lambda n: list(range(n)),
    N_("swap 2nd and last"): lambda n: [0, n - 1, *range(2, n - 1), 1],
    N_("reversed"): lambda n: list(range(n - 1, -1, -1)),
    N_("rotated by one"): lambda n: [*range(1, n), 0],
}
POSITIONS = (N_("none"), N_("sinusoidal (added to x)"), N_("rotary (q, k rotated)"))


def attend(x: torch.Tensor, w_q, w_k, w_v, positions: str = "none"):
    """One head of self-attention over x (n, d_model) with the chosen kind of positions.

    Returns (output (n, d_v), weights (n, n)).
    """
    if positions not in POSITIONS:
        raise ValueError(tr(f"positions must be one of {POSITIONS}, got {positions!r}"))
    if positions.startswith("sinusoidal"):
        x = x + sinusoidal_encoding(x.shape[-2], x.shape[-1]).to(x.dtype)
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    if positions.startswith("rotary"):
        q, k = rope(q), rope(k)
    return scaled_dot_product_attention(q, k, v)


def demo_sentence(seed: int = 8, d_model: int = 16):
    """The notebook's example: "the dog chased the cat", random embeddings and projections."""
    gen = torch.Generator().manual_seed(seed)
    vocab = ["the", "dog", "chased", "cat"]
    table = torch.randn(len(vocab), d_model, generator=gen, dtype=torch.float64)
    w_q, w_k, w_v = (torch.randn(d_model, d_model, generator=gen, dtype=torch.float64) / d_model**0.5 for _ in range(3))
    tokens = ["the", "dog", "chased", "the", "cat"]
    x = table[[vocab.index(t) for t in tokens]]
    return tokens, x, w_q, w_k, w_v


def position_explorer(tokens=None, x=None, w_q=None, w_k=None, w_v=None) -> LiveHeatmap:
    """Order of the tokens and kind of positions -> attention weights of the shuffled sentence.

    Readouts: how far the shuffled sentence's outputs are from the shuffled outputs (0 means
    equivariant), and whether the two copies of a repeated token got the same output.
    """
    if x is None:
        tokens, x, w_q, w_k, w_v = demo_sentence()
    n = x.shape[0]
    repeated = [i for i, t in enumerate(tokens) if tokens.count(t) > 1][:2]

    def compute(order, positions):
        perm = ORDERS[order](n)
        out, weights = attend(x[perm], w_q, w_k, w_v, positions)
        reference, _ = attend(x, w_q, w_k, w_v, positions)
        gap = float((out - reference[perm]).abs().max())
        readouts = {N_("max |out(shuffled) - shuffled out|"): round(gap, 6)}
        if repeated:
            rows = [perm.index(i) for i in repeated]  # where the two copies sit now
            same = torch.allclose(out[rows[0]], out[rows[1]], atol=1e-12)
            readouts[N_(f"both '{tokens[repeated[0]]}' get the same output")] = N_("yes") if same else N_("no")
        labels = [f"{tokens[i]}@{p}" for p, i in enumerate(perm)]
        return HeatmapFrame(weights, labels, labels, readouts=readouts)

    return LiveHeatmap(
        compute,
        {
            "order": widgets.Dropdown(options=[(tr(o), o) for o in ORDERS], value="as written", description=tr("order")),
            "positions": widgets.Dropdown(options=[(tr(p), p) for p in POSITIONS], value="none", description=tr("positions")),
        },
        title=tr("attention weights of the (shuffled) sentence"),
        figsize=(5.4, 4.6),
    )
