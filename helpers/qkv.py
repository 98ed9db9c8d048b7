"""Q, K and V from one input: the projections notebook 04 builds, once built.

    proj = QKVProjection(d_model=8, d_k=4)        # random, as before training
    q, k, v = proj(x)                             # x (..., n, 8) -> (..., n, 4) each
    out, weights = self_attention(x, proj, mask)  # softmax(Q Kᵀ/√d_k) V

``hand_set_projection`` writes notebook 04's matching rules for the toy embeddings into
the weights by hand, standing in for training so that the pictures mean something.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

from .attention import scaled_dot_product_attention
from .i18n import translate as tr

# The axes a query and a key compare in notebook 04's hand-set projection (d_k = 4).
MATCH_AXES = ("money", "water", "living", "object")
# Extra rules of the query: (input axis, query axis, weight).
#   verbs look for who acts (living) and what they act on (object); colour words look for a thing.
QUERY_RULES = (("action", "living", 0.5), ("action", "object", 0.5), ("colour", "object", 1.0))
GAIN = 3.0  # how sharp the match is; a trained model learns its own scale


class QKVProjection(nn.Module):
    """Three learned linear maps from the same input: Q = X W_Q, K = X W_K, V = X W_V.

    Args:
        d_model: width of each input token vector.
        d_k: width of queries and keys (they are compared by a dot product, so they match).
        d_v: width of values (what each token hands over); default d_k.
        bias: add a learned bias to each map (the 2017 Transformer has none here).

    ``nn.Linear`` stores its weight as (out, in) and computes ``x @ weight.T``, so
    ``W_q.weight.T`` is the (d_model, d_k) matrix W_Q of the formula.
    """

    def __init__(self, d_model: int, d_k: int, d_v: int | None = None, bias: bool = False) -> None:
        super().__init__()
        for name, value in (("d_model", d_model), ("d_k", d_k), ("d_v", d_v if d_v is not None else d_k)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(tr(f"{name} must be a positive integer, got {value!r}"))
        self.d_model, self.d_k, self.d_v = d_model, d_k, d_k if d_v is None else d_v
        self.W_q = nn.Linear(d_model, d_k, bias=bias)
        self.W_k = nn.Linear(d_model, d_k, bias=bias)
        self.W_v = nn.Linear(d_model, self.d_v, bias=bias)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """x (..., n, d_model) -> Q (..., n, d_k), K (..., n, d_k), V (..., n, d_v)."""
        if not isinstance(x, torch.Tensor):
            raise TypeError(tr(f"x must be a torch tensor, got {type(x).__name__}"))
        if x.ndim < 2 or x.shape[-1] != self.d_model:
            raise ValueError(tr(f"x must have shape (..., n, d_model={self.d_model}), got {tuple(x.shape)}"))
        return self.W_q(x), self.W_k(x), self.W_v(x)

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, d_k={self.d_k}, d_v={self.d_v}"


def self_attention(x: torch.Tensor, projection: QKVProjection, mask: torch.Tensor | None = None):
    """Single-head self-attention: Q, K, V all from x, then softmax(Q Kᵀ/√d_k) V.

    Args:
        x: (..., n, d_model). mask: optional bool, True = may attend, broadcastable to (..., n, n).

    Returns:
        output (..., n, d_v) and weights (..., n, n).
    """
    q, k, v = projection(x)
    return scaled_dot_product_attention(q, k, v, mask=mask)


def hand_set_weights(axes: Sequence[str], gain: float = GAIN) -> dict[str, torch.Tensor]:
    """Notebook 04's rules as matrices in the formula's layout (d_model, d_k): Q = X @ W_Q.

    W_K reads the four MATCH_AXES (what a token offers to be matched on), W_Q reads the
    same axes plus QUERY_RULES (what a token looks for), both times ``gain``; W_V is the
    identity (each token hands over its whole vector, so outputs keep the named axes).
    """
    axes = list(axes)
    missing = [a for a in MATCH_AXES + tuple(r[0] for r in QUERY_RULES) if a not in axes]
    if missing:
        raise ValueError(tr(f"axes {missing} are needed by the hand-set projection; got axes {axes}"))
    d_model, d_k = len(axes), len(MATCH_AXES)
    W_k = torch.zeros(d_model, d_k)
    for j, axis in enumerate(MATCH_AXES):
        W_k[axes.index(axis), j] = 1.0
    W_q = W_k.clone()
    for source, target, weight in QUERY_RULES:
        W_q[axes.index(source), MATCH_AXES.index(target)] = weight
    return {"W_q": gain * W_q, "W_k": gain * W_k, "W_v": torch.eye(d_model)}


def hand_set_projection(axes: Sequence[str], gain: float = GAIN) -> QKVProjection:
    """A QKVProjection (d_model = len(axes), d_k = 4, d_v = d_model) holding hand_set_weights."""
    weights = hand_set_weights(axes, gain)
    proj = QKVProjection(len(axes), len(MATCH_AXES), d_v=len(axes))
    with torch.no_grad():
        for name, matrix in weights.items():
            getattr(proj, name).weight.copy_(matrix.T)  # nn.Linear stores (out, in)
    return proj.requires_grad_(False)
