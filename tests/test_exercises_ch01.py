"""Notebook 01's checkers accept the right answer, reject wrong ones with a hint, never leak."""

import numpy as np
import torch

from helpers.checks import evaluate
from tests.exercise_harness import exercise_tests

ME, SORA = np.array([5, 4, 1, 2]), np.array([2, 1, 4, 5])
QX = np.random.default_rng(5).standard_normal((2, 3, 4))
KX = np.random.default_rng(6).standard_normal((2, 3, 4))

RIGHT = {
    "01.1": ME @ SORA,
    "01.2": (ME @ SORA) / (np.linalg.norm(ME) * np.linalg.norm(SORA)),
    "01.3": (5, 7),
    "01.4": (1000 * 1000, 16),
    "01.5": QX @ np.swapaxes(KX, -2, -1),
}
WRONG = {
    "01.1": [int((ME + SORA).sum()), 27, np.array([10, 4, 4, 10])],
    "01.2": [ME @ SORA, 0.5, 1.2],
    "01.3": [(7, 5), (5, 8), (5, 5)],
    "01.4": [(1000, 4), (1000**2, 4), (2000, 16)],
    "01.5": [KX @ np.swapaxes(QX, -2, -1), QX @ np.swapaxes(QX, -2, -1), np.zeros((3, 3))],
}

test_right_answers_pass, test_wrong_answers_fail_without_revealing = exercise_tests(
    RIGHT, WRONG
)


def test_right_answers_in_other_forms_pass():
    assert evaluate("01.1", 28.0)[0] and evaluate("01.1", torch.tensor(28))[0]
    assert evaluate("01.2", round(float(RIGHT["01.2"]), 3))[0]
    assert evaluate("01.3", [5, 7])[0] and evaluate("01.3", torch.Size([5, 7]))[0]
    assert evaluate("01.5", torch.from_numpy(RIGHT["01.5"]))[0]
