"""Notebook 08's checkers accept the right answers, reject wrong ones, and never reveal them."""

import math

import numpy as np

from helpers.checks import evaluate
from helpers.position import sinusoidal_encoding
from tests.exercise_harness import exercise_tests

RIGHT = {
    "08.1": 577,
    "08.2": 3,
    "08.3": sinusoidal_encoding(6, 6)[5].double().numpy(),
    "08.4": 2 * math.pi * 10000 ** (510 / 512),
    "08.5": 12,
}
WRONG = {
    "08.1": [576, 257, 442, 197, 578, "many", 577.5],
    "08.2": [0, 1, 4],
    "08.3": [np.zeros(6), sinusoidal_encoding(6, 6)[4].numpy(), np.arange(3)],
    "08.4": [10000 ** (510 / 512), 10000.0, 2 * math.pi],
    "08.5": [8, 10, 5],
}

test_right_answers_pass, test_wrong_answers_fail_without_revealing = exercise_tests(
    RIGHT, WRONG
)


def test_swapped_sin_cos_gets_a_specific_hint():
    right = RIGHT["08.3"]
    swapped = right.reshape(3, 2)[:, ::-1].ravel()
    assert "order" in evaluate("08.3", swapped)[1]


def test_unanswered_is_not_an_error():
    assert evaluate("08.1", ...) == (False, "Not answered yet: replace the `...` with your answer and run the cell again.")


def test_vit_hints():
    assert "[CLS]" in evaluate("08.1", 576)[1]
    assert "224" in evaluate("08.1", 257)[1]
    assert "14 pixels" in evaluate("08.1", 442)[1]
