"""Statistics of attention weights that notebook 02 builds: entropy and the softmax Jacobian;
and, for notebook 11's comparison of training runs, the Wilson interval of a share of successes (how many
seeds reach a bar), the exact paired sign-flip test, and a plot of paired results.

Each attention function takes a numpy array or a torch tensor of probabilities ``p`` (the softmax
output, summing to 1 along the last axis) and returns the same kind.
"""

from __future__ import annotations

import math
import warnings

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


def wilson_interval(successes: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """The Wilson score interval for a share ``successes / n`` (default z: 95 %), as (low, high).

    The shares p a score test at level z does not reject: (p̂ - p)² ≤ z² p (1 - p) / n, the two
    roots of a quadratic. Unlike p̂ ± z·sqrt(p̂(1 - p̂)/n) it stays in [0, 1] and is not empty
    at 0 or n successes, which matters for 10 seeds.
    """
    if not (isinstance(n, (int, np.integer)) and isinstance(successes, (int, np.integer))) or n < 1 or not 0 <= successes <= n:
        raise ValueError(tr(f"need whole numbers 0 <= successes <= n with n >= 1, got successes={successes!r}, n={n!r}"))
    share, z2 = successes / n, z * z
    centre = (share + z2 / (2 * n)) / (1 + z2 / n)
    half = z / (1 + z2 / n) * math.sqrt(share * (1 - share) / n + z2 / (4 * n * n))
    low, high = max(0.0, centre - half), min(1.0, centre + half)
    return (0.0 if successes == 0 else low), (1.0 if successes == n else high)  # exact there, not rounded


def sign_flip_p(differences: list[int]) -> float:
    """Exact two-sided p-value of the paired sign-flip (permutation) test for whole-number differences.

    Under "the two arms are exchangeable within each pair", every difference is as likely negated as
    not: the p-value is the share of the 2ⁿ sign assignments whose |sum| is at least the observed
    |sum|. Whole numbers (e.g. successes out of 1000 scenes) keep every comparison exact.
    """
    if not differences or not all(isinstance(d, (int, np.integer)) for d in differences):
        raise ValueError(tr(f"need a non-empty list of whole-number differences, got {differences!r}"))
    observed = abs(sum(differences))
    sums = {0: 1}  # sum of the signed differences so far -> how many assignments give it
    for d in differences:
        following: dict[int, int] = {}
        for total, count in sums.items():
            for signed in (d, -d):
                following[total + signed] = following.get(total + signed, 0) + count
        sums = following
    return sum(count for total, count in sums.items() if abs(total) >= observed) / 2 ** len(differences)


def paired_plot(first, second, names: tuple[str, str], ylabel: str, bar: float | None = None, bar_label: str = "", ax=None):
    """A paired comparison drawn: a seaborn box per condition and one line per unit joining its two values (e.g.
    one seed's final success under each of two masks), each unit a little apart sideways so ties stay visible. ``first``, ``second``: (n,) values, unit i at index i of
    both; ``names``: the two conditions' labels; ``bar``: a dashed line at that value, labelled ``bar_label``.
    Returns the axes."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    first, second = np.asarray(first, dtype=float), np.asarray(second, dtype=float)
    if first.ndim != 1 or first.shape != second.shape:
        raise ValueError(tr(f"paired values need two (n,) arrays of one length, got shapes {first.shape} and {second.shape}"))
    if ax is None:
        _, ax = plt.subplots(figsize=(5.5, 3.4), layout="constrained")
    with warnings.catch_warnings():  # seaborn 0.13.2 passes matplotlib 3.11's deprecated ``vert``; the box is the same
        warnings.filterwarnings("ignore", message="vert: bool was deprecated")
        sns.boxplot(x=[names[0]] * len(first) + [names[1]] * len(second), y=np.concatenate([first, second]),
                    order=list(names), color="0.92", showfliers=False, width=0.5, ax=ax)
    spread = np.linspace(-0.08, 0.08, len(first)) if len(first) > 1 else np.zeros(1)  # units with equal values stay apart
    ax.plot(np.stack([spread, 1 + spread]), np.stack([first, second]), "o-", color="tab:blue", alpha=0.45)  # one line per unit
    if bar is not None:
        ax.axhline(bar, color="grey", linestyle="--", label=bar_label)
        ax.legend(fontsize=7, loc="lower right")
    ax.set_ylabel(ylabel)
    return ax
