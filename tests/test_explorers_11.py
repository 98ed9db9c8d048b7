"""Notebook 11's explorer: every control swept, pictures change, no warning, no NaN (speed: `make bench`)."""

import numpy as np
import torch

from helpers.explorers.vla import MODELS, attend, explorer_scene, vla_explorer
from helpers.vla import COLOURS, GRID, IMAGE, QUERIES, SHAPES, load_models
from tests.widget_sweep import sweep


def test_vla_explorer_sweeps_every_control():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        live = vla_explorer()
        sweep(live)
    finally:
        torch.set_num_threads(threads)
    assert [value for _, value in live.controls["model"].options] == list(MODELS)
    assert [value for _, value in live.controls["query"].options] == list(QUERIES)


def test_vla_explorer_readouts():
    live = vla_explorer()
    scene, words, present = explorer_scene(0, live.values["colour"], live.values["shape"])
    assert present and words[1:] == scene.objects[0][:2]
    live.set(model="causal", layer=1, query=QUERIES[1])
    assert live.readouts["named object in the image"] == "yes"
    assert live.readouts["all 3 action tokens right"] == "yes"
    assert 0 <= live.readouts["share on the named object"] <= 1
    absent = next((c, s) for c in COLOURS for s in SHAPES if (c, s) not in {o[:2] for o in scene.objects})
    live.set(colour=absent[0], shape=absent[1])
    assert live.readouts["named object in the image"].startswith("no")
    assert "share on the named object" not in live.readouts


def test_attend_returns_rows_that_are_weights():
    model = load_models()["prefix"]
    scene, words, _ = explorer_scene(3, "red", "ball")
    image, weights, actions = attend(model, scene, words)
    assert image.shape == (IMAGE, IMAGE, 3) and actions.shape == (3,)
    assert weights.shape == (2, 4, 4, GRID * GRID) and np.isfinite(weights).all()
    assert (weights.sum(-1) <= 1 + 1e-6).all()
