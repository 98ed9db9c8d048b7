"""Notebook 01 (the dot product): checkers. None of them prints the expected answer."""

import itertools
import math

import numpy as np

from helpers.checks import as_array, exercise, number, whole_number

ME = np.array([5, 4, 1, 2])
SORA = np.array([2, 1, 4, 5])
CHEOLSU = np.array([4, 5, 1, 3])


@exercise("01.1", hint="multiply the two ratings genre by genre, then add the four products.",
          code_hint="NumPy's `@` does both steps for two vectors.")
def _dot_me_sora(answer):
    value = number(answer)
    if value == float(np.sum(ME + SORA)):
        return "that is a sum of the ratings; the dot product multiplies them pairwise first."
    return value == float(ME @ SORA)


@exercise("01.2", hint="a · b = |a| |b| cos θ: solve it for cos θ.",
          code_hint="np.linalg.norm(v) is the length |v| of a vector v.")
def _cosine_me_sora(answer):
    value = number(answer)
    if value == float(ME @ SORA):
        return "that is the dot product itself; the cosine divides it by both lengths."
    if not -1 <= value <= 1:
        return "a cosine lies between -1 and 1."
    cos = float(ME @ SORA / (np.linalg.norm(ME) * np.linalg.norm(SORA)))
    if 1e-3 <= abs(value - cos) < 0.01:
        return "nearly: give at least 3 decimals (or the computed value itself)."
    return abs(value - cos) < 1e-3


def _best_on_the_scale() -> float:
    """The best score with a friend of Cheolsu's length whose ratings stay in [1, 5]: SF at 5,
    the rest of the length spread along my other three ratings."""
    rest = ME[1:] / np.linalg.norm(ME[1:]) * np.sqrt(CHEOLSU @ CHEOLSU - 5**2)
    return float(ME @ np.concatenate([[5.0], rest]))


_BEST_ON_THE_SCALE = _best_on_the_scale()
_BEST_IN_WHOLE_STARS = float(max(ME @ np.array(stars) for stars in itertools.product(range(1, 6), repeat=4)
                                  if np.dot(stars, stars) == CHEOLSU @ CHEOLSU))  # whole stars, length √51


@exercise("01.3", hint="a · b = |a| |b| cos θ: with both lengths fixed, only the angle is left to choose.")
def _best_score_at_fixed_length(answer):
    value = number(answer)
    best = float(np.linalg.norm(ME) * np.linalg.norm(CHEOLSU))
    if math.isclose(value, float(ME @ CHEOLSU)):
        return "that is Cheolsu's own score; a friend of the same length pointing in a better direction scores more."
    if math.isclose(value, float(ME @ np.full(4, 5))):
        return "that is Jun's score; his vector is longer than Cheolsu's, and the question keeps Cheolsu's length."
    if math.isclose(value, float(ME @ ME)) or math.isclose(value, float(CHEOLSU @ CHEOLSU)):
        return "that is one vector's squared length; the score involves both lengths."
    if 0.01 <= abs(value - best) < 0.06:
        return "nearly: give at least 2 decimals (or the computed value itself)."
    if value > best + 0.01:
        return "no vector of that length can score so much: cos θ is at most 1."
    if math.isclose(value, _BEST_ON_THE_SCALE, abs_tol=0.01) or math.isclose(value, _BEST_IN_WHOLE_STARS):
        return "that keeps the friend on the 1-5 rating scale; the question drops the scale: any vector of Cheolsu's length counts."
    return abs(value - best) < 0.01


def _reference_cosines(q: np.ndarray, k: np.ndarray) -> np.ndarray:
    unit_q = q / np.linalg.norm(q, axis=-1, keepdims=True)
    unit_k = k / np.linalg.norm(k, axis=-1, keepdims=True)
    return unit_q @ np.swapaxes(unit_k, -2, -1)


def _cosine_cases(rng: np.random.Generator) -> list[tuple[np.ndarray, np.ndarray]]:
    """(Q, K) pairs without and with a batch axis, n_q != n_k, random widths and lengths."""
    cases = []
    for batch in ((), (int(rng.integers(2, 5)),)):
        n_q, n_k = (int(v) for v in rng.choice(np.arange(2, 9), size=2, replace=False))
        d_k = int(rng.integers(3, 9))
        lengths_q = rng.uniform(0.5, 3.0, size=(*batch, n_q, 1))
        lengths_k = rng.uniform(0.5, 3.0, size=(*batch, n_k, 1))
        cases.append((lengths_q * rng.standard_normal((*batch, n_q, d_k)),
                      lengths_k * rng.standard_normal((*batch, n_k, d_k))))
    return cases


@exercise("01.4", hint="a cosine is the dot product of two vectors of length 1: make every query and every key length 1, then score them all against each other as in section 5.",
          code_hint="np.linalg.norm(Q, axis=-1, keepdims=True) holds each row's length, ready to divide by; np.swapaxes(K, -2, -1) transposes only the last two axes.")
def _cosine_scores(answer):
    if not callable(answer):
        return "the answer is the function itself: answer = cosine_scores (no brackets)."
    for q, k in _cosine_cases(np.random.default_rng()):
        batched = q.ndim == 3
        try:
            got = answer(q.copy(), k.copy())
        except Exception as err:  # a learner's bug must become a hint, not a crash
            if batched:
                return f"your function fails when a batch axis is in front ({type(err).__name__}); `.T` reverses every axis, swap only the last two."
            return f"your function raised {type(err).__name__} on Q of shape {q.shape} and K of shape {k.shape}."
        if got is None:
            return "your function returns None: end it with a `return`."
        got = as_array(got)
        want = _reference_cosines(q, k)
        if got.shape == want.shape[:-2] + want.shape[:-3:-1]:
            return "rows and columns are swapped: one row per query, one column per key."
        if got.shape != want.shape:
            return f"for Q of shape {q.shape} and K of shape {k.shape} your function returned shape {got.shape}; the scores need one row per query and one column per key."
        raw = q @ np.swapaxes(k, -2, -1)
        if np.allclose(got, raw):
            return "those are the raw dot products; a cosine divides each one by both lengths."
        if np.allclose(got, raw / np.linalg.norm(q, axis=-1, keepdims=True)) or np.allclose(
            got, raw / np.swapaxes(np.linalg.norm(k, axis=-1, keepdims=True), -2, -1)
        ):
            return "you divided by only one of the two lengths; divide by the query's and by the key's."
        if not np.allclose(got, want, atol=1e-8):
            if np.abs(got).max() > 1 + 1e-9:
                return "some of your values lie outside [-1, 1], which a cosine never does: each vector's length is taken over its d_k entries (the last axis)."
            return False
    return True


@exercise("01.5", hint="every entry of Q Kᵀ is one dot product of two d_k-wide vectors: count the entries, then the products inside each.")
def _multiplications(answer):
    value = whole_number(answer)
    n, d_k, heads = 300, 128, 32
    if value == n * n:
        return "that is the number of scores; each score is itself a sum of products."
    if value == n * d_k:
        return "that is the number of entries of Q, not the work of Q Kᵀ."
    if value in (heads * n * n, heads * n * n * d_k):
        return "that counts all 32 heads; the question asks about one."
    if value == n * n * (d_k - 1):
        return "that counts the additions; the question asks for the multiplications."
    return value == n * n * d_k
