"""Position information for attention: sinusoidal encodings and rotary embeddings (RoPE).

Built step by step in notebook 08; these are the same functions, checked equal there.

- :func:`sinusoidal_encoding` is *added* to the token embeddings (Vaswani et al., 2017).
- :func:`rope` *rotates* queries and keys, pair by pair (Su et al., 2021; Llama), so that
  the score q_p · k_r of a query at position p and a key at position r depends on the
  positions only through the offset r - p.
"""

from __future__ import annotations

import torch

from .i18n import translate as tr


def _check_width(d: int, what: str) -> None:
    if not isinstance(d, int) or isinstance(d, bool) or d < 2 or d % 2:
        raise ValueError(tr(f"{what} must be a positive even integer (pairs of dimensions), got {d!r}"))


def frequencies(d: int, base: float = 10000.0) -> torch.Tensor:
    """Angular speed of each dimension pair: omega_i = base^(-2i/d), i = 0 .. d/2 - 1.

    Returns:
        float tensor of shape (d/2,), from 1 (fastest pair) down to almost 1/base.
    """
    _check_width(d, "d")
    return base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)


def sinusoidal_encoding(n: int, d_model: int, base: float = 10000.0) -> torch.Tensor:
    """The 2017 position table: PE[p, 2i] = sin(p·omega_i), PE[p, 2i+1] = cos(p·omega_i).

    Args:
        n: number of positions (0 .. n-1).
        d_model: width of the encoding (even).
        base: 10000 in the original paper.

    Returns:
        float32 tensor of shape (n, d_model); add it to the token embeddings.
    """
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise ValueError(tr(f"n must be a positive integer, got {n!r}"))
    angles = torch.arange(n, dtype=torch.float64)[:, None] * frequencies(d_model, base)  # (n, d/2)
    pe = torch.empty(n, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(angles)
    pe[:, 1::2] = torch.cos(angles)
    return pe.to(torch.get_default_dtype())


def rope(x: torch.Tensor, positions: torch.Tensor | None = None, base: float = 10000.0) -> torch.Tensor:
    """Rotary position embedding: rotate each pair (x[2i], x[2i+1]) by the angle p·omega_i.

    Apply it to queries and keys (never to values) after the projections, per head.

    Args:
        x: (..., n, d) with d even; the second-to-last dimension is the position.
        positions: (n,) integer or float positions; defaults to 0 .. n-1.
        base: 10000 in RoPE and Llama 2.

    Returns:
        Tensor shaped and typed like ``x``. Pairs are the interleaved dimensions
        (0, 1), (2, 3), ... as in Meta's Llama code (which multiplies complex numbers);
        Hugging Face pairs dimension i with i + d/2 instead, the same rotation with the
        dimensions listed in another order.
    """
    if not isinstance(x, torch.Tensor):
        raise TypeError(tr(f"x must be a torch tensor, got {type(x).__name__}"))
    if x.ndim < 2:
        raise ValueError(tr(f"x must have shape (..., n, d), got shape {tuple(x.shape)}"))
    n, d = x.shape[-2], x.shape[-1]
    _check_width(d, f"the last dimension of x (shape {tuple(x.shape)})")
    if positions is None:
        positions = torch.arange(n)
    positions = torch.as_tensor(positions)
    if positions.shape != (n,):
        raise ValueError(tr(f"positions must have shape ({n},) for x of shape {tuple(x.shape)}, got {tuple(positions.shape)}"))
    angles = positions.to(torch.float64)[:, None] * frequencies(d, base)  # (n, d/2)
    cos, sin = torch.cos(angles).to(x.dtype), torch.sin(angles).to(x.dtype)
    even, odd = x[..., 0::2], x[..., 1::2]  # the two coordinates of each pair
    rotated = torch.stack((even * cos - odd * sin, even * sin + odd * cos), dim=-1)  # (..., n, d/2, 2)
    return rotated.flatten(-2)
