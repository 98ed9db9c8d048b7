"""Notebook 02 (softmax): checkers. None of them prints the expected answer."""

import math

import numpy as np
import torch

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
    if close(got, want) is True:  # right to 4 decimals, whether or not a rounded copy sums to 1 exactly
        return True
    if np.allclose(got, want, atol=0.01):
        return "nearly: give at least 4 decimals, or pass the computed array itself."
    if not np.isclose(got.sum(), 1.0, atol=1e-3):
        return "softmax weights add up to 1; yours do not."
    return False


@exercise("02.1", hint="exponentiate each score, then divide by the sum of the exponentials.")
def _softmax_123(answer):
    got = as_array(answer)
    if got.shape == (3,) and np.allclose(got, np.array([1, 2, 3]) / 6):
        return "dividing the scores by their sum is not softmax: exponentiate first."
    return _weights_check(answer, np.array([1.0, 2.0, 3.0]))


def _log_softmax_along(s: np.ndarray, axis: int) -> np.ndarray:
    """The reference: PyTorch's log_softmax along ``axis``, in float64."""
    return torch.log_softmax(torch.from_numpy(np.asarray(s, dtype=np.float64)), dim=axis).numpy()


def _log_softmax_cases(rng: np.random.Generator) -> list[tuple[np.ndarray, int]]:
    """(scores, axis) pairs: 1-D to 3-D, positive and negative axes, each twice: scores a few
    units apart inside a slice, and scores up to 10⁴ apart, where some weights underflow to 0.

    Slices sit at very different heights (±1500), so subtracting one global maximum instead of
    each slice's own underflows a whole slice to log 0."""
    cases = []
    for ndim, axis in ((1, -1), (2, 0), (2, -1), (3, 1), (3, -1)):
        shape = tuple(int(v) for v in rng.integers(2, 6, size=ndim))
        for spread in (3.0, 1e4):
            scores = spread * rng.standard_normal(shape)
            if ndim > 1:
                across = (axis + 1) % ndim  # an axis that runs across the slices
                offsets = np.linspace(-1500.0, 1500.0, shape[across])
                scores = scores + np.expand_dims(offsets, tuple(a for a in range(ndim) if a != across))
            cases.append((scores, axis))
    return cases


_LIBRARIES = ("torch", "scipy", "jax", "helpers")


@exercise("02.2", hint="log softmax(s) = s − log Σ exp(s): make the log of the sum safe the way stable_softmax made the exponentials safe, slice by slice along `axis`, and never form the weights.",
          code_hint="M = s.max(axis=axis, keepdims=True); log Σ exp(s) = M + log Σ exp(s − M).")
def _stable_log_softmax(answer):
    if not callable(answer):
        return "the answer is the function itself: answer = log_softmax (no brackets)."
    if (getattr(answer, "__module__", None) or "").split(".")[0] in _LIBRARIES:
        return "that is a library's function; the exercise is to build it from np.exp and np.log."
    for scores, axis in _log_softmax_cases(np.random.default_rng()):
        try:
            with np.errstate(all="ignore"):
                got = answer(scores.copy(), axis=axis)
        except Exception as err:  # a learner's bug must become a hint, not a crash
            return f"your function raised {type(err).__name__} on scores of shape {scores.shape} with axis={axis}."
        if got is None:
            return "your function returns None: end it with a `return`."
        got = as_array(got)
        if got.shape != scores.shape:
            return f"for scores of shape {scores.shape} your function returned shape {got.shape}; log softmax keeps the shape."
        want = _log_softmax_along(scores, axis)
        if np.allclose(got, want, rtol=1e-9, atol=1e-9):
            continue
        if not np.isfinite(got).all():
            underflow = _softmax_along(scores, axis) == 0  # weights that are exactly 0 in float64
            if np.isneginf(got[underflow]).all() and np.allclose(got[~underflow], want[~underflow], rtol=1e-9, atol=1e-9):
                return "your function returns −inf where a weight underflows to 0 (scores 10⁴ apart): the log of a weight that is already 0 cannot recover it; never form the weights."
            return "your function returns NaN or inf when the scores are in the thousands: subtract each slice's own maximum before exponentiating."
        if _right_when_small(answer, scores, axis):
            return "your function is right for small scores but not when they are in the thousands (exp overflows, or its tiny values lose their digits): subtract each slice's own maximum before exponentiating."
        if np.allclose(got, scores - scores.max(axis=axis, keepdims=True)):
            return "those are the shifted scores; log softmax also subtracts the log of the sum of their exponentials."
        with np.errstate(all="ignore"):
            if not np.allclose(np.exp(got).sum(axis=axis), 1.0):
                return f"exp of your answer does not sum to 1 along axis={axis}: normalise along the axis you are given, not a fixed one."
        return False
    return True


def _right_when_small(answer, scores: np.ndarray, axis: int) -> bool:
    """Whether ``answer`` is right once each slice is shifted to a maximum of 0: then its only
    trouble is the size of the scores."""
    small = scores - scores.max(axis=axis, keepdims=True)
    try:
        with np.errstate(all="ignore"):
            got = as_array(answer(small.copy(), axis=axis))
    except Exception:  # noqa: BLE001 - a learner's bug is diagnosed elsewhere
        return False
    return got.shape == small.shape and np.allclose(got, _log_softmax_along(small, axis), rtol=1e-9, atol=1e-9)


def _softmax_along(s: np.ndarray, axis: int) -> np.ndarray:
    e = np.exp(s - s.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


_REASONS = {  # exercise 3: which of softmax([1000, 1001, 1002]), ([10, 20, 30]) and ([1, 2, 3]) agree
    "A": "[1000, 1001, 1002] has gaps of 1 between its scores, [10, 20, 30] gaps of 10: softmax sees only the gaps.",
    "C": "[10, 20, 30] is [1, 2, 3] divided by a temperature of 0.1 (section 4): it spreads the scores apart, and the weights with them. Compare the gaps between the scores of each row.",
    "D": "two of the rows do share their weights: compare the gaps between the scores of each row (section 1 says what softmax ignores).",
}


@exercise("02.3", hint="subtract the largest score from every score, then apply the softmax formula; for the choice, compare the gaps between the scores of each row.")
def _stable(answer):
    if not isinstance(answer, tuple | list) or len(answer) != 2 or not isinstance(answer[1], str):
        return 'give two things: answer = (the 3 weights, "A", "B", "C" or "D").'
    weights, reason = answer
    got = as_array(weights)
    if got.shape == (3,) and np.isfinite(got).all() and np.allclose(got, _softmax(np.array([10.0, 20.0, 30.0])), atol=1e-4):
        return "those are the weights of [10, 20, 30]; the question asks for [1000, 1001, 1002]."
    verdict = _weights_check(weights, np.array([1000.0, 1001.0, 1002.0]))
    if verdict is not True:
        return verdict
    reason = reason.strip().upper()
    if reason not in ("A", "B", "C", "D"):
        return 'the choice is one letter: "A", "B", "C" or "D".'
    return _REASONS.get(reason, True)


@exercise("02.4", hint="n equal scores s give a sum of n · e^s: find the s where that sum passes float16's largest number.",
          code_hint="np.finfo(np.float16).max is that number; solve 300 · e^s = it for s.")
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
        return "the 300 multiplies e^s, not s."
    return abs(value - threshold) < 0.01


_S5 = np.array([1.0, 0.0, -1.0])  # scores of exercise 5
_V5 = np.array([[1.0, 0.0], [0.0, 2.0], [3.0, 1.0]])  # one 2-D value per key
_G5 = np.array([1.0, -1.0])  # L = out · g


@exercise("02.5", hint="the chain rule in two steps: first how L changes with each weight, then through the softmax Jacobian of section 5.",
          code_hint="∂L/∂a = V g (one number per key); then ∂L/∂s = J (V g) with J = diag(a) − a aᵀ at a = softmax(s).")
def _score_gradient(answer):
    got = as_array(answer)
    a, at_weights = _softmax(_S5), _V5 @ _G5
    if got.shape != (3,):
        return f"∂L/∂s has one number per score, 3 in all; your answer has shape {got.shape}."
    if np.allclose(got, at_weights):
        return "that is ∂L/∂a, the gradient at the weights; it still has to pass through the softmax Jacobian."
    if np.allclose(got, a * at_weights):
        return "that is only the diag(a) part of the Jacobian; subtract a aᵀ times the same vector."
    if np.allclose(got, (np.diag(_S5) - np.outer(_S5, _S5)) @ at_weights):
        return "use the softmax outputs a in the Jacobian, not the scores s."
    want = (np.diag(a) - np.outer(a, a)) @ at_weights
    verdict = close(got, want)
    if verdict is not True and np.allclose(got, want, atol=0.01):
        return "nearly: give at least 4 decimals, or pass the computed array itself."
    return verdict
