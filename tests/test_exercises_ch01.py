"""Notebook 01's checkers accept the right answer, reject wrong ones with a hint, never leak."""

import numpy as np
import torch

from helpers.checks import evaluate
from tests.exercise_harness import exercise_tests

ME, SORA, CHEOLSU = np.array([5, 4, 1, 2]), np.array([2, 1, 4, 5]), np.array([4, 5, 1, 3])


def cosine_scores(Q, K):
    """The reference answer of 01.4: unit queries times unit keys, last two axes swapped."""
    unit_q = Q / np.linalg.norm(Q, axis=-1, keepdims=True)
    unit_k = K / np.linalg.norm(K, axis=-1, keepdims=True)
    return unit_q @ np.swapaxes(unit_k, -2, -1)


def cosine_scores_torch(Q, K):
    """The same in PyTorch, returning a tensor."""
    q, k = torch.as_tensor(Q), torch.as_tensor(K)
    return torch.nn.functional.normalize(q, dim=-1) @ torch.nn.functional.normalize(k, dim=-1).transpose(-2, -1)


def cosine_scores_einsum(Q, K):
    unit_q = Q / np.linalg.norm(Q, axis=-1, keepdims=True)
    unit_k = K / np.linalg.norm(K, axis=-1, keepdims=True)
    return np.einsum("...id,...jd->...ij", unit_q, unit_k)


def raw_scores(Q, K):
    return Q @ np.swapaxes(K, -2, -1)


def with_dot_T(Q, K):  # works without a batch axis only
    return (Q / np.linalg.norm(Q, axis=-1, keepdims=True)) @ (K / np.linalg.norm(K, axis=-1, keepdims=True)).T


def keys_as_rows(Q, K):
    return np.swapaxes(cosine_scores(Q, K), -2, -1)


def only_query_length(Q, K):
    return raw_scores(Q, K) / np.linalg.norm(Q, axis=-1, keepdims=True)


def norm_over_tokens(Q, K):
    return (Q / np.linalg.norm(Q, axis=-2, keepdims=True)) @ np.swapaxes(K / np.linalg.norm(K, axis=-2, keepdims=True), -2, -1)


def forgets_return(Q, K):
    cosine_scores(Q, K)


RIGHT = {
    "01.1": ME @ SORA,
    "01.2": (ME @ SORA) / (np.linalg.norm(ME) * np.linalg.norm(SORA)),
    "01.3": float(np.sqrt(46 * 51)),
    "01.4": cosine_scores,
    "01.5": 300 * 300 * 128,
}
WRONG = {
    "01.1": [int((ME + SORA).sum()), 27, np.array([10, 4, 4, 10])],
    "01.2": [ME @ SORA, 0.5, 1.2],
    "01.3": [int(ME @ CHEOLSU), 60, 46, 51, 60.5, 40.0, 48, 48.37, 48.4],
    "01.4": [raw_scores, with_dot_T, keys_as_rows, only_query_length, norm_over_tokens, forgets_return,
             cosine_scores(np.ones((2, 3)), np.ones((4, 3)))],
    "01.5": [300 * 300, 300 * 128, 32 * 300 * 300, 32 * 300 * 300 * 128, 300 * 300 * 127, 2 * 300 * 128],
}

test_right_answers_pass, test_wrong_answers_fail_without_revealing = exercise_tests(RIGHT, WRONG)


def test_right_answers_in_other_forms_pass():
    assert evaluate("01.1", 28.0)[0] and evaluate("01.1", torch.tensor(28))[0]
    assert evaluate("01.2", round(float(RIGHT["01.2"]), 3))[0]
    assert evaluate("01.3", round(RIGHT["01.3"], 2))[0] and evaluate("01.3", torch.tensor(RIGHT["01.3"]))[0]
    assert evaluate("01.4", cosine_scores_torch)[0] and evaluate("01.4", cosine_scores_einsum)[0]
    assert evaluate("01.5", 11_520_000.0)[0]


def test_near_misses_get_their_own_hints():
    assert "3 decimals" in evaluate("01.2", round(float(RIGHT["01.2"]), 2))[1]
    for on_the_scale in (48, 48.37):  # whole stars, and ratings kept in [1, 5]
        assert "1-5" in evaluate("01.3", on_the_scale)[1]
    for one_decimal in (48.4, 48.45):  # √2346 to 1 decimal, or a digit off in the second: the method was right
        assert "2 decimals" in evaluate("01.3", one_decimal)[1]


def test_build_exercise_hints_name_the_bug():
    for wrong, words in [(raw_scores, "raw dot products"), (with_dot_T, "batch axis"),
                         (keys_as_rows, "swapped"), (only_query_length, "only one"),
                         (forgets_return, "None"), (cosine_scores(np.ones((2, 3)), np.ones((4, 3))), "function itself")]:
        correct, message = evaluate("01.4", wrong)
        assert not correct and words in message, message


def test_build_exercise_is_checked_on_fresh_inputs_every_time():
    seen = []

    def spy(Q, K):
        seen.append((Q.shape, K.shape))
        return cosine_scores(Q, K)

    for _ in range(3):
        assert evaluate("01.4", spy)[0]
    assert {len(q) for q, _ in seen} == {2, 3}, "checked without and with a batch axis"
    assert all(q[-2] != k[-2] for q, k in seen), "n_q != n_k in every case"
    assert len(set(seen)) > 2, "the shapes change from call to call"
