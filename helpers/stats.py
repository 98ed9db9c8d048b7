"""Statistics of attention weights that notebook 02 builds: entropy and the softmax Jacobian.

Each function takes a numpy array or a torch tensor of probabilities ``p`` (the softmax
output, summing to 1 along the last axis) and returns the same kind.
"""

from __future__ import annotations

import numpy as np
import torch

from .i18n import translate as tr


def _as_probabilities(p, name: str = "p"):
    """``p`` as a floating numpy array or torch tensor with at least one dimension."""
    if isinstance(p, torch.Tensor):
        p = p if p.is_floating_point() else p.to(torch.get_default_dtype())
    else:
        p = np.asarray(p)
        if not np.issubdtype(p.dtype, np.number):
            raise TypeError(tr(f"{name} must hold numbers, got dtype {p.dtype}"))
        p = p if np.issubdtype(p.dtype, np.floating) else p.astype(np.float64)
    if p.ndim == 0:
        raise ValueError(tr(f"{name} needs at least one dimension (..., n), got a scalar (shape ())"))
    return p


def entropy(p):
    """Shannon entropy in nats, -Σ p log p, over the last axis (0 · log 0 counts as 0).

    Args:
        p: probabilities of shape (..., n), each row summing to 1.

    Returns:
        Shape (...): 0 for a one-hot row, log n for a uniform one.
    """
    p = _as_probabilities(p)
    if isinstance(p, torch.Tensor):
        return -torch.special.xlogy(p, p).sum(dim=-1)
    safe = np.where(p > 0, p, 1.0)  # log(1) = 0 where p = 0, so no -inf and no warning
    return -(p * np.log(safe)).sum(axis=-1)


def softmax_jacobian(p):
    """The Jacobian of softmax at output ``p``: J[i, j] = ∂p_i/∂s_j = p_i (δ_ij - p_j).

    Args:
        p: softmax outputs of shape (..., n).

    Returns:
        Shape (..., n, n): diag(p) - p pᵀ for every row of ``p``.
    """
    p = _as_probabilities(p)
    if isinstance(p, torch.Tensor):
        return torch.diag_embed(p) - p.unsqueeze(-1) * p.unsqueeze(-2)
    eye = np.eye(p.shape[-1], dtype=p.dtype)
    return p[..., :, None] * eye - p[..., :, None] * p[..., None, :]


def jacobian_norm(p):
    """Frobenius norm of the softmax Jacobian of each row: how much the weights still react.

    Args:
        p: softmax outputs of shape (..., n).

    Returns:
        Shape (...): sqrt(n - 1) / n for a uniform row, 0 for a one-hot row.
    """
    jac = softmax_jacobian(p)
    if isinstance(jac, torch.Tensor):
        return torch.linalg.matrix_norm(jac)
    return np.sqrt((jac * jac).sum(axis=(-2, -1)))
