"""Notebook 10's checkers accept the right answers, reject wrong ones, and never reveal them."""

import pytest
import torch

from helpers.checks import evaluate
from helpers.toy_model import encode, load_model


def mirror(head: int, word: str = "FACADE") -> float:
    model = load_model()
    with torch.no_grad():
        model(encode(word)[None])
    i = torch.arange(len(word))
    return model.attention()[1, 0, head][i, len(word) - 1 - i].mean().item()


RIGHT = {"10.1": 3, "10.2": 8544, "10.3": "HCAEB", "10.4": mirror(1)}
WRONG = {
    "10.1": [4, 1, 2],
    "10.2": [8544 - 128, 8544 - 224, 4096],
    "10.3": ["BEACH", "HCAE", 5],
    "10.4": [mirror(0), 1.0, 0.0],
}


@pytest.mark.parametrize("exercise_id", sorted(RIGHT))
def test_right_answer_is_accepted(exercise_id):
    assert evaluate(exercise_id, RIGHT[exercise_id]) == (True, "Correct!")


@pytest.mark.parametrize("exercise_id, wrong", [(e, w) for e, ws in WRONG.items() for w in ws])
def test_wrong_answer_is_rejected_without_revealing(exercise_id, wrong):
    correct, message = evaluate(exercise_id, wrong)
    assert not correct and "Hint" in message
    assert str(RIGHT[exercise_id]) not in message
