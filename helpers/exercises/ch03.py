"""Notebook 03 (scaling by √d_k): checkers. None of them prints the expected answer."""

import math

import numpy as np

from helpers.checks import close, exercise, number

WORKED_Q = np.array([[1, 0, 1, 0], [0, 1, 0, 1], [1, 1, 0, 0]], dtype=float)
WORKED_K = np.array([[1, 1, 0, 0], [0, 0, 1, 1], [1, 0, 1, 0]], dtype=float)
WORKED_V = np.array([[1, 0, 0, 1], [0, 1, 1, 0], [1, 1, 0, 0]], dtype=float)


def _attention(scale: float) -> np.ndarray:
    scores = WORKED_Q @ WORKED_K.T * scale
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return (e / e.sum(axis=-1, keepdims=True)) @ WORKED_V


@exercise("03.1", hint="the variance of a score is d_k; the standard deviation is its square root. Dividing by √d_k divides the std by √d_k.")
def _std_256(answer):
    unscaled, scaled = (number(a) for a in answer)
    if unscaled == 256:
        return "256 is the variance of the unscaled score; the question asks for the standard deviation."
    if not math.isclose(unscaled, math.sqrt(256), abs_tol=1e-6):
        return "the unscaled standard deviation is not right yet: Var(q·k) = d_k, std = √Var."
    if math.isclose(scaled, 1 / 16, abs_tol=1e-6):
        return "dividing by √d_k divides the std by √d_k once, not twice."
    return math.isclose(scaled, 1.0, abs_tol=1e-6)


@exercise("03.2", hint="each product qᵢkᵢ of two independent uniform [0, 1) entries has mean E[qᵢ]·E[kᵢ]; add up d_k of them.")
def _rand_mean(answer):
    value = number(answer)
    if math.isclose(value, 100 / 2):
        return "E[qᵢkᵢ] = E[qᵢ]·E[kᵢ], and each of the two means is 0.5."
    if math.isclose(value, 0.0):
        return "0 is the mean for randn; rand's entries have mean 0.5, not 0."
    if math.isclose(value, 100 / 4, rel_tol=0.05) and not math.isclose(value, 100 / 4, abs_tol=1e-6):
        return "close: that looks like a measured (Monte-Carlo) mean; the question asks for the exact expected value."
    return math.isclose(value, 100 / 4, abs_tol=1e-6)


@exercise("03.3", hint="Var(qᵢkᵢ) = E[qᵢ²]·E[kᵢ²] when the means are 0; there are d_k independent terms.")
def _variance_sigma(answer):
    value = number(answer)
    if math.isclose(value, 64.0):
        return "64 is the answer for variance 1; here each entry has variance 4, for q and for k."
    if math.isclose(value, 64 * 4):
        return "both the query entry and the key entry have variance 4: the product's variance is 4 · 4."
    if math.isclose(value, 64 * 16, rel_tol=0.05) and not math.isclose(value, 64 * 16, abs_tol=1e-6):
        return "close: that looks like a measured (Monte-Carlo) variance; the question asks for the exact value."
    return math.isclose(value, 64 * 16, abs_tol=1e-6)


@exercise("03.4", hint="the four steps with the scale left out: weights = softmax(Q @ K.T) row by row, then weights @ V.")
def _unscaled_output(answer):
    got = np.asarray(answer.detach().cpu() if hasattr(answer, "detach") else answer, dtype=float)
    if got.shape == (3, 4) and np.allclose(got, _attention(0.5), atol=1e-4):
        return "that is the scaled output of section 1; the exercise leaves out the division by √d_k."
    if got.shape == (3, 3):
        return "those look like weights (3 × 3); the output is weights @ V, one 4-dim vector per token."
    return close(got, _attention(1.0))
