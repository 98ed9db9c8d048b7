"""Notebook 11's checkers accept the right answers, reject wrong ones, and never reveal them."""

import torch

from helpers.exercises.ch11 import KNOCKED_HEAD, KNOCKED_LAYER
from helpers.vla import (
    attention_knocked_out,
    colour_word_position,
    held_out_scenes,
    load_models,
    object_patch,
    patching_pair,
    patching_recovery,
    patching_scenes,
    success_rate,
)
from tests.exercise_harness import exercise_tests


def unpatchify(patches, p, H, W):
    B, _, length = patches.shape
    C = length // (p * p)
    x = patches.reshape(B, H // p, W // p, C, p, p).permute(0, 3, 1, 4, 2, 5)
    return x.reshape(B, C, H, W)


def unpatchify_wrong_order(patches, p, H, W):
    B, _, length = patches.shape
    C = length // (p * p)
    return patches.reshape(B, H // p, W // p, C, p, p).permute(0, 3, 2, 4, 1, 5).reshape(B, C, H, W)


def unpatchify_flat(patches, p, H, W):
    return patches.reshape(patches.shape[0], -1)


def knocked_out(layer: int = KNOCKED_LAYER, head: int = KNOCKED_HEAD, other_object: int = 0) -> float:
    """Success on held_out_scenes(200) with one look forbidden: the colour word at object other_object's patch."""
    model, scenes = load_models()["causal"], held_out_scenes(200)
    with attention_knocked_out(model, layer, head, colour_word_position(model.config), object_patch(scenes, other_object)):
        return success_rate(model, scenes)


def recovered(net: str, positions) -> float:
    clean, corrupted, metric = patching_pair()
    return patching_recovery(load_models()[net], clean, corrupted, metric, 1, None, positions)


def patch_mask(k: int, scenes) -> torch.Tensor:
    mask = torch.zeros(len(scenes), 16 + 5, dtype=torch.bool)
    mask[torch.arange(len(scenes)), object_patch(scenes, k)] = True
    return mask


def distinct(values: list[float], right: float) -> list[float]:
    return [v for v in dict.fromkeys(values) if abs(v - right) > 0.02]


torch.set_num_threads(1)
CLEAN, CORRUPTED = [a for a, _ in patching_scenes()], [b for _, b in patching_scenes()]
TARGET_PATCH = recovered("prefix", patch_mask(0, CLEAN))
RIGHT = {"11.1": 218_112_000, "11.2": unpatchify, "11.3": 7 * 3e9 * 2 / 3.35e12 * 1000, "11.4": knocked_out(),
         "11.5": TARGET_PATCH, "11.6": 0.7}
WRONG = {
    "11.1": [243_277_824, 218_112_000 - 8192, 218_112_000 - 4096 * 14336, 202_383_360],
    "11.2": [unpatchify_wrong_order, unpatchify_flat, "unpatchify"],
    "11.3": [3e9 * 2 / 3.35e12 * 1000, 6 * 3e9 * 2 / 3.35e12 * 1000, 7 * 3e9 / 3.35e12 * 1000, 7 * 3e9 * 4 / 3.35e12 * 1000, 0.0125],
    "11.4": [1.5, -0.1] + distinct([  # intact, the head zeroed, a distractor's patch, another head, another layer
        success_rate(load_models()["causal"], held_out_scenes(200)),
        success_rate(load_models()["causal"], held_out_scenes(200), {KNOCKED_LAYER: [KNOCKED_HEAD]}),
        knocked_out(other_object=1), knocked_out(head=3), knocked_out(layer=1)], knocked_out()),
    "11.5": [8.3, -1.0] + distinct([  # the other object's patch, every patch, the causal model
        recovered("prefix", patch_mask(0, CORRUPTED)), recovered("prefix", list(range(16))),
        recovered("causal", patch_mask(0, CLEAN))], TARGET_PATCH),
    "11.6": [70, -0.7, 0.25, 0.3, 2.5 / 4.5, 4.5 / 5.5, 1.0, 0.0],  # a percentage, the sign, from zero, the rest, one logit, the other
}

test_right_answers_pass, test_wrong_answers_fail_without_revealing = exercise_tests(RIGHT, WRONG)


def test_knock_out_accepts_one_scene_either_way_and_says_close():
    """11.4 accepts the measured success ± one scene of 200 (the stated tolerance); nearer than 0.02 it says 'close'."""
    from helpers.exercises.ch11 import _knock_out

    right = knocked_out()
    for value in (right, right + 0.005, right - 0.005, round(right, 2)):
        assert _knock_out(value) is True, value
    for value in (right + 0.015, right - 0.015):
        hint = _knock_out(value)
        assert isinstance(hint, str) and hint.startswith("close") and f"{right:.3f}" not in hint
