"""Notebook 02's checkers accept the right answer, reject wrong ones with a hint, never leak."""

import math

import numpy as np
import torch

from helpers.checks import evaluate
from tests.exercise_harness import exercise_tests


def softmax(s):
    e = np.exp(s - s.max())
    return e / e.sum()


def stable_softmax(s, axis=-1):
    """The reference answer of 02.2."""
    e = np.exp(s - s.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def torch_softmax(s, axis=-1):
    return torch.softmax(torch.from_numpy(s), dim=axis)


def naive(s, axis=-1):
    e = np.exp(s)
    return e / e.sum(axis=axis, keepdims=True)


def global_max(s, axis=-1):
    e = np.exp(s - s.max())
    return e / e.sum(axis=axis, keepdims=True)


def last_axis_only(s, axis=-1):
    return stable_softmax(s, axis=-1)


def no_division(s, axis=-1):
    return np.exp(s - s.max(axis=axis, keepdims=True))


def forgets_return(s, axis=-1):
    stable_softmax(s, axis)


P = softmax(np.array([1.0, 0.0, -1.0]))
F16_MAX = float(np.finfo(np.float16).max)
RIGHT = {
    "02.1": softmax(np.array([1.0, 2.0, 3.0])),
    "02.2": stable_softmax,
    "02.3": softmax(np.array([1000.0, 1001.0, 1002.0])),
    "02.4": math.log(F16_MAX / 300),
    "02.5": np.diag(P) - np.outer(P, P),
}
WRONG = {
    "02.1": [np.array([1, 2, 3]) / 6, np.exp([1.0, 2.0, 3.0]) / 10, np.array([0.2, 0.3, 0.5]), [1.0]],
    "02.2": [naive, global_max, last_axis_only, no_division, forgets_return, stable_softmax(np.ones(3))],
    "02.3": [np.array([np.nan, np.nan, np.nan]), np.exp([-2.0, -1.0, 0.0]), np.ones(3) / 3],
    "02.4": [math.log(F16_MAX), math.log(float(np.finfo(np.float32).max) / 300), math.log(300),
             math.log(F16_MAX) / 300, 5.0, 5.5],
    "02.5": [np.diag(P), np.outer(P, P), np.eye(3), np.diag([1.0, 0, -1]) - np.outer([1.0, 0, -1], [1.0, 0, -1]), P],
}

test_right_answers_pass, test_wrong_answers_fail_without_revealing = exercise_tests(RIGHT, WRONG)


def test_right_answers_in_other_forms_pass():
    assert evaluate("02.1", torch.softmax(torch.tensor([1.0, 2.0, 3.0]), -1))[0]
    assert evaluate("02.1", list(np.round(RIGHT["02.1"], 5)))[0]
    assert evaluate("02.2", torch_softmax)[0]
    assert evaluate("02.4", round(RIGHT["02.4"], 2))[0] and evaluate("02.4", 5.385)[0]
    jac = torch.autograd.functional.jacobian(lambda s: torch.softmax(s, -1), torch.tensor([1.0, 0.0, -1.0]))
    assert evaluate("02.5", jac)[0]


def test_float16_threshold_is_where_naive_softmax_turns_to_zeros():
    just_below, just_above = (np.full(300, s, dtype=np.float16) for s in (RIGHT["02.4"] - 0.01, RIGHT["02.4"] + 0.01))
    with np.errstate(over="ignore"):
        assert (naive(just_below) > 0).all() and (naive(just_above) == 0).all()


def test_build_exercise_hints_name_the_bug():
    for wrong, words in [(naive, "thousands"), (global_max, "thousands"), (last_axis_only, "axis="),
                         (forgets_return, "None"), (stable_softmax(np.ones(3)), "function itself")]:
        correct, message = evaluate("02.2", wrong)
        assert not correct and words in message, message


def test_a_rounded_copy_gets_its_own_hint():
    correct, message = evaluate("02.1", np.round(RIGHT["02.1"], 2))
    assert not correct and "rounded" in message
    correct, message = evaluate("02.3", np.round(RIGHT["02.3"], 2))
    assert not correct and "rounded" in message
