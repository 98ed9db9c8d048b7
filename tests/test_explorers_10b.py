"""Notebook 10b's explorer: every control swept, pictures change, no warning, no NaN (speed: `make bench`)."""


import torch

from helpers.explorers.induction import induction_explorer
from tests.widget_sweep import sweep

torch.set_num_threads(1)


def test_induction_explorer_sweeps():
    sweep(induction_explorer())


def test_induction_explorer_readouts_follow_the_heads():
    live = induction_explorer()
    live.set(seed=0, period=8, layer=1)
    assert live.readouts["accuracy on the repeats"] == 1.0
    assert len(live.readouts["block repeated"]) == 8
    scores = {}
    for layer in (0, 1):
        for head in (0, 1):
            live.set(layer=layer, head=head)
            scores[layer, head] = (live.readouts["previous-token score"], live.readouts["prefix-matching score"])
    assert min(scores[1, h][1] for h in (0, 1)) > 0.8  # both layer-1 heads match prefixes
    assert max(scores[0, h][0] for h in (0, 1)) > 0.3  # a layer-0 head looks at the previous token
    assert max(scores[0, h][1] for h in (0, 1)) < 0.3  # and none in layer 0 matches prefixes
