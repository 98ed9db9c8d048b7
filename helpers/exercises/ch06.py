"""Notebook 06 (multi-head attention): checkers. None of them prints the expected answer."""

import torch
import torch.nn.functional as F

from helpers.checks import exercise, whole_number
from helpers.exercises.ch04 import _as_shape


@exercise("06.1", hint="write down the shape of each of the four projection matrices: what goes in, and what comes out?")
def _wide_heads_params(answer):
    value, d_model, width = whole_number(answer), 1024, 32 * 128  # T5-3B: h · d_k = 4096 ≠ d_model
    if value == 4 * d_model * d_model:
        return "4 · d_model² holds only when h · d_k = d_model; here the heads together are wider than d_model."
    if value == 4 * width * width:
        return "the layer's input and output still have d_model features: each projection maps between d_model and h · d_k."
    if value == 4 * d_model * 128:
        return "that is one head; the layer has 32 of them side by side."
    if value == 3 * d_model * width:
        return "do not forget the output projection W_O."
    if value in (4 * d_model * width + 3 * width + d_model, 4 * d_model * width + 4 * d_model, 4 * d_model * width + 4 * width):
        return "T5's projections have no biases."
    return value == 4 * d_model * width


@exercise("06.2", hint="the weights hold one number per (query, key) pair, for every head of every sequence; queries are the rows.")
def _cross_weights_shape(answer):
    shape = _as_shape(answer)
    if shape is None:
        return "give the shape as a tuple of whole numbers, one per axis, such as (1, 2, 3)."
    if shape == (2, 8, 10, 10):
        return "the keys are the encoder's tokens, not the decoder's: in cross-attention n_k need not equal n_q."
    if shape == (2, 10, 7):
        return "that is PyTorch's head-averaged shape; helpers.MultiHeadAttention keeps the heads."
    if shape == (2, 10, 8, 7):
        return "those are the sizes before the transpose: the heads come right after the batch, so that each head holds one matrix of queries × keys."
    if shape == (2, 8, 7, 10):
        return "queries are rows, keys are columns: n_q comes before n_k."
    if 64 in shape or 8 in shape[2:]:
        return "the weights have no feature dimension: one number per (query, key) pair per head."
    return shape == (2, 8, 10, 7)


def _causal_mha(x, w_qkv, w_o, num_heads: int, divide_by: float, mask: str = "past", split: str = "right",
                merge: str | None = None):
    """Fused-QKV multi-head self-attention, (B, n, d_model) -> (B, n, d_model), with the variants
    learners write: ``divide_by`` the scores' divisor, ``mask`` "past"/"none"/"future"/"added" (the 0/1
    causal mask added to the scores as floats), ``split``
    "right" (view, then transpose) or "view" (straight to (B, h, n, d_k), the bug of section 2),
    ``merge`` the same two ways back (by default the way of ``split``)."""
    merge = split if merge is None else merge
    B, n, d_model = x.shape
    d_k = d_model // num_heads
    q, k, v = (x @ w_qkv).split(d_model, dim=-1)  # (B, n, d_model) each

    def heads(t):  # (B, n, d_model) -> (B, h, n, d_k)
        return t.reshape(B, num_heads, n, d_k) if split == "view" else t.view(B, n, num_heads, d_k).transpose(1, 2)

    scores = heads(q) @ heads(k).transpose(-2, -1) / divide_by  # (B, h, n, n)
    past = torch.ones(n, n, dtype=torch.bool).tril()
    if mask == "added":
        scores, allowed = scores + past.to(scores.dtype), torch.ones_like(past)
    else:
        allowed = {"past": past, "future": past.T, "none": torch.ones_like(past)}[mask]
    out = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1) @ heads(v)  # (B, h, n, d_k)
    merged = out.reshape(B, n, d_model) if merge == "view" else out.transpose(1, 2).reshape(B, n, d_model)
    return merged @ w_o


def _mha_cases():
    """Inputs the checker chooses, (x, W_qkv, W_o, h): several h > 1 first, so √d_model ≠ √d_k."""
    g = torch.Generator().manual_seed(63)
    for B, n, d_model, num_heads in ((2, 5, 12, 3), (1, 6, 16, 4), (3, 4, 8, 2), (2, 3, 8, 8), (1, 5, 6, 1)):
        x = torch.randn(B, n, d_model, generator=g, dtype=torch.float64)
        w_qkv = 1.5 * torch.randn(d_model, 3 * d_model, generator=g, dtype=torch.float64) / d_model**0.5
        w_o = torch.randn(d_model, d_model, generator=g, dtype=torch.float64) / d_model**0.5
        yield x, w_qkv, w_o, num_heads


def _mha_mistake(got, x, w_qkv, w_o, num_heads: int) -> str | None:
    """A specific hint if ``got`` is what a known mistake computes, else None."""
    d_model, d_k = x.shape[-1], x.shape[-1] // num_heads

    def made(**variant) -> bool:
        return torch.allclose(got, _causal_mha(x, w_qkv, w_o, num_heads, **variant), atol=1e-6)

    if made(divide_by=d_model**0.5):
        return "every head's scores are √h times too small, so its weights come out too flat: how many products does ONE head's dot product add up?"
    if made(divide_by=1.0):
        return "your scores are not scaled: a dot product of d features has variance d (notebook 03)."
    if made(divide_by=d_k**0.5, mask="none"):
        return "token i also sees the tokens after it: mask the scores of future keys before the softmax."
    if made(divide_by=d_k**0.5, mask="added"):
        return "a 0/1 float mask is added to the scores and blocks nothing: fill the future scores with -inf (or use a bool mask)."
    if made(divide_by=d_k**0.5, mask="future"):
        return "your mask is turned around: token i may attend to keys j ≤ i, not to the ones after it."
    if made(divide_by=d_k**0.5, split="view") or made(divide_by=d_k**0.5, split="view", merge="right"):
        return "right shape, wrong numbers: your heads mix the features of neighbouring tokens (the classic bug of section 2)."
    if made(divide_by=d_k**0.5, split="right", merge="view"):
        return "right shape, wrong numbers: your merge reads the heads straight back into (B, n, d_model), so each output row mixes neighbouring tokens (the classic bug of section 2, in the merge)."
    return None


@exercise("06.3", hint="split x W_qkv into Q, K and V, cut each into h heads, scale each head's scores, block the future, softmax over the keys, merge the heads and multiply by W_o.")
def _causal_self_attention(answer) -> bool | str:
    if not callable(answer):
        return "the answer is the function itself: check(\"06.3\", causal_self_attention)."
    for x, w_qkv, w_o, num_heads in _mha_cases():
        got = answer(x.clone(), w_qkv.clone(), w_o.clone(), num_heads)
        if got is None:
            return "causal_self_attention returns None: finish the function and return the output."
        if isinstance(got, tuple):
            return "return only the output tensor (B, n, d_model), not a tuple."
        if not isinstance(got, torch.Tensor):
            return f"return a torch tensor; got {type(got).__name__}."
        if got.shape != x.shape:
            return f"for x of shape {tuple(x.shape)} and h = {num_heads} your output has shape {tuple(got.shape)}; it should be (B, n, d_model)."
        got = got.double()
        want = _causal_mha(x, w_qkv, w_o, num_heads, divide_by=(x.shape[-1] // num_heads) ** 0.5)
        if not torch.allclose(got, want, atol=1e-6):
            return _mha_mistake(got, x, w_qkv, w_o, num_heads) or False
    return True


@exercise("06.4", hint="each token stores one key and one value of d_k numbers per key/value head.")
def _gqa_cache(answer):
    value = whole_number(answer)
    if value == 2 * 32 * 128:
        return "that is full multi-head attention; with GQA only the h_kv key/value heads are cached."
    if value == 8 * 128:
        return "that counts keys only; values are cached too."
    if value == 2 * 8 * 128 * 32:
        return "that is all 32 layers; the question asks per layer."
    if value in (2 * 8 * 128 * 2, 2 * 8 * 128 * 32 * 2):
        return "that is bytes in fp16; the question counts numbers."
    return value == 2 * 8 * 128


def _kv_cases():
    """(k, v, q, n_rep) the checker chooses; k and v come out of a transpose, as after split_heads."""
    g = torch.Generator().manual_seed(65)
    for B, h_kv, n, d_k, n_rep in ((2, 2, 5, 3, 3), (1, 4, 3, 8, 2), (3, 1, 4, 2, 4), (2, 3, 2, 4, 1), (1, 8, 6, 16, 4)):
        k, v = (torch.randn(B, n, h_kv, d_k, generator=g).transpose(1, 2) for _ in range(2))  # (B, h_kv, n, d_k)
        q = torch.randn(B, h_kv * n_rep, n + 1, d_k, generator=g)  # (B, h, n_q, d_k)
        yield k, v, q, n_rep


@exercise("06.5", hint="each KV head must appear n_rep times in a row along dim 1, so that query heads 0 … n_rep − 1 all see KV head 0; the other three axes stay as they are.")
def _repeat_kv(answer) -> bool | str:
    if not callable(answer):
        return "the answer is the function itself: check(\"06.5\", repeat_kv)."
    for k, v, q, n_rep in _kv_cases():
        got = answer(k, n_rep)
        if got is None:
            return "repeat_kv returns None: finish the function and return the repeated tensor."
        if not isinstance(got, torch.Tensor):
            return f"return a torch tensor; got {type(got).__name__}."
        B, h_kv, n, d_k = k.shape
        if got.shape != (B, h_kv * n_rep, n, d_k):
            return f"for k of shape {tuple(k.shape)} and n_rep = {n_rep} your result has shape {tuple(got.shape)}; it should be (B, h_kv · n_rep, n_k, d_k)."
        if not torch.equal(got, k.repeat_interleave(n_rep, dim=1)):
            if torch.equal(got, k.repeat(1, n_rep, 1, 1)):
                return "every KV head is there n_rep times, but in the wrong order: you tiled the whole stack, so query heads 0 and 1 see different KV heads."
            return False
        gqa = F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
        if not torch.allclose(F.scaled_dot_product_attention(q, got, answer(v, n_rep)), gqa, atol=1e-6):
            return "your repeated K and V do not give the output of F.scaled_dot_product_attention(..., enable_gqa=True)."
    return True
