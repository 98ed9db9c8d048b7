"""Notebook 02 (softmax): checkers. None of them prints the expected answer."""

import math

import numpy as np

from helpers.checks import as_array, close, exercise, number


def _softmax(s: np.ndarray) -> np.ndarray:
    e = np.exp(s - s.max())
    return e / e.sum()


def _weights_check(answer, scores: np.ndarray):
    got = as_array(answer)
    if got.shape != scores.shape:
        return f"the answer should hold {scores.size} weights, one per score; yours has shape {got.shape}."
    if not np.isfinite(got).all():
        return "there is a NaN or inf in your answer: subtract the largest score before exponentiating."
    if np.allclose(got, np.exp(scores - scores.max())):
        return "you exponentiated (after the shift) but did not divide by the sum."
    want = _softmax(scores)
    verdict = close(got, want)
    if verdict is not True and np.allclose(got, want, atol=0.01):
        return "nearly: pass the computed array itself, not a copy rounded to a few decimals."
    if not np.isclose(got.sum(), 1.0, atol=1e-6):
        return "softmax weights add up to 1; yours do not."
    return verdict


@exercise("02.1", hint="exponentiate each score, then divide by the sum of the exponentials.")
def _softmax_123(answer):
    got = as_array(answer)
    if got.shape == (3,) and np.allclose(got, np.array([1, 2, 3]) / 6):
        return "dividing the scores by their sum is not softmax: exponentiate first."
    return _weights_check(answer, np.array([1.0, 2.0, 3.0]))


def _softmax_along(s: np.ndarray, axis: int) -> np.ndarray:
    e = np.exp(s - s.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _softmax_cases(rng: np.random.Generator) -> list[tuple[np.ndarray, int]]:
    """(scores, axis) pairs: 1-D to 3-D, positive and negative axes, ordinary and huge scores.

    Every case has rows of very different sizes, so subtracting one global maximum instead
    of each slice's own underflows to 0 / 0."""
    cases = [(rng.standard_normal(int(rng.integers(3, 8))), -1)]
    for ndim, axis in ((2, 0), (2, -1), (3, 1), (3, -1)):
        shape = tuple(int(v) for v in rng.integers(2, 6, size=ndim))
        across = (axis + 1) % ndim  # an axis that runs across the slices
        offsets = np.linspace(-1500.0, 1500.0, shape[across])
        scores = 3.0 * rng.standard_normal(shape) + np.expand_dims(offsets, tuple(a for a in range(ndim) if a != across))
        cases.append((scores, axis))
    return cases


@exercise("02.2", hint="subtract each slice's own maximum along `axis` (keepdims=True keeps the axis for broadcasting), exponentiate, divide by the sum along the same axis.")
def _stable_softmax_any_axis(answer):
    if not callable(answer):
        return "the answer is the function itself: answer = softmax (no brackets)."
    for scores, axis in _softmax_cases(np.random.default_rng()):
        try:
            with np.errstate(all="ignore"):
                got = answer(scores.copy(), axis=axis)
        except Exception as err:  # a learner's bug must become a hint, not a crash
            return f"your function raised {type(err).__name__} on scores of shape {scores.shape} with axis={axis}."
        if got is None:
            return "your function returns None: end it with a `return`."
        got = as_array(got)
        if got.shape != scores.shape:
            return f"for scores of shape {scores.shape} your function returned shape {got.shape}; softmax keeps the shape."
        if not np.isfinite(got).all():
            if abs(scores).max() < 100:
                return "your function returns NaN or inf even for small scores."
            return "your function returns NaN or inf when the scores are in the thousands: subtract each slice's maximum before exponentiating."
        want = _softmax_along(scores, axis)
        if np.allclose(got, want, atol=1e-9):
            continue
        if not np.allclose(got.sum(axis=axis), 1.0):
            return f"the slices along axis={axis} do not sum to 1: normalise along the axis you are given, not a fixed one."
        return False
    return True


@exercise("02.3", hint="subtract the largest score from every score, then apply the softmax formula.")
def _stable(answer):
    return _weights_check(answer, np.array([1000.0, 1001.0, 1002.0]))


@exercise("02.4", hint="n equal scores s give a sum of n · e^s: find the s where that sum passes float16's largest number, np.finfo(np.float16).max.")
def _float16_sum_threshold(answer):
    value = number(answer)
    largest, n = float(np.finfo(np.float16).max), 300
    threshold = math.log(largest / n)
    if math.isclose(value, math.log(largest), abs_tol=0.01):
        return "that is where one score overflows; here 300 terms are added up, and their sum overflows first."
    if math.isclose(value, math.log(float(np.finfo(np.float32).max) / n), abs_tol=0.01):
        return "that is the float32 threshold; the row is float16."
    if math.isclose(value, math.log(n), abs_tol=0.01):
        return "ln 300 is only part of it: the sum 300 · e^s must pass float16's largest number."
    if math.isclose(value, math.log(largest) / n, rel_tol=0.01):
        return "the 300 multiplies e^s, not s: take the logarithm of largest / 300."
    return abs(value - threshold) < 0.01


@exercise("02.5", hint="first p = softmax(s), then J = diag(p) - outer(p, p).")
def _jacobian(answer):
    got = as_array(answer)
    p = _softmax(np.array([1.0, 0.0, -1.0]))
    if got.shape != (3, 3):
        return f"the Jacobian of 3 weights by 3 scores is 3 × 3; yours has shape {got.shape}."
    if np.allclose(got, np.diag(p)):
        return "that is only diag(p); subtract the outer product p pᵀ."
    if np.allclose(got, -np.outer(p, p)) or np.allclose(got, np.outer(p, p)):
        return "that is only the outer product; J = diag(p) - p pᵀ."
    s = np.array([1.0, 0.0, -1.0])
    if np.allclose(got, np.diag(s) - np.outer(s, s)):
        return "use the softmax outputs p in the formula, not the scores s."
    return close(got, np.diag(p) - np.outer(p, p))
