"""Notebook 02 (softmax): checkers. None of them prints the expected answer."""

import numpy as np

from helpers.checks import as_array, close, exercise


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


@exercise("02.2", hint="the keys are the last axis of (B, h, n_q, n_k); normalise over the keys.")
def _which_dim(answer):
    if isinstance(answer, bool) or float(answer) != int(answer):
        return "a dimension is an integer index."
    dim = int(answer)
    wrong = {0: "dim 0 is the batch: that would normalise across different sequences.",
             -4: "dim -4 is the batch: that would normalise across different sequences.",
             1: "dim 1 is the heads: that would normalise across heads.",
             -3: "dim -3 is the heads: that would normalise across heads.",
             2: "dim 2 is the queries: each key's column would sum to 1, not each query's row.",
             -2: "dim -2 is the queries: each key's column would sum to 1, not each query's row."}
    if dim in wrong:
        return wrong[dim]
    return dim in (3, -1)


@exercise("02.3", hint="subtract the largest score from every score, then apply the softmax formula.")
def _stable(answer):
    return _weights_check(answer, np.array([1000.0, 1001.0, 1002.0]))


@exercise("02.4", hint="H = -Σ p log p with p = 1/16 for each of the 16 keys, natural logarithm.")
def _uniform_entropy(answer):
    value = float(as_array(answer))
    if np.isclose(value, np.log2(16)):
        return "that is the entropy in bits (log base 2); the notebook measures in nats (natural log)."
    if value < 0:
        return "entropy is never negative: -p log p ≥ 0 for 0 ≤ p ≤ 1."
    return bool(np.isclose(value, np.log(16), atol=1e-3))


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
