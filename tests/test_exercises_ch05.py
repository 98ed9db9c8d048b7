"""Notebook 05's checkers accept the right answers, reject wrong ones, and never reveal the answer."""

import math

import torch

import helpers
from helpers.checks import evaluate
from tests.exercise_harness import exercise_tests

TOKENS = torch.tensor([[4, 9, 2, 0], [7, 0, 0, 0]])


def attend_with_mask(q, k, v, allowed):
    scores = (q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])).masked_fill(~allowed, float("-inf"))
    return torch.softmax(scores, dim=-1).nan_to_num(0.0) @ v


def attend_with_helpers(q, k, v, allowed):
    return helpers.scaled_dot_product_attention(q, k, v, mask=allowed)[0]


def attend_nan(q, k, v, allowed):  # notebook 05's layer_with_inf: empty rows give NaN
    scores = (q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])).masked_fill(~allowed, float("-inf"))
    return torch.softmax(scores, dim=-1) @ v


def attend_large_negative(q, k, v, allowed):  # empty rows give a uniform average
    scores = (q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])).masked_fill(~allowed, -1e9)
    return torch.softmax(scores, dim=-1) @ v


def attend_inverted(q, k, v, allowed):
    return attend_with_mask(q, k, v, ~allowed)


def attend_unscaled(q, k, v, allowed):
    return attend_with_mask(q * math.sqrt(q.shape[-1]), k, v, allowed)


def attend_tuple(q, k, v, allowed):
    return helpers.scaled_dot_product_attention(q, k, v, mask=allowed)


def prefix_lm_mask(prefix_lengths, n):
    mask = torch.ones(n, n, dtype=torch.bool).tril().repeat(len(prefix_lengths), 1, 1)
    for b, p in enumerate(prefix_lengths.tolist()):
        mask[b, :p, :p] = True
    return mask[:, None]


def prefix_lm_vectorised(prefix_lengths, n):
    pos = torch.arange(n)
    inside = pos[None, :] < prefix_lengths[:, None]  # (B, n)
    return (pos[:, None] >= pos[None, :]) | (inside[:, :, None] & inside[:, None, :])[:, None]


def prefix_no_head_axis(prefix_lengths, n):
    return prefix_lm_mask(prefix_lengths, n)[:, 0]


def prefix_causal_only(prefix_lengths, n):
    return torch.ones(n, n, dtype=torch.bool).tril().expand(len(prefix_lengths), 1, n, n)


def prefix_rows_see_everything(prefix_lengths, n):  # a prefix token may look past the prefix: a leak
    mask = prefix_lm_mask(prefix_lengths, n).clone()
    for b, p in enumerate(prefix_lengths.tolist()):
        mask[b, 0, :p, :] = True
    return mask


def prefix_off_by_one(prefix_lengths, n):
    return prefix_lm_mask(prefix_lengths - 1, n)


def prefix_transposed(prefix_lengths, n):
    return prefix_lm_mask(prefix_lengths, n).transpose(-2, -1)


def prefix_inverted(prefix_lengths, n):
    return ~prefix_lm_mask(prefix_lengths, n)


RIGHT = {
    "05.1": [attend_with_mask, attend_with_helpers],
    "05.2": [prefix_lm_mask, prefix_lm_vectorised, lambda lengths, n: prefix_lm_mask(lengths, n).numpy()],
    "05.3": [{"C", "D"}, ["D", "C"], {"c", "d"}],
    "05.4": [TOKENS == 0, (TOKENS == 0).numpy(), (TOKENS == 0).int()],
    "05.5": [[0, 1, 2], (2, 1, 0), torch.tensor([0, 1, 2])],
}
WRONG = {
    "05.1": [attend_nan, attend_large_negative, attend_inverted, attend_unscaled, attend_tuple,
             lambda q, k, v, allowed: None, torch.ones(3)],
    "05.2": [prefix_no_head_axis, prefix_causal_only, prefix_rows_see_everything, prefix_off_by_one,
             prefix_transposed, prefix_inverted, lambda lengths, n: None, "mask"],
    "05.3": [{"C"}, {"B", "C", "D"}, {"C", "D", "E"}, "A", {"Z"}, set()],
    "05.4": [TOKENS != 0, helpers.padding_mask(TOKENS), torch.ones(2, 3)],
    "05.5": [[5, 6, 7], [0], [0, 1], [0, 1, 2, 3], []],
}
LEAKS = ["True, True", "[0, 1", "{'C', 'D'}", "nan_to_num", "tril"]  # parts of the right answers

test_right_answers_pass, test_wrong_answers_fail_without_revealing = exercise_tests(
    RIGHT, WRONG, several_right=True, secrets=dict.fromkeys(WRONG, LEAKS)
)


def test_specific_hints():
    assert "NaN" in evaluate("05.1", attend_nan)[1]
    assert "average" in evaluate("05.1", attend_large_negative)[1]
    assert "may attend" in evaluate("05.1", attend_inverted)[1]
    assert "√d_k" in evaluate("05.1", attend_unscaled)[1]
    assert "tuple" in evaluate("05.1", attend_tuple)[1]
    assert "head axis" in evaluate("05.2", prefix_no_head_axis)[1]
    assert "plain causal" in evaluate("05.2", prefix_causal_only)[1]
    assert "after the prefix" in evaluate("05.2", prefix_rows_see_everything)[1]
    assert "transpose" in evaluate("05.2", prefix_transposed)[1]
    assert "blocked cells" in evaluate("05.2", prefix_inverted)[1]
    assert "strictly the past" in evaluate("05.3", {"B", "C", "D"})[1]
    assert "opposite" in evaluate("05.4", TOKENS != 0)[1]
    assert "right padding" in evaluate("05.5", [5, 6, 7])[1]


def test_the_notebook_leak_answer_is_what_autograd_says():
    """05.3's expected answer, recomputed with the notebook's autograd test."""
    from helpers.qkv import QKVProjection, self_attention

    torch.manual_seed(0)
    probe, x0 = QKVProjection(8, 4, 8), torch.randn(6, 8)
    n6 = torch.ones(6, 6, dtype=torch.bool)
    masks = {
        "A": n6.tril(), "B": n6.tril(diagonal=-1), "C": n6.tril().T,
        "D": n6.tril() | torch.eye(6, dtype=torch.bool).roll(1, dims=1),
        "E": n6.tril() & helpers.padding_mask(torch.tensor([[3, 3, 3, 3, 0, 0]]))[0, 0],
    }

    def leaks(mask):
        x = x0.clone().requires_grad_(True)
        out, _ = self_attention(x, probe, mask=mask)
        grads = [torch.autograd.grad(out[t].sum(), x, retain_graph=True)[0] for t in range(6)]
        return any(g[t + 1 :].abs().max() > 0 for t, g in enumerate(grads[:-1]))

    leaking = {name for name, m in masks.items() if leaks(m)}
    assert evaluate("05.3", leaking)[0]
