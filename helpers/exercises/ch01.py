"""Notebook 01 (the dot product): checkers. None of them prints the expected answer."""

import numpy as np

from helpers.checks import close, exercise, number

ME = np.array([5, 4, 1, 2])
SORA = np.array([2, 1, 4, 5])


@exercise("01.1", hint="multiply the two ratings genre by genre, then add the four products (me @ sora).")
def _dot_me_sora(answer):
    value = number(answer)
    if value == float(np.sum(ME + SORA)):
        return "that is a sum of the ratings; the dot product multiplies them pairwise first."
    return value == float(ME @ SORA)


@exercise("01.2", hint="divide the dot product by the length of each vector, np.linalg.norm.")
def _cosine_me_sora(answer):
    value = number(answer)
    if value == float(ME @ SORA):
        return "that is the dot product itself; the cosine divides it by both lengths."
    if not -1 <= value <= 1:
        return "a cosine lies between -1 and 1."
    cos = float(ME @ SORA / (np.linalg.norm(ME) * np.linalg.norm(SORA)))
    return abs(value - cos) < 1e-3


@exercise("01.3", hint="Q Kᵀ has one row per query and one column per key.")
def _cross_shape(answer):
    shape = tuple(int(s) for s in answer)
    if shape == (7, 5):
        return "rows and columns are swapped: rows are the queries (the text tokens)."
    if 8 in shape:
        return "d_k is summed over in the dot product; it does not appear in the score matrix's shape."
    return shape == (5, 7)


@exercise("01.4", hint="the score matrix is N × N; multiplying N by 4 multiplies both sides.")
def _quadratic_cost(answer):
    entries, ratio = (number(a) for a in answer)
    if entries == 1000:
        return "one score per query-key pair: every one of the N queries meets every one of the N keys."
    if entries != 1000**2:
        return "count the entries of an N × N matrix for N = 1000."
    if ratio == 4:
        return "the number of scores is right; the ratio is not: both the rows and the columns grow."
    return ratio == (4000 / 1000) ** 2


@exercise("01.5", hint="transpose only the last two axes of the keys: np.swapaxes(Kx, -2, -1) or Kx.transpose(0, 2, 1).")
def _batched_scores(answer):
    q = np.random.default_rng(5).standard_normal((2, 3, 4))
    k = np.random.default_rng(6).standard_normal((2, 3, 4))
    verdict = close(answer, q @ np.swapaxes(k, -2, -1))
    if verdict is False and close(answer, k @ np.swapaxes(q, -2, -1)) is True:
        return "that is K Qᵀ (rows are keys); the rows must be the queries."
    return verdict
