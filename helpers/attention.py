"""Softmax and scaled dot-product attention for numpy arrays and torch tensors alike.

Both functions take the same kind of array they return: numpy in, numpy out; torch in,
torch out (differentiable). Lists and other array-likes are treated as numpy.

Mask convention (PyTorch's ``F.scaled_dot_product_attention``): a boolean mask with
**True = this query may attend to this key**, False = blocked.
"""

from __future__ import annotations

import math
from typing import TypeVar

import numpy as np
import torch

from .i18n import translate as tr

Array = TypeVar("Array", np.ndarray, torch.Tensor)


def _as_array(x, name: str) -> np.ndarray | torch.Tensor:
    """Return ``x`` as a torch tensor or a floating numpy array (lists become numpy)."""
    if isinstance(x, torch.Tensor):
        return x if x.is_floating_point() else x.to(torch.get_default_dtype())
    try:
        arr = np.asarray(x)
    except (TypeError, ValueError) as exc:
        raise TypeError(tr(f"{name} must be a numpy array or torch tensor, got {type(x).__name__}")) from exc
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise TypeError(tr(f"{name} must hold numbers, got dtype {arr.dtype}"))
    return arr if np.issubdtype(arr.dtype, np.floating) else arr.astype(np.float64)


def _masked_softmax(scores, mask, axis: int):
    """Softmax of ``scores`` over ``axis``, with ``mask`` False entries given weight 0.

    Subtracting the row maximum keeps ``exp`` from overflowing. A row whose entries are
    all blocked (or all -inf) has no maximum to subtract; it returns all zeros, not NaN.
    """
    if isinstance(scores, torch.Tensor):
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        row_max = scores.amax(dim=axis, keepdim=True).detach()
        row_max = torch.where(torch.isfinite(row_max), row_max, torch.zeros_like(row_max))
        exp = torch.exp(scores - row_max)
        total = exp.sum(dim=axis, keepdim=True)
        return exp / torch.where(total > 0, total, torch.ones_like(total))
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    row_max = np.max(scores, axis=axis, keepdims=True)
    row_max = np.where(np.isfinite(row_max), row_max, 0.0)
    with np.errstate(under="ignore"):
        exp = np.exp(scores - row_max)
    total = np.sum(exp, axis=axis, keepdims=True)
    return (exp / np.where(total > 0, total, 1.0)).astype(scores.dtype, copy=False)


def softmax(x: Array, axis: int = -1) -> Array:
    """Numerically stable softmax along ``axis``.

    Args:
        x: scores of any shape, numpy array or torch tensor (integers become floats).
        axis: the dimension that sums to 1. For a (queries, keys) score matrix, ``-1``
            normalises each query's row over the keys.

    Returns:
        Same shape and kind as ``x``. Never overflows: the maximum is subtracted first,
        so scores of 1e4 are fine. A slice that is entirely ``-inf`` gives zeros, not NaN.
    """
    x = _as_array(x, "x")
    if x.ndim == 0:
        raise ValueError(tr("softmax needs at least one dimension, got a scalar (shape ())"))
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(tr(f"axis {axis} is out of range for x of shape {tuple(x.shape)}"))
    return _masked_softmax(x, None, axis)


def _check_mask(mask, scores_shape: tuple[int, ...], like):
    """Validate a boolean mask against the (..., n_q, n_k) score shape; return it as ``like``'s kind."""
    if isinstance(mask, torch.Tensor) != isinstance(like, torch.Tensor):
        raise TypeError(
            tr(f"mask is a {type(mask).__name__} but q/k/v are {type(like).__name__}s; use one kind")
        )
    mask = mask if isinstance(mask, torch.Tensor) else np.asarray(mask)
    is_bool = mask.dtype == torch.bool if isinstance(mask, torch.Tensor) else mask.dtype == bool
    if not is_bool:
        raise TypeError(
            tr(f"mask must be boolean (True = may attend), got dtype {mask.dtype}; "
            "for a 0/1 array use mask.astype(bool) or mask.bool()")
        )
    try:
        broadcast = np.broadcast_shapes(tuple(mask.shape), scores_shape)
    except ValueError:
        broadcast = None
    if broadcast != scores_shape:
        raise ValueError(
            tr(f"mask of shape {tuple(mask.shape)} does not broadcast to the scores' shape "
            f"{scores_shape} (..., n_q, n_k)")
        )
    if isinstance(mask, torch.Tensor):
        return mask.to(like.device)
    return mask


def scaled_dot_product_attention(
    q: Array, k: Array, v: Array, mask: Array | None = None, scale: float | None = None
) -> tuple[Array, Array]:
    """softmax(Q Kᵀ · scale) V, returning the output and the attention weights.

    Args:
        q: queries, shape (..., n_q, d_k).
        k: keys, shape (..., n_k, d_k).
        v: values, shape (..., n_k, d_v).
        mask: optional boolean, broadcastable to (..., n_q, n_k); True = may attend.
        scale: multiplies the scores; defaults to 1 / sqrt(d_k).

    Leading (batch, head) dimensions broadcast against each other. numpy in gives numpy
    out, torch in gives torch out.

    Returns:
        output (..., n_q, d_v) and weights (..., n_q, n_k), each row of weights summing to 1.
        A query row whose keys are all blocked gets all-zero weights and an all-zero
        output (PyTorch's own kernels may return NaN there).

    Raises:
        TypeError: mixed numpy/torch inputs, or a mask that is not boolean.
        ValueError: ranks below 2, d_k of q and k differ, k and v disagree on n_k, leading
            dimensions do not broadcast, or the mask does not broadcast to the scores.
    """
    kinds = {isinstance(t, torch.Tensor) for t in (q, k, v)}
    if len(kinds) > 1:
        raise TypeError(tr("q, k and v must all be numpy arrays or all torch tensors, not a mix"))
    q, k, v = (_as_array(t, name) for t, name in ((q, "q"), (k, "k"), (v, "v")))
    shapes = f"q {tuple(q.shape)}, k {tuple(k.shape)}, v {tuple(v.shape)}"
    if min(q.ndim, k.ndim, v.ndim) < 2:
        raise ValueError(tr(f"q, k and v need at least 2 dimensions (..., n, d); got {shapes}"))
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(tr(f"q and k must share d_k (last dimension); got {shapes}"))
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(tr(f"k and v must have the same number of keys n_k (dim -2); got {shapes}"))
    try:
        batch = np.broadcast_shapes(tuple(q.shape[:-2]), tuple(k.shape[:-2]), tuple(v.shape[:-2]))
    except ValueError as exc:
        raise ValueError(tr(f"leading (batch/head) dimensions do not broadcast: {shapes}")) from exc

    d_k = q.shape[-1]
    scale = 1.0 / math.sqrt(d_k) if scale is None else scale
    if isinstance(q, torch.Tensor):
        scores = (q @ k.transpose(-2, -1)) * scale  # (..., n_q, n_k)
    else:
        dtype = np.result_type(q, k, v)
        q, k, v = q.astype(dtype, copy=False), k.astype(dtype, copy=False), v.astype(dtype, copy=False)
        scores = (q @ np.swapaxes(k, -2, -1)) * dtype.type(scale)  # (..., n_q, n_k)
    scores_shape = (*batch, q.shape[-2], k.shape[-2])
    if mask is not None:
        mask = _check_mask(mask, scores_shape, q)
    weights = _masked_softmax(scores, mask, axis=-1)  # (..., n_q, n_k)
    return weights @ v, weights  # (..., n_q, d_v), (..., n_q, n_k)
