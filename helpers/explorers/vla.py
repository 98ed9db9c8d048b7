"""Notebook 11's explorer and overlay pictures: where the tiny VLA's heads look on the image.

The overlay is one query's attention over the patch tokens, a GRID × GRID grid blended
over the image (each patch's weight fills its p × p pixels), semi-transparent; the named
object is outlined and the decoded action marked (a cross at the predicted (x, y)).
"""

from __future__ import annotations

from functools import lru_cache

import ipywidgets as widgets
import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.patches import Rectangle

from helpers.i18n import N_
from helpers.i18n import translate as tr
from helpers.vla import (
    COLOURS,
    GRID,
    IMAGE,
    OBJECT,
    PATCH,
    QUERIES,
    SHAPES,
    WORDS,
    Scene,
    TinyVLA,
    bin_centres,
    encode_batch,
    held_out_scenes,
    image_attention,
    load_models,
    object_patches,
    untrained,
)
from helpers.widgets import LiveFigure, new_figure

MODELS = (N_("causal"), N_("prefix"), N_("untrained"))
MAGMA = plt.get_cmap("magma")
N_SEEDS = 30
OVERLAY_ALPHA = 0.6


def explorer_scene(seed: int, colour: str, shape: str) -> tuple[Scene, tuple[str, str, str], bool]:
    """Scene ``seed`` of the explorer's set and the instruction (verb, colour, shape).

    If the image holds that object it is moved to the front (the target); the bool says so.
    Otherwise the image is kept and the words name something that is not there.
    """
    scene = held_out_scenes(1, seed=10_000 + seed)[0]
    named = next((k for k, (c, s, _, _) in enumerate(scene.objects) if (c, s) == (colour, shape)), None)
    if named is not None:
        scene = Scene((scene.objects[named], *scene.objects[:named], *scene.objects[named + 1 :]), scene.verb)
    return scene, (scene.verb, colour, shape), named is not None


def action_pixels(action_ids: torch.Tensor) -> tuple[float, float, float]:
    """Decoded action token ids (3,) -> (x px, y px, gripper value)."""
    x, y, grip = bin_centres(action_ids - len(WORDS)).tolist()
    return (x + 1) / 2 * IMAGE, (y + 1) / 2 * IMAGE, grip


def attend(model: TinyVLA, scene: Scene, words: tuple[str, str, str]) -> tuple[np.ndarray, np.ndarray, torch.Tensor]:
    """The image (IMAGE, IMAGE, 3), the weights (layers, h, 4, n_patches) and the decoded action ids (3,)."""
    images = encode_batch([scene])[0]
    instructions = torch.tensor([[WORDS.index(w) for w in words]])
    with torch.no_grad():
        actions = model.act(images, instructions)
    weights = image_attention(model, images, instructions, actions)[:, 0]
    return images[0].permute(1, 2, 0).numpy(), weights.numpy(), actions[0]


def blend(image: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """The image with one query's patch weights over it: (IMAGE, IMAGE, 3) RGB.

    Each patch's weight fills its PATCH × PATCH pixels, coloured on magma from 0 to the largest
    weight, and mixed over the image with opacity OVERLAY_ALPHA.
    """
    heat = np.kron(weights.reshape(GRID, GRID), np.ones((PATCH, PATCH)))  # (IMAGE, IMAGE)
    colours = MAGMA(heat / max(float(heat.max()), 1e-9))[..., :3]
    return (1 - OVERLAY_ALPHA) * image + OVERLAY_ALPHA * colours


def overlay(ax, image: np.ndarray, weights: np.ndarray, cell: tuple[int, int] | None, action=None):
    """Draw the blended image, the named object's outline and the action's (x, y).

    Returns the artists (picture, outline, marker) so a live figure can update them.
    """
    shown = ax.imshow(blend(image, weights), extent=(0, IMAGE, IMAGE, 0), interpolation="nearest")
    outline = Rectangle((0, 0), OBJECT, OBJECT, fill=False, edgecolor="cyan", linewidth=2)
    ax.add_patch(outline)
    _place_outline(outline, cell)
    (marker,) = ax.plot([], [], "x", color="white", markersize=9, markeredgewidth=2.5)
    if action is not None:
        marker.set_data([action[0]], [action[1]])
    ax.set(xlim=(0, IMAGE), ylim=(IMAGE, 0), xticks=[], yticks=[])
    return shown, outline, marker


def _place_outline(outline: Rectangle, cell: tuple[int, int] | None) -> None:
    outline.set_visible(cell is not None)
    if cell is not None:
        outline.set_xy((cell[1] * PATCH - 0.5, cell[0] * PATCH - 0.5))
        outline.set_width(OBJECT)
        outline.set_height(OBJECT)


DIM_BELOW = 0.1  # overlay_grid dims a panel whose row gives the image less than this


def overlay_grid(model: TinyVLA, scene: Scene, title: str = ""):
    """Rows: the 4 QUERIES; columns: every (layer, head). Each panel: that head's attention on the image.

    Each panel is coloured from 0 to its own largest patch weight, so its corner prints the part
    of the whole row that lands on the image, and a panel whose row gives the image less than
    DIM_BELOW is drawn faded: its bright patch is a share of almost nothing.
    """
    image, weights, actions = attend(model, scene, scene.instruction)
    layers, heads = weights.shape[:2]
    fig, axes = plt.subplots(len(QUERIES), layers * heads, figsize=(1.45 * layers * heads, 1.55 * len(QUERIES)), layout="constrained")
    cell = scene.objects[0][2:]
    for q, query in enumerate(QUERIES):
        for layer in range(layers):
            for head in range(heads):
                ax = axes[q, layer * heads + head]
                shown, _, _ = overlay(ax, image, weights[layer, head, q], cell, action_pixels(actions) if q == 3 else None)
                on_image = float(weights[layer, head, q].sum())
                shown.set_alpha(1.0 if on_image >= DIM_BELOW else 0.3)
                ax.text(0.5, 0.5, f"{on_image:.2f}", fontsize=7, color="white", va="top", ha="left",
                        bbox={"facecolor": "black", "alpha": 0.6, "pad": 1, "linewidth": 0})
                if q == 0:
                    ax.set_title(tr(f"layer {layer}, head {head}"), fontsize=8)
                if layer == head == 0:
                    ax.set_ylabel(tr(query), fontsize=8)
    fig.suptitle(title or tr(f'"{scene.text()}"  (cyan: the named object; white ×: the decoded (x, y); '
                             f'corner: the row\'s weight on the image, faded below {DIM_BELOW})'), fontsize=9)
    return fig


def vla_explorer(models: dict[str, TinyVLA] | None = None) -> LiveFigure:
    """Scene seed, instruction (colour, shape), layer, head, query token, model -> overlay + action.

    Opens on the colour word in layer 0, head 0; the title says how much of the row lands on the
    image (the overlay is scaled to the row's largest patch weight, so it cannot show that).
    """
    models = dict(models) if models is not None else load_models()
    models.setdefault("untrained", untrained(models["causal"].config))
    config = models["causal"].config

    @lru_cache(maxsize=256)
    def compute(model: str, seed: int, colour: str, shape: str):
        scene, words, present = explorer_scene(seed, colour, shape)
        return (scene, words, present, *attend(models[model], scene, words))

    first = held_out_scenes(1, seed=10_000)[0].objects[0]
    fig = new_figure((3.6, 3.6))
    ax = fig.add_subplot()
    scene, _, _, image, weights, _ = compute("causal", 0, first[0], first[1])
    shown, outline, marker = overlay(ax, image, weights[0, 0, 0], first[2:])
    title = ax.set_title(" ", fontsize=9)  # the instruction and the query: a word the query cannot see still shows

    def update(seed, colour, shape, layer, head, query, model):
        scene, words, present, image, weights, actions = compute(model, seed, colour, shape)
        row = weights[layer, head, QUERIES.index(query)]  # (n_patches,)
        title.set_text(tr(f'"{" ".join(words)}": {query}, layer {layer}, head {head}\n'
                          f'{float(row.sum()):.0%} of the row on the image'))
        shown.set_data(blend(image, row))
        _place_outline(outline, scene.objects[0][2:] if present else None)
        x, y, grip = action_pixels(actions)
        marker.set_data([x], [y])
        share = row / max(float(row.sum()), 1e-12)
        readouts = {N_("instruction"): " ".join(words),
                    N_("named object in the image"): N_("yes") if present else N_("no (the model acts anyway)"),
                    N_("decoded action (x, y, gripper)"): f"({x:.1f} px, {y:.1f} px, {grip:+.2f})",
                    N_("image share of this query's weight"): float(row.sum())}
        if present:
            covered = object_patches(scene).numpy()
            truth = encode_batch([scene])[2][0]
            readouts[N_("all 3 action tokens right")] = N_("yes") if torch.equal(actions, truth) else N_("no")
            readouts[N_("share on the named object")] = float(share[covered[0]].sum())
            readouts[N_("share on the other objects")] = float(share[covered[1:].any(0)].sum())
            readouts[N_("chance (patches covered / all)")] = float(covered[0].sum() / covered.shape[1])
        return readouts

    toggles = lambda options, value, name: widgets.ToggleButtons(options=options, value=value, description=tr(name))  # noqa: E731
    controls = {
        "seed": widgets.IntSlider(value=0, min=0, max=N_SEEDS - 1, description=tr("scene")),
        "colour": widgets.Dropdown(options=list(COLOURS), value=first[0], description=tr("colour")),
        "shape": widgets.Dropdown(options=list(SHAPES), value=first[1], description=tr("object")),
        "layer": toggles([(tr(f"layer {i}"), i) for i in range(config.num_layers)], 0, N_("layer")),
        "head": toggles([(tr(f"head {i}"), i) for i in range(config.num_heads)], 0, N_("head")),
        "query": toggles([(tr(q), q) for q in QUERIES], QUERIES[0], N_("query")),
        "model": toggles([(tr(m), m) for m in MODELS], "causal", N_("model")),
    }
    return LiveFigure(fig, update, controls, animated=[shown, outline, marker, title])
