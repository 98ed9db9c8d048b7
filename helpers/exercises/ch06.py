"""Notebook 06 (multi-head attention): checkers. None of them prints the expected answer."""

import torch

from helpers.checks import exercise, whole_number


@exercise("06.1", hint="W_Q, W_K, W_V and W_O are each d_model × d_model with a bias of d_model; h does not appear.")
def _bert_attention_params(answer):
    value, d = whole_number(answer), 768
    if value == 4 * d * d:
        return "those are the weights; add the four biases of d_model numbers each."
    if value == 4 * d * (d // 12) + 4 * (d // 12) or value == 4 * d * (d // 12):
        return "that is one narrow head; 12 heads of d_model / 12 together are as wide as d_model."
    if value == 3 * d * d + 3 * d:
        return "do not forget the output projection W_O."
    return value == 4 * d * d + 4 * d


@exercise("06.2", hint="the weights hold one number per (query, key) pair, for every head of every sequence; "
                        "queries are the rows.")
def _cross_weights_shape(answer):
    shape = tuple(int(s) for s in answer)
    if shape == (2, 10, 7):
        return "that is PyTorch's head-averaged shape; helpers.MultiHeadAttention keeps the heads."
    if shape == (2, 8, 7, 10):
        return "queries are rows, keys are columns: n_q comes before n_k."
    if 64 in shape or 8 in shape[2:]:
        return "the weights have no feature dimension: one number per (query, key) pair per head."
    return shape == (2, 8, 10, 7)


@exercise("06.3", hint="transpose heads and tokens back, (B, n, h, d_k), then reshape the last two axes into one.")
def _merge_heads(answer):
    if not callable(answer):
        return "pass the function itself: check(\"06.3\", my_merge_heads)."
    g = torch.Generator().manual_seed(6)
    for shape in [(2, 4, 5, 3), (1, 1, 3, 8), (3, 8, 1, 1), (2, 3, 4, 2)]:
        x = torch.randn(*shape, generator=g)
        got = answer(x)
        if not isinstance(got, torch.Tensor):
            return f"return a torch tensor; got {type(got).__name__}."
        B, h, n, d_k = shape
        want = x.transpose(1, 2).reshape(B, n, h * d_k)
        if tuple(got.shape) != tuple(want.shape):
            return f"for input {shape} the result should have shape (B, n, h · d_k); yours is {tuple(got.shape)}."
        if not torch.allclose(got, want):
            if torch.allclose(got, x.reshape(B, n, h * d_k)):
                return "right shape, wrong numbers: reshaping without transposing mixes tokens; swap h and n first."
            return "right shape, wrong numbers: token t's output should hold head 0's d_k features of t, then head 1's, ..."
    return True


@exercise("06.4", hint="each token stores one key and one value of d_k numbers per key/value head.")
def _gqa_cache(answer):
    value = whole_number(answer)
    if value == 2 * 32 * 128:
        return "that is full multi-head attention; with GQA only the g key/value heads are cached."
    if value == 8 * 128:
        return "that counts keys only; values are cached too."
    return value == 2 * 8 * 128
