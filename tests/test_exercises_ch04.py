"""Notebook 04's checkers accept the right answers, reject wrong ones, and never reveal the answer."""

import math

import torch

from helpers.checks import evaluate
from tests.exercise_harness import exercise_tests


def attend(x, W_q, W_k, W_v):
    q, k, v = x @ W_q, x @ W_k, x @ W_v
    return torch.softmax(q @ k.T / math.sqrt(k.shape[-1]), dim=-1) @ v


def attend_unscaled(x, W_q, W_k, W_v):
    q, k, v = x @ W_q, x @ W_k, x @ W_v
    return torch.softmax(q @ k.T, dim=-1) @ v


def attend_dim0(x, W_q, W_k, W_v):
    q, k, v = x @ W_q, x @ W_k, x @ W_v
    return torch.softmax(q @ k.T / math.sqrt(k.shape[-1]), dim=0) @ v


def attend_unfinished(x, W_q, W_k, W_v):
    return None


RIGHT = {
    "04.1": [(3, 5, 6), [3, 5, 6], torch.Size([3, 5, 6])],
    "04.2": [attend],
    "04.3": [147_456, 147456.0],
    "04.4": [9, 9.0],
    "04.5": [{"a": "self", "b": "cross", "c": "self"}, {"a": "Self", "b": " cross", "c": "SELF"}],
}
WRONG = {
    "04.1": [(3, 5, 5), (3, 5, 2), (3, 5, 16), (5, 6), "abc"],
    "04.2": [attend_unscaled, attend_dim0, attend_unfinished, 3],
    "04.3": [768 * 64, 3 * 768 * 768, 3 * 1024 * 64, "many"],
    "04.4": [3, 3000, 6, 16],
    "04.5": [{"a": "self", "b": "cross", "c": "cross"}, {"a": "cross", "b": "cross", "c": "self"},
             {"a": ..., "b": ..., "c": ...}, {"a": "self"}, "self"],
}
SECRETS = {"04.1": "(3, 5, 6)", "04.3": "147456", "04.4": "9"}

test_right_answers_pass, test_wrong_answers_fail_without_revealing = exercise_tests(
    RIGHT, WRONG, several_right=True, secrets={k: [v] for k, v in SECRETS.items()}
)


def test_unanswered_is_not_an_error():
    for exercise_id in RIGHT:
        assert evaluate(exercise_id, ...) == (False, evaluate("04.1", ...)[1])


def test_specific_hints():
    assert "d_v" in evaluate("04.1", (3, 5, 5))[1]
    assert "√d_k" in evaluate("04.2", attend_unscaled)[1]
    assert "dim=-1" in evaluate("04.2", attend_dim0)[1]
    assert "three" in evaluate("04.3", 768 * 64)[1]
    assert "columns" in evaluate("04.4", 3)[1]
    assert "(c)" in evaluate("04.5", {"a": "self", "b": "cross", "c": "cross"})[1]
