"""Notebook 04: Q, K, V and self-attention."""

import math

import torch

from helpers.checks import exercise


def _as_shape(answer) -> tuple:
    return tuple(int(s) for s in answer)


@exercise("04.1", hint="the output has one row per query token and d_v columns, in every sentence of the batch.")
def _output_shape(answer) -> bool | str:
    shape = _as_shape(answer)
    if shape == (3, 5, 5):
        return "that is the shape of the scores (and weights); the output mixes values, so its last size is d_v."
    if shape in ((3, 5, 2), (3, 5, 16)):
        return "the output is a weighted mix of the *values*: which width do they have?"
    return shape == (3, 5, 6)


@exercise("04.2", hint="Q = x @ W_q, K = x @ W_k, V = x @ W_v; scores = Q Kᵀ / √d_k; softmax over the last dimension; then @ V.")
def _attend(answer) -> bool | str:
    if not callable(answer):
        return "the answer is the function itself: check(\"04.2\", attend)."
    g = torch.Generator().manual_seed(42)
    for n, d_model, d_k, d_v in ((5, 8, 4, 3), (1, 3, 2, 2), (7, 6, 6, 9)):
        x = torch.randn(n, d_model, generator=g, dtype=torch.float64)
        W_q, W_k = (torch.randn(d_model, d_k, generator=g, dtype=torch.float64) for _ in range(2))
        W_v = torch.randn(d_model, d_v, generator=g, dtype=torch.float64)
        got = answer(x, W_q, W_k, W_v)
        if got is None:
            return "attend returns None: finish the function and return the output."
        got = torch.as_tensor(got, dtype=torch.float64)
        q, k, v = x @ W_q, x @ W_k, x @ W_v
        want = torch.softmax(q @ k.T / math.sqrt(d_k), dim=-1) @ v
        if got.shape != want.shape:
            return f"for x of shape {tuple(x.shape)} your output has shape {tuple(got.shape)}; it should be (n, d_v)."
        if not torch.allclose(got, want, atol=1e-6):
            unscaled = torch.softmax(q @ k.T, dim=-1) @ v
            if torch.allclose(got, unscaled, atol=1e-6):
                return "close: the scores need dividing by √d_k."
            wrong_dim = torch.softmax(q @ k.T / math.sqrt(d_k), dim=0) @ v
            if torch.allclose(got, wrong_dim, atol=1e-6):
                return "the softmax runs over the wrong dimension: each query's row must sum to 1 (dim=-1)."
            return False
    return True


@exercise("04.3", hint="d_k = 768 / 12; one head has three matrices, each of shape (d_model, d_k): multiply, then add them up.")
def _vit_params(answer) -> bool | str:
    value = float(answer)
    d_model, d_k = 768, 768 // 12
    if value == d_model * d_k:
        return "that is one matrix; W_Q, W_K and W_V are three."
    if value == 3 * d_model * d_model:
        return "that is all 12 heads of a layer; the question asks for one head."
    return value == 3 * d_model * d_k


@exercise("04.4", hint="a score matrix has one entry per (query, key) pair: n × n.")
def _quadratic(answer) -> bool | str:
    value = float(answer)
    if value == 3:
        return "the sequence is 3× longer, but both the rows and the columns of the score matrix grow."
    return value == 9


@exercise("04.5", hint="self-attention: queries, keys and values come from the same sequence; cross: keys and values come from another one.")
def _self_or_cross(answer) -> bool | str:
    if not isinstance(answer, dict) or set(answer) != {"a", "b", "c"}:
        return 'give a dict with the keys "a", "b" and "c".'
    if any(value is ... for value in answer.values()):
        return 'replace each ... with "self" or "cross".'
    given = {key: str(value).strip().lower() for key, value in answer.items()}
    if any(value not in ("self", "cross") for value in given.values()):
        return 'each answer is the string "self" or "cross".'
    if given["c"] == "cross" and given["a"] == "self" and given["b"] == "cross":
        return "(c): are the patch tokens and the text tokens in different sequences in OpenVLA, or in one?"
    return given == {"a": "self", "b": "cross", "c": "self"}
