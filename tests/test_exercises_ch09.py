"""Notebook 09's checkers accept the right answers, reject wrong ones, and never reveal them."""

import math

import pytest

from helpers.checks import evaluate

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


@pytest.mark.parametrize("exercise_id", sorted(RIGHT))
def test_right_answer_is_accepted(exercise_id):
    assert evaluate(exercise_id, RIGHT[exercise_id]) == (True, "Correct!")


@pytest.mark.parametrize("exercise_id, wrong", [(e, w) for e, ws in WRONG.items() for w in ws])
def test_wrong_answer_is_rejected_without_revealing(exercise_id, wrong):
    correct, message = evaluate(exercise_id, wrong)
    assert not correct and "Hint" in message
    assert str(RIGHT[exercise_id]) not in message
    if (exercise_id, wrong) in HINTS:
        assert HINTS[exercise_id, wrong] in message
