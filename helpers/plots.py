"""One heatmap look for the whole series: query rows, key columns, labelled, masked cells hatched."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from .i18n import N_
from .i18n import translate as tr

MAX_ANNOTATED = 10  # annotate cell values only when both sides are at most this long
MAX_TICK_LABELS = 32  # beyond this many tokens, label every k-th one
MAX_INDEX_LABELS = 16  # positions without token names are numbered more sparsely
QUERY_AXIS_LABEL = N_("query (attending)")
KEY_AXIS_LABEL = N_("key (attended to)")
WEIGHT_LABEL = N_("attention weight")  # the colour bar's label


def to_numpy(x) -> np.ndarray:
    """A numpy copy of an array or (possibly grad-tracking, possibly GPU) tensor."""
    if isinstance(x, torch.Tensor):
        return x.detach().cpu().numpy()
    return np.asarray(x)


def as_matrix(x, name: str = "weights") -> np.ndarray:
    """Squeeze leading singleton dimensions away; the result must be 2-D (rows, columns)."""
    x = to_numpy(x)
    while x.ndim > 2 and x.shape[0] == 1:
        x = x[0]
    if x.ndim != 2:
        raise ValueError(tr(f"{name} must be a 2-D (n_q, n_k) matrix, got shape {x.shape}"))
    return x


def mask_overlay(blocked: np.ndarray, cell_px: int = 8) -> np.ndarray:
    """RGBA picture that hatches blocked cells grey and leaves the others transparent.

    Args:
        blocked: bool (n_q, n_k), True where the query may NOT attend.

    Returns:
        float RGBA array of shape (n_q * cell_px, n_k * cell_px, 4), to be drawn with
        ``imshow`` over the heatmap with the same extent.
    """
    rows, cols = np.indices((cell_px, cell_px))
    stripe = ((rows + cols) % 4 < 2)[..., None]  # diagonal stripes inside one cell
    tile = np.where(stripe, [0.55, 0.55, 0.55, 1.0], [0.88, 0.88, 0.88, 1.0])  # (px, px, 4)
    cells = np.kron(blocked.astype(float), np.ones((cell_px, cell_px)))[..., None]
    return np.tile(tile, (*blocked.shape, 1)) * cells


def tick_positions(n: int, named: bool = True) -> np.ndarray:
    """Which of n positions get a tick label: at most MAX_TICK_LABELS token names, or
    MAX_INDEX_LABELS position numbers."""
    step = max(1, int(np.ceil(n / (MAX_TICK_LABELS if named else MAX_INDEX_LABELS))))
    return np.arange(0, n, step)


def label_axes(ax: Axes, n_q: int, n_k: int, query_labels=None, key_labels=None) -> None:
    """Ticks and titles of a heatmap axis: query rows on the y-axis, key columns on the x-axis."""
    labels = {"q": query_labels, "k": key_labels}
    for axis, n, which in ((ax.yaxis, n_q, "q"), (ax.xaxis, n_k, "k")):
        names = labels[which]
        ticks = tick_positions(n, named=names is not None)
        if names is not None and len(names) != n:
            raise ValueError(tr(f"{len(names)} {which}-labels given for {n} {which}-positions"))
        axis.set_ticks(ticks, [str(names[i]) if names is not None else str(i) for i in ticks])
    shown = len(tick_positions(n_k, named=key_labels is not None))
    longest = max((len(str(s)) for s in key_labels), default=1) if key_labels is not None else len(str(n_k))
    ax.tick_params(axis="x", labelrotation=0 if shown * longest <= 32 else 90)  # upright if they fit
    ax.set_xlabel(tr(KEY_AXIS_LABEL))
    ax.set_ylabel(tr(QUERY_AXIS_LABEL))


def attention_heatmap(
    weights,
    query_labels: Sequence[str] | None = None,
    key_labels: Sequence[str] | None = None,
    *,
    ax: Axes | None = None,
    mask=None,
    title: str | None = None,
    vmin: float | None = 0.0,
    vmax: float | None = 1.0,
    cmap: str = "viridis",
    annotate: bool | None = None,
    fmt: str = ".2f",
    colorbar: bool = True,
    cbar_label: str = WEIGHT_LABEL,
) -> Axes:
    """Draw an attention (or score) matrix the way every notebook does.

    Args:
        weights: (n_q, n_k) matrix; leading singleton dimensions are squeezed away.
        query_labels: n_q names for the rows; key_labels: n_k names for the columns.
        ax: axes to draw into (a new figure if None).
        mask: optional boolean, broadcastable to (n_q, n_k), True = may attend; blocked
            cells are hatched grey so they never read as "weight 0 by choice".
        vmin, vmax: colour range; (0, 1) suits weights, use None for raw scores.
        annotate: print each value in its cell; default only when both sides are
            at most 10 long (readable).

    Returns:
        The axes, with the image as ``ax.images[0]``.
    """
    matrix = as_matrix(weights)
    n_q, n_k = matrix.shape
    if ax is None:
        width = float(np.clip(0.45 * n_k + 2.5, 4.0, 9.0))
        _, ax = plt.subplots(figsize=(width, float(np.clip(0.45 * n_q + 1.5, 3.0, 8.0))))
    image = ax.imshow(matrix, cmap=cmap, vmin=vmin, vmax=vmax, interpolation="nearest")
    if mask is not None:
        allowed = np.broadcast_to(as_matrix(mask, "mask"), matrix.shape)
        ax.imshow(mask_overlay(~allowed), extent=image.get_extent(), interpolation="nearest")
    label_axes(ax, n_q, n_k, query_labels, key_labels)
    if annotate or (annotate is None and max(n_q, n_k) <= MAX_ANNOTATED):
        annotate_cells(ax, matrix, image, fmt, None if mask is None else allowed)
    if colorbar:
        ax.figure.colorbar(image, ax=ax, label=tr(cbar_label), fraction=0.046, pad=0.04)
    if title:
        ax.set_title(title)
    return ax


def annotate_cells(ax: Axes, matrix: np.ndarray, image, fmt: str, allowed=None) -> None:
    """Write each cell's value, dark text on light cells and light text on dark ones."""
    rgba = image.cmap(image.norm(matrix))
    luminance = rgba[..., :3] @ np.array([0.299, 0.587, 0.114])
    for (i, j), value in np.ndenumerate(matrix):
        if allowed is not None and not allowed[i, j]:
            continue
        colour = "black" if luminance[i, j] > 0.5 else "white"
        ax.text(j, i, format(value, fmt), ha="center", va="center", color=colour, fontsize=8)


def attention_grid(
    matrices,
    titles: Sequence[str] | None = None,
    query_labels: Sequence[str] | None = None,
    key_labels: Sequence[str] | None = None,
    *,
    ncols: int = 4,
    mask=None,
    suptitle: str | None = None,
    vmin: float | None = 0.0,
    vmax: float | None = 1.0,
    cmap: str = "viridis",
    annotate: bool | None = None,
    panel_size: float = 2.6,
    cbar_label: str = WEIGHT_LABEL,
) -> Figure:
    """Small multiples: one heatmap per matrix on a shared colour scale.

    Args:
        matrices: (m, n_q, n_k) stack (e.g. one matrix per head) or a list of (n_q, n_k).
        titles: m panel titles.
        mask: boolean, broadcastable to (n_q, n_k), applied to every panel.

    Returns:
        The figure (one shared colour bar on the right).
    """
    if not isinstance(matrices, (list, tuple)):
        matrices = list(to_numpy(matrices))
    stack = [as_matrix(m, "each matrix") for m in matrices]
    if titles is not None and len(titles) != len(stack):
        raise ValueError(tr(f"{len(titles)} titles for {len(stack)} matrices"))
    ncols = min(ncols, len(stack))
    nrows = int(np.ceil(len(stack) / ncols))
    fig, axes = plt.subplots(
        nrows, ncols, figsize=(panel_size * ncols + 1.2, panel_size * nrows + 0.6),
        squeeze=False, layout="constrained",
    )
    if vmin is None or vmax is None:  # one shared scale across panels
        values = np.concatenate([m.ravel() for m in stack])
        vmin = values.min() if vmin is None else vmin
        vmax = values.max() if vmax is None else vmax
    for idx, ax in enumerate(axes.flat):
        if idx >= len(stack):
            ax.set_visible(False)
            continue
        attention_heatmap(
            stack[idx], query_labels, key_labels, ax=ax, mask=mask, vmin=vmin, vmax=vmax,
            cmap=cmap, colorbar=False, annotate=annotate,
            title=titles[idx] if titles is not None else None,
        )
        if idx % ncols:
            ax.set_ylabel("")
        if idx < len(stack) - ncols:
            ax.set_xlabel("")
    fig.colorbar(axes.flat[0].images[0], ax=axes, label=tr(cbar_label), shrink=0.8)
    if suptitle:
        fig.suptitle(suptitle)
    return fig
