"""Notebook 06's checkers accept the right answers, reject wrong ones with a hint, and never reveal them."""

import pytest

from helpers.checks import evaluate
from tests.exercise_harness import exercise_tests


def merge_right(x):
    B, h, n, d_k = x.shape
    return x.transpose(1, 2).reshape(B, n, h * d_k)


def merge_no_transpose(x):
    B, h, n, d_k = x.shape
    return x.reshape(B, n, h * d_k)


def merge_wrong_shape(x):
    return x.transpose(1, 2)


RIGHT = {"06.1": 4 * 768**2 + 4 * 768, "06.2": (2, 8, 10, 7), "06.3": merge_right, "06.4": 2 * 8 * 128}
WRONG = {
    "06.1": [4 * 768**2, 3 * 768**2 + 3 * 768, 4 * 768 * 64, 12 * (4 * 768**2), 2.5],
    "06.2": [(2, 10, 7), (2, 8, 7, 10), (2, 8, 10, 64), (8, 10, 7)],
    "06.3": [merge_no_transpose, merge_wrong_shape, lambda x: x.numpy(), 3],
    "06.4": [2 * 32 * 128, 8 * 128, 2 * 8 * 4096],
}

test_right_answers_pass, test_wrong_answers_fail_without_revealing = exercise_tests(
    RIGHT, WRONG
)


SPECIFIC = {  # wrong answer -> words its hint must contain
    ("06.1", 4 * 768**2): "biases",
    ("06.2", (2, 10, 7)): "head-averaged",
    ("06.3", merge_no_transpose): "without transposing",
    ("06.4", 2 * 32 * 128): "full multi-head",
}


@pytest.mark.parametrize(("exercise_id", "wrong"), list(SPECIFIC))
def test_common_mistakes_get_a_specific_hint(exercise_id, wrong):
    _, message = evaluate(exercise_id, wrong)
    assert SPECIFIC[exercise_id, wrong] in message


def test_unanswered_is_not_an_error():
    for exercise_id in RIGHT:
        assert evaluate(exercise_id, ...)[0] is False
