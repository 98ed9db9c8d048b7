"""Notebook 02's checkers accept the right answer, reject wrong ones with a hint, never leak."""

import numpy as np
import torch

from helpers.checks import evaluate
from tests.exercise_harness import exercise_tests


def softmax(s):
    e = np.exp(s - s.max())
    return e / e.sum()


P = softmax(np.array([1.0, 0.0, -1.0]))
RIGHT = {
    "02.1": softmax(np.array([1.0, 2.0, 3.0])),
    "02.2": -1,
    "02.3": softmax(np.array([1000.0, 1001.0, 1002.0])),
    "02.4": np.log(16),
    "02.5": np.diag(P) - np.outer(P, P),
}
WRONG = {
    "02.1": [np.array([1, 2, 3]) / 6, np.exp([1.0, 2.0, 3.0]) / 10, np.array([0.2, 0.3, 0.5]), [1.0]],
    "02.2": [0, 1, 2, -2, 1.5],
    "02.3": [np.array([np.nan, np.nan, np.nan]), np.exp([-2.0, -1.0, 0.0]), np.ones(3) / 3],
    "02.4": [4.0, 16, -2.77, 1 / 16],
    "02.5": [np.diag(P), np.outer(P, P), np.eye(3), np.diag([1.0, 0, -1]) - np.outer([1.0, 0, -1], [1.0, 0, -1]), P],
}

test_right_answers_pass, test_wrong_answers_fail_without_revealing = exercise_tests(
    RIGHT, WRONG
)


def test_right_answers_in_other_forms_pass():
    assert evaluate("02.1", torch.softmax(torch.tensor([1.0, 2.0, 3.0]), -1))[0]
    assert evaluate("02.1", list(np.round(RIGHT["02.1"], 5)))[0]
    assert evaluate("02.2", 3)[0] and evaluate("02.2", np.int64(-1))[0]
    assert evaluate("02.4", round(float(np.log(16)), 3))[0]
    jac = torch.autograd.functional.jacobian(lambda s: torch.softmax(s, -1), torch.tensor([1.0, 0.0, -1.0]))
    assert evaluate("02.5", jac)[0]


def test_a_rounded_copy_gets_its_own_hint():
    correct, message = evaluate("02.1", np.round(RIGHT["02.1"], 2))
    assert not correct and "rounded" in message
    correct, message = evaluate("02.3", np.round(RIGHT["02.3"], 2))
    assert not correct and "rounded" in message
