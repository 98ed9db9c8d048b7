"""Boolean attention masks. Convention everywhere in Attention Lab: True = may attend."""

from __future__ import annotations

import numpy as np
import torch

from .i18n import translate as tr


def causal_mask(n: int, device: torch.device | str | None = None, *, n_k: int | None = None) -> torch.Tensor:
    """Lower-triangular mask: query i may attend to keys 0..i, never to the future.

    Args:
        n: number of queries (the sequence length when queries and keys are the same tokens).
        n_k: number of keys, if more than ``n``: the queries are then the *last* n of the
            n_k positions (a KV-cache step or a chunk), so the triangle is aligned
            bottom-right and the last query sees every key. PyTorch's ``is_causal=True``
            aligns it top-left instead, which is wrong for that case (notebook 05).

    Returns:
        bool tensor of shape (n, n_k), True where key j <= the query's own position.
    """
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 1:
        raise ValueError(tr(f"causal_mask needs a positive integer length, got {n!r}"))
    n_k = int(n) if n_k is None else n_k
    if not isinstance(n_k, (int, np.integer)) or isinstance(n_k, bool) or n_k < n:
        raise ValueError(tr(f"causal_mask needs n_k >= n = {n} keys (the queries are the last n positions), got {n_k!r}"))
    return torch.ones(int(n), int(n_k), dtype=torch.bool, device=device).tril(diagonal=int(n_k) - int(n))


def padding_mask(tokens, pad_id: int = 0) -> torch.Tensor:
    """Mask out padding keys: True where the token is real, False where it is ``pad_id``.

    Args:
        tokens: integer token ids of shape (B, n) (numpy, torch or nested lists).
        pad_id: the id used for padding.

    Returns:
        bool tensor of shape (B, 1, 1, n). The two singleton dimensions broadcast over
        heads and queries, so every query row of every head ignores the same pad keys.
        Combine with a causal mask by ``&``: ``padding_mask(t) & causal_mask(n)``.
    """
    tokens = torch.as_tensor(np.asarray(tokens)) if not isinstance(tokens, torch.Tensor) else tokens
    if tokens.ndim != 2:
        raise ValueError(tr(f"tokens must have shape (B, n), got shape {tuple(tokens.shape)}"))
    if tokens.is_floating_point() or tokens.dtype == torch.bool:
        raise TypeError(tr(f"tokens must be integer ids, got dtype {tokens.dtype}"))
    return (tokens != pad_id)[:, None, None, :]
