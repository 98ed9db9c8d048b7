"""Notebook 06's checkers accept the right answers, reject wrong ones with a hint, and never reveal them."""

import math

import pytest
import torch
import torch.nn.functional as F

import helpers
from helpers.checks import evaluate
from tests.exercise_harness import exercise_tests


def attention(x, w_qkv, w_o, num_heads, divide_by=None, causal=True, transpose=True, merge_transpose=None):
    """Fused-QKV multi-head self-attention as a learner writes it, with switches for the usual mistakes
    (``transpose``: the split; ``merge_transpose``: the merge, by default the same as the split)."""
    B, n, d_model = x.shape
    d_k = d_model // num_heads
    merge_transpose = transpose if merge_transpose is None else merge_transpose
    q, k, v = (x @ w_qkv).split(d_model, dim=-1)
    if transpose:
        q, k, v = (t.view(B, n, num_heads, d_k).transpose(1, 2) for t in (q, k, v))
    else:  # the view bug: straight to (B, h, n, d_k)
        q, k, v = (t.reshape(B, num_heads, n, d_k) for t in (q, k, v))
    scores = q @ k.transpose(-2, -1) / (math.sqrt(d_k) if divide_by is None else divide_by(d_model, d_k))
    if causal:
        scores = scores.masked_fill(~torch.ones(n, n, dtype=torch.bool).tril(), float("-inf"))
    out = torch.softmax(scores, dim=-1) @ v
    out = out.transpose(1, 2).reshape(B, n, d_model) if merge_transpose else out.reshape(B, n, d_model)
    return out @ w_o


def attention_right(x, w_qkv, w_o, num_heads):
    return attention(x, w_qkv, w_o, num_heads)


def attention_with_helpers(x, w_qkv, w_o, num_heads):
    """The same through helpers.MultiHeadAttention with the fused weight copied in."""
    d_model = x.shape[-1]
    mha = helpers.MultiHeadAttention(d_model, num_heads, bias=False).double()
    with torch.no_grad():
        for linear, w in zip((mha.w_q, mha.w_k, mha.w_v), w_qkv.split(d_model, dim=-1), strict=True):
            linear.weight.copy_(w.T)
        mha.w_o.weight.copy_(w_o.T)
        return mha(x, x, x, mask=helpers.causal_mask(x.shape[1]))[0]


def attention_sqrt_d_model(x, w_qkv, w_o, num_heads):
    return attention(x, w_qkv, w_o, num_heads, divide_by=lambda d_model, d_k: math.sqrt(d_model))


def attention_unscaled(x, w_qkv, w_o, num_heads):
    return attention(x, w_qkv, w_o, num_heads, divide_by=lambda d_model, d_k: 1.0)


def attention_no_mask(x, w_qkv, w_o, num_heads):
    return attention(x, w_qkv, w_o, num_heads, causal=False)


def attention_added_float_mask(x, w_qkv, w_o, num_heads):  # the 0/1 float trap: the causal mask added
    B, n, d_model = x.shape
    d_k = d_model // num_heads
    q, k, v = (t.view(B, n, num_heads, d_k).transpose(1, 2) for t in (x @ w_qkv).split(d_model, dim=-1))
    scores = q @ k.transpose(-2, -1) / math.sqrt(d_k) + torch.ones(n, n, dtype=x.dtype).tril()
    return (torch.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(B, n, d_model) @ w_o


def attention_view_bug(x, w_qkv, w_o, num_heads):
    return attention(x, w_qkv, w_o, num_heads, transpose=False)


def attention_view_split_only(x, w_qkv, w_o, num_heads):
    """The view bug in the split, with section 4's merge (transpose, then reshape)."""
    return attention(x, w_qkv, w_o, num_heads, transpose=False, merge_transpose=True)


def attention_view_merge_only(x, w_qkv, w_o, num_heads):
    """The right split, merged straight back with reshape."""
    return attention(x, w_qkv, w_o, num_heads, transpose=True, merge_transpose=False)


def attention_with_weights(x, w_qkv, w_o, num_heads):
    return attention(x, w_qkv, w_o, num_heads), None


def repeat_kv_right(k, n_rep):
    B, kv_heads, n, d_k = k.shape
    return k[:, :, None].expand(B, kv_heads, n_rep, n, d_k).reshape(B, kv_heads * n_rep, n, d_k)


def repeat_kv_tiled(k, n_rep):
    return k.repeat(1, n_rep, 1, 1)


def repeat_kv_wrong_axis(k, n_rep):
    return k.repeat_interleave(n_rep, dim=2)


def repeat_kv_reversed_tokens(k, n_rep):  # permutes keys and values alike: attention alone cannot tell
    return k.repeat_interleave(n_rep, dim=1).flip(2)


RIGHT = {"06.1": 4 * 1024 * 4096, "06.2": (2, 8, 10, 7), "06.3": attention_right, "06.4": 2 * 8 * 128,
         "06.5": repeat_kv_right}
WRONG = {
    "06.1": [4 * 1024**2, 4 * 4096**2, 4 * 1024 * 128, 3 * 1024 * 4096, 4 * 1024 * 4096 + 3 * 4096 + 1024,
             4 * 1024**2 + 4 * 1024, 2.5],
    "06.2": [(2, 10, 7), (2, 8, 7, 10), (2, 8, 10, 64), (8, 10, 7), (2, 10, 8, 7), (2, 8, 10, 10), (2, 8, 10, 7.9),
             (2.0, 8.0, 10.0, 7.0), "28107"],
    "06.3": [attention_sqrt_d_model, attention_unscaled, attention_no_mask, attention_view_bug,
             attention_view_split_only, attention_view_merge_only, attention_with_weights, attention_added_float_mask, lambda x, w_qkv, w_o, h: x, lambda x, w_qkv, w_o, h: None, 3],
    "06.4": [2 * 32 * 128, 8 * 128, 2 * 8 * 4096, 2 * 8 * 128 * 32, 2 * 8 * 128 * 2, 2 * 8 * 128 * 32 * 2],
    "06.5": [repeat_kv_tiled, repeat_kv_wrong_axis, repeat_kv_reversed_tokens, lambda k, n_rep: k,
             lambda k, n_rep: k.view(k.shape[0], -1, k.shape[-1]), 2],
}

test_right_answers_pass, test_wrong_answers_fail_without_revealing = exercise_tests(
    RIGHT, WRONG, secrets={"06.3": ["sqrt(d_k)", "√d_k"], "06.5": ["repeat_interleave", "expand"]}
)


SPECIFIC = {  # wrong answer -> words its hint must contain
    ("06.1", 4 * 1024**2): "wider than d_model",
    ("06.1", 4 * 4096**2): "between d_model and h · d_k",
    ("06.1", 4 * 1024 * 4096 + 3 * 4096 + 1024): "no biases",
    ("06.2", (2, 10, 7)): "head-averaged",
    ("06.3", attention_sqrt_d_model): "√h times too small",
    ("06.3", attention_unscaled): "not scaled",
    ("06.3", attention_no_mask): "after it",
    ("06.2", (2, 10, 8, 7)): "before the transpose",
    ("06.2", (2, 8, 10, 10)): "n_k need not equal n_q",
    ("06.2", (2, 8, 10, 7.9)): "whole numbers",
    ("06.2", "28107"): "whole numbers",
    ("06.3", attention_added_float_mask): "blocks nothing",
    ("06.3", attention_view_bug): "classic bug",
    ("06.3", attention_view_split_only): "classic bug",
    ("06.3", attention_view_merge_only): "in the merge",
    ("06.3", attention_with_weights): "not a tuple",
    ("06.4", 2 * 32 * 128): "full multi-head",
    ("06.4", 2 * 8 * 128 * 32): "all 32 layers",
    ("06.4", 2 * 8 * 128 * 2): "bytes",
    ("06.4", 2 * 8 * 128 * 32 * 2): "bytes",
    ("06.5", repeat_kv_tiled): "wrong order",
    ("06.5", repeat_kv_wrong_axis): "should be (B, h_kv · n_rep, n_k, d_k)",
}


@pytest.mark.parametrize(("exercise_id", "wrong"), list(SPECIFIC))
def test_common_mistakes_get_a_specific_hint(exercise_id, wrong):
    _, message = evaluate(exercise_id, wrong)
    assert SPECIFIC[exercise_id, wrong] in message


def test_unanswered_is_not_an_error():
    for exercise_id in RIGHT:
        assert evaluate(exercise_id, ...)[0] is False


def test_helpers_multi_head_attention_passes_06_3():
    """A learner who copies the fused weight into helpers.MultiHeadAttention is right too."""
    assert evaluate("06.3", attention_with_helpers)[0]


def test_the_sqrt_d_model_bug_fails_whatever_the_mask():
    """The scale bug is caught on its own, not only when everything else is right."""
    def buggy_unmasked(x, w_qkv, w_o, num_heads):
        return attention(x, w_qkv, w_o, num_heads, divide_by=lambda d_model, d_k: math.sqrt(d_model), causal=False)

    assert evaluate("06.3", buggy_unmasked)[0] is False


def test_repeat_kv_reference_is_pytorchs_grouping():
    """The checker's reference order is the one enable_gqa=True uses (and helpers.llama)."""
    from helpers.llama import repeat_kv

    q, k, v = torch.randn(2, 6, 4, 8), torch.randn(2, 2, 5, 8), torch.randn(2, 2, 5, 8)
    gqa = F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
    torch.testing.assert_close(F.scaled_dot_product_attention(q, repeat_kv_right(k, 3), repeat_kv_right(v, 3)), gqa)
    assert evaluate("06.5", repeat_kv)[0]
