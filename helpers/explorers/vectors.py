"""Notebook 01's explorer: a 2-D query and key, their angle and lengths, and the live score.

The score is the dot product q · k that notebook 01 builds; the picture shows it as
|q| times the signed length of k's projection onto q's direction, next to the curve |q||k| cos θ.
"""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np

from helpers.fonts import MONOSPACE
from helpers.i18n import translate as tr
from helpers.widgets import LiveFigure, new_figure

MAX_LENGTH = 3.0


def vector_pair(angle: float, q_length: float, k_length: float) -> tuple[np.ndarray, np.ndarray]:
    """q along the x-axis with length ``q_length``; k at ``angle`` degrees with length ``k_length``."""
    theta = np.deg2rad(angle)
    q = np.array([q_length, 0.0])
    k = k_length * np.array([np.cos(theta), np.sin(theta)])
    return q, k


def vectors_explorer(angle: int = 60, q_length: float = 1.5, k_length: float = 2.0) -> LiveFigure:
    """Angle and length sliders for a query and a key in the plane; live q · k and cos θ.

    Left: the two vectors and the projection of k onto q's direction (its signed length is |k| cos θ,
    so the score is |q| times it). Right: the score against the angle for the current
    lengths, the cosine (lengths removed) dashed, and a dot at the current angle.
    """
    fig = new_figure((8.4, 3.7))
    plane, curve = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1, 1.25]})

    lim = MAX_LENGTH + 0.4
    plane.set(xlim=(-lim, lim), ylim=(-lim, lim), aspect="equal", xlabel=tr("dimension 1"), ylabel=tr("dimension 2"))
    plane.set_title(tr("query q and key k"))
    plane.axhline(0, color="0.85", lw=0.8, zorder=0)
    plane.axvline(0, color="0.85", lw=0.8, zorder=0)
    below = -0.22  # the projection is drawn just under the x-axis so the q arrow does not hide it
    (shadow,) = plane.plot([0, 0], [below, below], color="tab:green", lw=5, alpha=0.7,
                           solid_capstyle="butt", label=tr("projection of k onto q: |k| cos θ"))
    (drop,) = plane.plot([0, 0], [0, 0], ls=":", color="0.4", lw=1)
    arrows = plane.quiver(
        [0, 0], [0, 0], [1, 1], [0, 0], color=["tab:blue", "tab:orange"],
        angles="xy", scale_units="xy", scale=1, width=0.015, zorder=3,
    )
    q_label = plane.text(0, 0, "q", color="tab:blue", fontsize=12, fontweight="bold", ha="center")
    k_label = plane.text(0, 0, "k", color="tab:orange", fontsize=12, fontweight="bold", ha="center", va="center")
    plane.legend(loc="lower left", fontsize=8)

    degrees = np.arange(-180, 181)
    cosines = np.cos(np.deg2rad(degrees))
    top = MAX_LENGTH**2
    curve.set(xlim=(-180, 180), ylim=(-top - 0.5, top + 0.5), xticks=np.arange(-180, 181, 60),
              xlabel=tr("angle θ between q and k (degrees)"), ylabel=tr("score q·k (solid) and cos θ (dashed)"))
    curve.set_title(tr("score q·k as k turns"))
    curve.axhline(0, color="0.85", lw=0.8, zorder=0)
    (score_line,) = curve.plot(degrees, cosines, color="tab:purple", label=tr("score q·k = |q||k| cos θ"))
    curve.plot(degrees, cosines, color="0.3", ls="--", lw=1, label=tr("cosine similarity cos θ"))
    (dot,) = curve.plot([0], [0], "o", color="tab:purple", ms=8)
    curve.legend(loc="lower center", fontsize=8)
    reading = curve.text(0.02, 0.97, "", transform=curve.transAxes, va="top", fontsize=9, family=MONOSPACE)

    def update(angle, q_length, k_length):
        q, k = vector_pair(angle, q_length, k_length)
        score = float(q @ k)
        cosine = score / float(np.linalg.norm(q) * np.linalg.norm(k))
        along = float(k @ q) / float(np.linalg.norm(q))  # signed length of k's projection onto q
        arrows.set_UVC([q[0], k[0]], [q[1], k[1]])
        shadow.set_data([0, along], [below, below])
        drop.set_data([k[0], along], [k[1], below])
        q_label.set_position((q[0], 0.2))
        k_label.set_position(tuple(k * (1 + 0.3 / k_length)))
        score_line.set_ydata(q_length * k_length * cosines)
        dot.set_data([angle], [score])
        reading.set_text(f"q·k   = {score:+.2f}\ncos θ = {cosine:+.2f}")
        return {"q · k": round(score, 3), "cos θ": round(cosine, 3),
                "|q| |k|": round(q_length * k_length, 3), "|k| cos θ": round(along, 3)}

    controls = {
        "angle": widgets.IntSlider(value=angle, min=-180, max=180, step=5, description=tr("angle θ (°)")),
        "q_length": widgets.FloatSlider(value=q_length, min=0.25, max=MAX_LENGTH, step=0.25, description="|q|"),
        "k_length": widgets.FloatSlider(value=k_length, min=0.25, max=MAX_LENGTH, step=0.25, description="|k|"),
    }
    animated = [shadow, drop, arrows, q_label, k_label, score_line, dot, reading]
    return LiveFigure(fig, update, controls, animated)
