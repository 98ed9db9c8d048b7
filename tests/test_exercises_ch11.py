"""Notebook 11's checkers accept the right answers, reject wrong ones, and never reveal them."""

import torch

from helpers.exercises.ch11 import ABLATED_HEADS, ABLATED_LAYER
from helpers.vla import held_out_scenes, load_models, success_rate
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


def ablated(heads) -> float:
    model = load_models()["causal"]
    return success_rate(model, held_out_scenes(200), {ABLATED_LAYER: list(heads)})


torch.set_num_threads(1)
RIGHT = {"11.1": 218_112_000, "11.2": unpatchify, "11.3": 7 * 3e9 * 2 / 3.35e12 * 1000, "11.4": ablated(ABLATED_HEADS)}
WRONG = {
    "11.1": [243_277_824, 218_112_000 - 8192, 218_112_000 - 4096 * 14336, 202_383_360],
    "11.2": [unpatchify_wrong_order, unpatchify_flat, "unpatchify"],
    "11.3": [3e9 * 2 / 3.35e12 * 1000, 7 * 3e9 / 3.35e12 * 1000, 7 * 3e9 * 4 / 3.35e12 * 1000, 0.0125],
    "11.4": [1.5, -0.1] + ([ablated(())] if ablated(()) != ablated(ABLATED_HEADS) else []),
}

test_right_answers_pass, test_wrong_answers_fail_without_revealing = exercise_tests(RIGHT, WRONG)
