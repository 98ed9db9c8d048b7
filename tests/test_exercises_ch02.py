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
    e = np.exp(s - s.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def log_softmax(s, axis=-1):
    """The reference answer of 02.2."""
    shifted = s - s.max(axis=axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))


def log_of_weights(s, axis=-1):
    return np.log(stable_softmax(s, axis))


def naive_softmax(s):
    e = np.exp(s)
    return e / e.sum()


def naive(s, axis=-1):
    return s - np.log(np.exp(s).sum(axis=axis, keepdims=True))


def global_max(s, axis=-1):
    shifted = s - s.max()
    return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))


def last_axis_only(s, axis=-1):
    return log_softmax(s, axis=-1)


def no_log_sum(s, axis=-1):
    return s - s.max(axis=axis, keepdims=True)


def forgets_return(s, axis=-1):
    log_softmax(s, axis)


def torch_wrapped(s, axis=-1):
    return torch.log_softmax(torch.from_numpy(s), dim=axis)


P = softmax(np.array([1.0, 0.0, -1.0]))
V5, G5 = np.array([[1.0, 0.0], [0.0, 2.0], [3.0, 1.0]]), np.array([1.0, -1.0])
J = np.diag(P) - np.outer(P, P)
F16_MAX = float(np.finfo(np.float16).max)
RIGHT = {
    "02.1": softmax(np.array([1.0, 2.0, 3.0])),
    "02.2": log_softmax,
    "02.3": (softmax(np.array([1000.0, 1001.0, 1002.0])), "B"),
    "02.4": math.log(F16_MAX / 300),
    "02.5": J @ V5 @ G5,
}
WRONG = {
    "02.1": [np.array([1, 2, 3]) / 6, np.exp([1.0, 2.0, 3.0]) / 10, np.array([0.2, 0.3, 0.5]), [1.0]],
    "02.2": [naive, global_max, last_axis_only, no_log_sum, log_of_weights, forgets_return, log_softmax(np.ones(3)),
             torch.log_softmax, stable_softmax],
    "02.3": [(np.array([np.nan, np.nan, np.nan]), "B"), (np.exp([-2.0, -1.0, 0.0]), "B"), (np.ones(3) / 3, "B"),
             (softmax(np.array([1000.0, 1001.0, 1002.0])), "A"), (softmax(np.array([1000.0, 1001.0, 1002.0])), "C"),
             (softmax(np.array([1000.0, 1001.0, 1002.0])), "D"), (softmax(np.array([1000.0, 1001.0, 1002.0])), "E"),
             softmax(np.array([1000.0, 1001.0, 1002.0])), (softmax(np.array([10.0, 20.0, 30.0])), "B"),
             (np.round(softmax(np.array([10.0, 20.0, 30.0])), 4), "A")],
    "02.4": [math.log(F16_MAX), math.log(float(np.finfo(np.float32).max) / 300), math.log(300),
             math.log(F16_MAX) / 300, 5.0, 5.5],
    "02.5": [J, V5 @ G5, P * (V5 @ G5), (np.diag([1.0, 0, -1]) - np.outer([1.0, 0, -1], [1.0, 0, -1])) @ V5 @ G5,
             -J @ V5 @ G5, P],
}

test_right_answers_pass, test_wrong_answers_fail_without_revealing = exercise_tests(RIGHT, WRONG)


def test_right_answers_in_other_forms_pass():
    assert evaluate("02.1", torch.softmax(torch.tensor([1.0, 2.0, 3.0]), -1))[0]
    assert evaluate("02.1", list(np.round(RIGHT["02.1"], 5)))[0]
    assert evaluate("02.2", torch_wrapped)[0]
    assert evaluate("02.4", round(RIGHT["02.4"], 2))[0] and evaluate("02.4", 5.385)[0]
    s = torch.tensor([1.0, 0.0, -1.0], dtype=torch.float64, requires_grad=True)
    (torch.softmax(s, -1) @ torch.from_numpy(V5) @ torch.from_numpy(G5)).backward()
    assert evaluate("02.5", s.grad)[0]


def test_float16_threshold_is_where_naive_softmax_turns_to_zeros():
    just_below, just_above = (np.full(300, s, dtype=np.float16) for s in (RIGHT["02.4"] - 0.01, RIGHT["02.4"] + 0.01))
    with np.errstate(over="ignore"):
        assert (naive_softmax(just_below) > 0).all() and (naive_softmax(just_above) == 0).all()


def test_build_exercise_hints_name_the_bug():
    for wrong, words in [(naive, "thousands"), (global_max, "thousands"), (last_axis_only, "axis="),
                         (no_log_sum, "log of the sum"), (log_of_weights, "underflows"), (forgets_return, "None"),
                         (log_softmax(np.ones(3)), "function itself"), (torch.log_softmax, "library")]:
        correct, message = evaluate("02.2", wrong)
        assert not correct and words in message, message


def test_score_gradient_hints_name_the_step():
    for wrong, words in [(V5 @ G5, "∂L/∂a"), (P * (V5 @ G5), "diag(a)"), (J, "one number per score"),
                         (np.round(J @ V5 @ G5, 3), "decimals")]:
        correct, message = evaluate("02.5", wrong)
        assert not correct and words in message, message


def test_a_rounded_copy_gets_its_own_hint():
    correct, message = evaluate("02.1", np.round(RIGHT["02.1"], 2))
    assert not correct and "decimals" in message
    correct, message = evaluate("02.3", (np.round(RIGHT["02.3"][0], 2), "B"))
    assert not correct and "decimals" in message


def test_correctly_rounded_answers_pass():
    """4 decimals are right even when the rounded weights do not sum to exactly 1."""
    for exercise_id, weights in (("02.1", RIGHT["02.1"]), ("02.3", RIGHT["02.3"][0])):
        rounded = np.round(weights, 4)
        answer = rounded if exercise_id == "02.1" else (rounded, "B")
        assert evaluate(exercise_id, answer)[0], rounded
    assert evaluate("02.1", [0.09, 0.2447, 0.6652])[0]
    assert evaluate("02.5", np.round(RIGHT["02.5"], 4))[0]


def test_the_reason_of_exercise_3_is_checked():
    """Each wrong choice gets a hint about its own rows: "A" pairs [1000, 1001, 1002] with
    [10, 20, 30] (their gaps differ), "C" pairs [10, 20, 30] with [1, 2, 3] (a temperature)."""
    weights = RIGHT["02.3"][0]
    hint_a = evaluate("02.3", (weights, "A"))[1]
    assert "gaps of 1" in hint_a and "gaps of 10" in hint_a and "temperature" not in hint_a
    assert "temperature" in evaluate("02.3", (weights, "C"))[1]
    assert "share" in evaluate("02.3", (weights, "D"))[1]
    assert "02.1" not in evaluate("02.3", (weights, "C"))[1]  # no pointer to an optional exercise's answer
    assert evaluate("02.3", (weights, " b "))[0] and evaluate("02.3", [weights, "B"])[0]


def test_a_function_right_for_small_scores_gets_the_thousands_hint_whatever_the_draw():
    """The checker draws fresh scores each call: over many draws, the naive formula (and one
    global maximum) always get the hint about scores in the thousands, never the axis hint."""
    for _ in range(40):
        for wrong in (naive, global_max):
            correct, message = evaluate("02.2", wrong)
            assert not correct and "thousands" in message, message


def test_the_weights_of_the_wrong_row_get_their_own_hint():
    """softmax([10, 20, 30]) with any letter: the learner computed another row of the question."""
    for letter in ("A", "B"):
        for weights in (softmax(np.array([10.0, 20.0, 30.0])), np.round(softmax(np.array([10.0, 20.0, 30.0])), 4)):
            correct, message = evaluate("02.3", (weights, letter))
            assert not correct and "weights of [10, 20, 30]" in message, message
