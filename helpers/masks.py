"""Boolean attention masks. Convention everywhere in Attention Lab: True = may attend."""

from __future__ import annotations

import numpy as np
import torch


def causal_mask(n: int, device: torch.device | str | None = None) -> torch.Tensor:
    """Lower-triangular mask: query i may attend to keys 0..i, never to the future.

    Args:
        n: sequence length.

    Returns:
        bool tensor of shape (n, n), True on and below the diagonal.
    """
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 1:
        raise ValueError(f"causal_mask needs a positive integer length, got {n!r}")
    return torch.ones(int(n), int(n), dtype=torch.bool, device=device).tril()


def padding_mask(tokens, pad_id: int = 0) -> torch.Tensor:
    """Mask out padding keys: True where the token is real, False where it is ``pad_id``.

    Args:
        tokens: integer token ids of shape (B, L) (numpy, torch or nested lists).
        pad_id: the id used for padding.

    Returns:
        bool tensor of shape (B, 1, 1, L). The two singleton dimensions broadcast over
        heads and queries, so every query row of every head ignores the same pad keys.
        Combine with a causal mask by ``&``: ``padding_mask(t) & causal_mask(L)``.
    """
    tokens = torch.as_tensor(np.asarray(tokens)) if not isinstance(tokens, torch.Tensor) else tokens
    if tokens.ndim != 2:
        raise ValueError(f"tokens must have shape (B, L), got shape {tuple(tokens.shape)}")
    if tokens.is_floating_point() or tokens.dtype == torch.bool:
        raise TypeError(f"tokens must be integer ids, got dtype {tokens.dtype}")
    return (tokens != pad_id)[:, None, None, :]
