"""Notebook 10's checkers accept the right answers, reject wrong ones, and never reveal them."""

import torch

from helpers.toy_model import encode, load_model
from tests.exercise_harness import exercise_tests


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

test_right_answers_pass, test_wrong_answers_fail_without_revealing = exercise_tests(
    RIGHT, WRONG
)
