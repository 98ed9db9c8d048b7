"""Notebook 02's explorer: one row of scores through softmax(scores / T) as T moves.

Bars show the weights; beside them, the row's entropy and the norm of the softmax
Jacobian against T, with a dot at the current T: both collapse as the row turns one-hot.
"""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np

from helpers.attention import softmax
from helpers.fonts import MONOSPACE
from helpers.i18n import N_
from helpers.i18n import translate as tr
from helpers.stats import entropy, jacobian_norm
from helpers.widgets import LiveFigure, new_figure

N_KEYS = 8
T_EXPONENTS = (-2.0, 2.0)  # T from 0.01 to 100


def score_row(seed: int, n: int = N_KEYS) -> np.ndarray:
    """A reproducible row of n scores (standard deviation 2), sorted from high to low."""
    return -np.sort(-2.0 * np.random.default_rng(seed).standard_normal(n))


def temperature_explorer(temperature: float = 1.0, seed: int = 0) -> LiveFigure:
    """Temperature (log slider, 0.01..100) and a seed for the score row; live bars and curves."""
    fig = new_figure((10.0, 3.4))
    bars_ax, ent_ax, jac_ax = fig.subplots(1, 3, gridspec_kw={"width_ratios": [1.2, 1, 1]})
    keys = np.arange(N_KEYS)
    bars = bars_ax.bar(keys, np.full(N_KEYS, 1 / N_KEYS), color="tab:blue")
    bars_ax.axhline(1 / N_KEYS, color="0.5", ls=":", lw=1, label=tr(f"uniform 1/{N_KEYS}"))
    bars_ax.set(ylim=(0, 1.05), xticks=keys, xticklabels=[f"k{i}" for i in keys],
                xlabel=tr("key (highest score first)"), ylabel=tr("weight"))
    bars_ax.set_title(tr("weights = softmax(s / T)"))
    bars_ax.legend(loc="upper right", fontsize=8)
    weight_text = bars_ax.text(0.97, 0.80, "", transform=bars_ax.transAxes, ha="right", va="top",
                               fontsize=9, family=MONOSPACE)

    grid = np.logspace(*T_EXPONENTS, 200)
    curves = {}
    for ax, name, uniform, top, ylabel in (
        (ent_ax, "entropy", np.log(N_KEYS), np.log(N_KEYS), tr("entropy (nats)")),
        # the norm peaks at 0.5, when two keys share the weight; a uniform row gives sqrt(n-1)/n
        (jac_ax, "jacobian", np.sqrt(N_KEYS - 1) / N_KEYS, 0.5, tr("‖J‖ (Frobenius)")),
    ):
        ax.set(xscale="log", xlim=(grid[0], grid[-1]), ylim=(-0.05 * top, 1.15 * top),
               xlabel=tr("temperature T (log scale)"), ylabel=ylabel)
        ax.axhline(uniform, color="0.5", ls=":", lw=1, label=tr("uniform row"))
        (line,) = ax.plot(grid, np.zeros_like(grid), color="tab:purple")
        (dot,) = ax.plot([1.0], [0.0], "o", color="tab:red", ms=7, label=tr("current T"))
        ax.legend(loc="upper left", fontsize=8)
        curves[name] = (line, dot)
    ent_ax.set_title(tr("entropy of the weights"))
    jac_ax.set_title(tr("softmax Jacobian norm"))
    state = {"seed": None}

    def update(temperature, seed):
        scores = score_row(seed)
        if state["seed"] != seed:  # a new row: recompute the two curves once
            along = softmax(scores[None, :] / grid[:, None])  # (200, n): one row per T
            curves["entropy"][0].set_ydata(entropy(along))
            curves["jacobian"][0].set_ydata(jacobian_norm(along))
            state["seed"] = seed
        weights = softmax(scores / temperature)
        h, j = float(entropy(weights)), float(jacobian_norm(weights))
        for bar, w in zip(bars, weights, strict=True):
            bar.set_height(w)
        curves["entropy"][1].set_data([temperature], [h])
        curves["jacobian"][1].set_data([temperature], [j])
        weight_text.set_text(tr(f"T = {temperature:.3g}\nmax weight {weights.max():.3f}"))
        return {"T": float(temperature), N_("max weight"): float(weights.max()),
                N_("entropy (nats)"): h, N_("Jacobian norm"): j}

    controls = {
        "temperature": widgets.FloatLogSlider(value=temperature, base=10, min=T_EXPONENTS[0], max=T_EXPONENTS[1],
                                              step=0.05, description="T"),
        "seed": widgets.IntSlider(value=seed, min=0, max=9, description=tr("seed")),
    }
    animated = [*bars, weight_text, *curves["entropy"], *curves["jacobian"]]
    return LiveFigure(fig, update, controls, animated)
