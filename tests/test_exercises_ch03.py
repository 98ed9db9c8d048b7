"""Notebook 03's checkers accept the right answer, reject wrong ones with a hint, never leak."""

import numpy as np
import torch

import helpers
from helpers.checks import evaluate
from tests.exercise_harness import exercise_tests

Q = np.array([[1, 0, 1, 0], [0, 1, 0, 1], [1, 1, 0, 0]], dtype=float)
K = np.array([[1, 1, 0, 0], [0, 0, 1, 1], [1, 0, 1, 0]], dtype=float)
V = np.array([[1, 0, 0, 1], [0, 1, 1, 0], [1, 1, 0, 0]], dtype=float)
UNSCALED, _ = helpers.scaled_dot_product_attention(Q, K, V, scale=1.0)
SCALED, WEIGHTS = helpers.scaled_dot_product_attention(Q, K, V)

RIGHT = {"03.1": (16, 1), "03.2": 25, "03.3": 1024, "03.4": UNSCALED}
WRONG = {
    "03.1": [(256, 1), (16, 1 / 16), (256, 16), (8, 1)],
    "03.2": [50, 0, 100, 12.5, 25.01],
    "03.3": [64, 256, 4096, 8, 1020.0],
    "03.4": [SCALED, WEIGHTS, UNSCALED.T[:3, :3], np.zeros((3, 4)), UNSCALED[:2]],
}

test_right_answers_pass, test_wrong_answers_fail_without_revealing = exercise_tests(
    RIGHT, WRONG
)


def test_right_answers_in_other_forms_pass():
    assert evaluate("03.1", [16.0, 1.0])[0] and evaluate("03.1", (np.sqrt(256), np.float32(1)))[0]
    assert evaluate("03.2", 25.0)[0] and evaluate("03.3", torch.tensor(1024.0))[0]
    out = torch.nn.functional.scaled_dot_product_attention(*(torch.tensor(m) for m in (Q, K, V)), scale=1.0)
    assert evaluate("03.4", out)[0]


def test_a_measured_value_gets_its_own_hint():
    for exercise_id, measured in (("03.2", 25.01), ("03.3", 1020.0)):
        correct, message = evaluate(exercise_id, measured)
        assert not correct and "Monte-Carlo" in message, message
