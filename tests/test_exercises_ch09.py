"""Notebook 09's checkers accept the right answers, reject wrong ones, and never reveal them."""

import math

import pytest

from helpers.checks import evaluate
from tests.exercise_harness import exercise_tests

L = math.exp(1 - 3) + 1 + math.exp(2 - 3)
RIGHT = {
    "09.1": 16,
    "09.2": 1024,
    "09.3": 819_200,
    "09.4": 25_204,
    "09.5": L * math.exp(-2) + 1 + math.exp(-5),
}
WRONG = {
    "09.1": [4, 8, 3],
    "09.2": [32, 2**30, 512],
    "09.3": [409_600, 20_480, 524_288],
    "09.4": [58_809, 4096, 100_000],
    "09.5": [L + 1 + math.exp(-5), L, 1.0],
}
HINTS = {("09.1", 4): "longer", ("09.2", 32): "one head", ("09.2", 2**30): "bytes",
         ("09.3", 409_600): "key and the value", ("09.4", 58_809): "70%", ("09.5", L + 1 + math.exp(-5)): "rescale"}

test_right_answers_pass, test_wrong_answers_fail_without_revealing = exercise_tests(
    RIGHT, WRONG
)


@pytest.mark.parametrize(("exercise_id", "wrong"), list(HINTS))
def test_common_mistakes_get_a_specific_hint(exercise_id, wrong):
    assert HINTS[exercise_id, wrong] in evaluate(exercise_id, wrong)[1]
