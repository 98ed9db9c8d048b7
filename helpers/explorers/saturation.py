"""Notebook 03's saturation explorer: why attention divides the scores by √d_k.

Queries and keys have zero-mean, unit-variance entries, so each score q·k has variance
d_k. Without the 1/√d_k scale, rows of softmax(Q Kᵀ) turn one-hot as d_k grows (low
entropy, max weight near 1, a softmax-Jacobian norm near 0); with it they stay soft.
"""

from __future__ import annotations

import math
from functools import lru_cache

import ipywidgets as widgets
import numpy as np

from helpers.attention import softmax
from helpers.i18n import N_
from helpers.i18n import translate as tr
from helpers.stats import entropy, jacobian_norm
from helpers.widgets import HeatmapFrame, LiveHeatmap

MAX_N, MAX_LOG2_DK = 64, 10  # sequence length up to 64, d_k up to 2**10 = 1024


@lru_cache(maxsize=16)
def query_key_pool(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(MAX_N, 1024) standard-normal queries and keys for one seed, made once.

    Every (n, d_k) setting takes the top-left corner of the pool, so moving a slider
    adds tokens or dimensions to the same vectors instead of drawing new ones.
    """
    rng = np.random.default_rng(seed)
    pool = rng.standard_normal((2, MAX_N, 2**MAX_LOG2_DK))
    pool.flags.writeable = False  # shared by every call: nobody may edit it in place
    return pool[0], pool[1]


def saturation_frame(d_k: float, n: int, scale: bool, seed: int) -> HeatmapFrame:
    """The attention weights softmax(Q Kᵀ · s) and their statistics for one setting.

    Args:
        d_k: query/key width (a log slider gives floats; rounded to an integer 1..1024).
        n: sequence length (queries = keys = n tokens).
        scale: divide the scores by √d_k (s = 1/√d_k) or not (s = 1).
        seed: which random queries and keys.

    Returns:
        A frame with the (n, n) weights and readouts: mean row entropy, mean max weight and
        the mean Frobenius norm of each row's softmax Jacobian (the "softmax-Jacobian norm").
    """
    d_k = int(min(max(round(d_k), 1), 2**MAX_LOG2_DK))
    n = int(min(max(n, 1), MAX_N))
    queries, keys = query_key_pool(int(seed))
    q, k = queries[:n, :d_k], keys[:n, :d_k]  # (n, d_k) each
    scores = q @ k.T  # (n, n): entry (i, j) = q_i · k_j
    if scale:
        scores = scores / math.sqrt(d_k)
    weights = softmax(scores, axis=-1)  # each query's row sums to 1 over the keys
    how = N_("scores ÷ √d_k") if scale else N_("no scaling")
    setting = N_(f"d_k = {d_k}, {how}, n = {n}")  # readouts and title: English keys, shown translated
    return HeatmapFrame(weights, title=setting, readouts={
        "d_k": d_k,
        N_("scale"): f"1/√{d_k} = {1 / math.sqrt(d_k):.3f}" if scale else N_("none (1)"),
        N_("score std"): float(scores.std()),
        N_("mean row entropy (nats)"): float(entropy(weights).mean()),
        N_("uniform row entropy log n"): float(math.log(n)),
        N_("mean max weight"): float(weights.max(axis=-1).mean()),
        N_("softmax-Jacobian norm"): float(jacobian_norm(weights).mean()),
    })


def saturation_explorer(d_k: int = 128, n: int = 16, scale: bool = False, seed: int = 0) -> LiveHeatmap:
    """Sliders for d_k (log scale, 1..1024), n (2..64), scale on/off and the seed -> live heatmap
    of softmax(Q Kᵀ · scale) with mean row entropy, mean max weight and softmax-Jacobian norm."""
    controls = {
        "d_k": widgets.FloatLogSlider(value=d_k, base=2, min=0, max=MAX_LOG2_DK, step=1,
                                      readout_format=".0f", description="d_k"),
        "n": widgets.IntSlider(value=n, min=2, max=MAX_N, description=tr("n (tokens)")),
        "scale": widgets.Checkbox(value=scale, description=tr("divide by √d_k")),
        "seed": widgets.IntSlider(value=seed, min=0, max=9, description=tr("seed")),
    }
    return LiveHeatmap(saturation_frame, controls, figsize=(5.0, 4.4))
