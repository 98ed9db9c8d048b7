"""Notebook 05's checkers accept the right answers, reject wrong ones, and never reveal the answer."""

import math

import torch

import helpers
from helpers.checks import evaluate
from tests.exercise_harness import exercise_tests


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


def attend_added_mask(q, k, v, allowed):  # the 0/1 float trap: the mask added to the scores
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    return torch.softmax(scores + allowed.float(), dim=-1) @ v


def attend_added_mask_empty_zeroed(q, k, v, allowed):  # the same trap, empty rows set to zero
    return attend_added_mask(q, k, v, allowed) * allowed.any(-1, keepdim=True)


def attend_zeroed_after_softmax(q, k, v, allowed):  # blocks the weights, not the scores: rows no longer sum to 1
    return torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1) * allowed @ v


def attend_indexing_empty_rows(q, k, v, allowed):  # right for a full-shape mask, IndexError for a (B, 1, n_k) one
    scores = (q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])).masked_fill(~allowed, float("-inf"))
    w = torch.softmax(scores, dim=-1)
    w[~allowed.any(-1)] = 0
    return w @ v


def attend_sdpa(q, k, v, allowed):  # right numbers (zeros in empty rows), but the exercise forbids F.sdpa
    return torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=allowed)


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


def mha_attn_mask(tokens, num_heads):
    keep = helpers.padding_mask(tokens) & helpers.causal_mask(tokens.shape[-1])  # (B, 1, n, n), True = may attend
    return (~keep[:, 0]).repeat_interleave(num_heads, dim=0)


def mha_attn_mask_expand(tokens, num_heads):
    B, n = tokens.shape
    blocked = (tokens == 0)[:, None, None, :] | torch.ones(n, n, dtype=torch.bool).triu(1)  # (B, 1, n, n)
    return blocked.expand(B, num_heads, n, n).reshape(B * num_heads, n, n)


def mha_helpers_convention(tokens, num_heads):
    return ~mha_attn_mask(tokens, num_heads)


def mha_heads_tiled(tokens, num_heads):  # sequence-fastest order: torch.repeat instead of repeat_interleave
    return mha_attn_mask(tokens, 1).repeat(num_heads, 1, 1)


def mha_per_sequence(tokens, num_heads):
    return mha_attn_mask(tokens, 1)


def mha_four_d(tokens, num_heads):
    B, n = tokens.shape
    return mha_attn_mask(tokens, num_heads).view(B, num_heads, n, n)


def mha_pads_only(tokens, num_heads):
    n = tokens.shape[-1]
    return (tokens == 0)[:, None, :].expand(-1, n, -1).repeat_interleave(num_heads, dim=0)


def mha_causal_only(tokens, num_heads):
    n = tokens.shape[-1]
    return torch.ones(n, n, dtype=torch.bool).triu(1).expand(len(tokens) * num_heads, n, n)


def mha_pad_queries(tokens, num_heads):
    n = tokens.shape[-1]
    return ((tokens == 0)[:, :, None] | torch.ones(n, n, dtype=torch.bool).triu(1)).repeat_interleave(num_heads, dim=0)


def mha_past_blocked(tokens, num_heads):
    n = tokens.shape[-1]
    return ((tokens == 0)[:, None, :] | torch.ones(n, n, dtype=torch.bool).tril(-1)).repeat_interleave(num_heads, dim=0)


def additive(may_attend):
    """A bool mask (True = may attend) as an additive float one: 0 where allowed, -inf where blocked."""
    return torch.zeros(may_attend.shape).masked_fill(~may_attend, float("-inf"))


def window_empty_rows(n=10, real=4, w=3):
    ids = torch.tensor([[1] * real + [0] * (n - real)])
    window = torch.ones(n, n, dtype=torch.bool).tril() & torch.ones(n, n, dtype=torch.bool).triu(-(w - 1))
    return (~(helpers.padding_mask(ids) & window).any(-1))[0, 0].nonzero()[:, 0].tolist()


RIGHT = {
    "05.1": [attend_with_mask],
    "05.2": [prefix_lm_mask, prefix_lm_vectorised, lambda lengths, n: prefix_lm_mask(lengths, n).numpy()],
    "05.3": [{"B": [0, 1], "E": [0, 1, 2, 3, 4]}, {"e": (4, 3, 2, 1, 0), "b": torch.tensor([0, 1])},
             {"A": [], "B": [0, 1], "C": [], "E": [0, 1, 2, 3, 4]}],
    "05.4": [mha_attn_mask, mha_attn_mask_expand, lambda tokens, h: mha_attn_mask(tokens, h).numpy()],
    "05.5": [[6, 7, 8, 9], (9, 8, 7, 6), torch.tensor([6, 7, 8, 9]), window_empty_rows(), {6, 7, 8, 9}, range(6, 10)],
}
WRONG = {
    "05.1": [attend_nan, attend_large_negative, attend_inverted, attend_unscaled, attend_tuple,
             attend_added_mask, attend_added_mask_empty_zeroed, attend_indexing_empty_rows, attend_sdpa, attend_zeroed_after_softmax,
             attend_with_helpers, lambda q, k, v, allowed: None, torch.ones(3)],
    "05.2": [prefix_no_head_axis, prefix_causal_only, prefix_rows_see_everything, prefix_off_by_one,
             prefix_transposed, prefix_inverted, lambda lengths, n: None, "mask",
             lambda lengths, n: prefix_lm_mask(lengths, n).float(), lambda lengths, n: prefix_lm_mask(lengths, n).int(),
             lambda lengths, n: additive(prefix_lm_mask(lengths, n))],
    "05.3": [{"B": [0, 1]}, {"B": [0, 1], "C": [0], "E": [0, 1, 2, 3, 4]}, {"B": [0, 1], "E": [0, 1, 2, 3, 4, 5]},
             {"B": [0, 1, 2], "E": [0, 1, 2, 3, 4]}, {"B", "E"}, "A", {"Z": [1]}, {}, {"B": "x"}, {"C": []},
             {"A": [5], "B": [0, 1], "E": [0, 1, 2, 3, 4]}, {"B": [0, 1], "D": [4], "E": [0, 1, 2, 3, 4]}],
    "05.4": [mha_helpers_convention, mha_heads_tiled, mha_per_sequence, mha_four_d, mha_pads_only, mha_causal_only,
             mha_pad_queries, mha_past_blocked, lambda tokens, h: None, torch.ones(2, 3),
             lambda tokens, h: mha_attn_mask(tokens, h).float(), lambda tokens, h: (~mha_attn_mask(tokens, h)).float(),
             lambda tokens, h: mha_attn_mask(tokens, h).int(), lambda tokens, h: additive(~mha_attn_mask(tokens, h))],
    "05.5": [[], [0, 1, 2, 3, 4, 5], [4, 5, 6, 7, 8, 9], [5, 6, 7, 8, 9], [7, 8, 9], [0, 1, 2], [9], {6, 7, 8},
             torch.arange(10) >= 6, [6.0, 7.0, 8.0, 9.0], "6, 7, 8, 9"],
}
LEAKS = ["True, True", "[0, 1", "'B'", "'E'", "nan_to_num", "tril", "[6, 7", "repeat_interleave"]  # parts of the right answers

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
    assert "adds the mask" in evaluate("05.1", attend_added_mask)[1]
    assert "adds the mask" in evaluate("05.1", attend_added_mask_empty_zeroed)[1]
    assert "broadcasts" in evaluate("05.1", attend_indexing_empty_rows)[1]
    assert "before it" in evaluate("05.1", attend_zeroed_after_softmax)[1]
    for fused in (attend_sdpa, attend_with_helpers):
        assert "without helpers" in evaluate("05.1", fused)[1]
    for not_leaking in ({"B": [0, 1], "C": [0], "E": [0, 1, 2, 3, 4]}, {"A": [5], "B": [0, 1], "E": [0, 1, 2, 3, 4]},
                        {"B": [0, 1], "D": [4], "E": [0, 1, 2, 3, 4]}):  # one hint for any letter: no answer by elimination
        assert "one of your letters does not leak" in evaluate("05.3", not_leaking)[1]
    assert "missing" in evaluate("05.3", {"C": []})[1]  # an empty list is no claim of a leak
    assert "the masks are right" in evaluate("05.3", {"B": [0, 1, 2], "E": [0, 1, 2, 3, 4]})[1]
    assert "dict" in evaluate("05.3", {"B", "E"})[1]
    assert "opposite" in evaluate("05.4", mha_helpers_convention)[1]
    assert "wrong order" in evaluate("05.4", mha_heads_tiled)[1]
    assert "*and* head" in evaluate("05.4", mha_per_sequence)[1]
    assert "3-D" in evaluate("05.4", mha_four_d)[1]
    assert "not the future" in evaluate("05.4", mha_pads_only)[1]
    assert "not the pad keys" in evaluate("05.4", mha_causal_only)[1]
    assert "*queries*" in evaluate("05.4", mha_pad_queries)[1]
    assert "blocks the past" in evaluate("05.4", mha_past_blocked)[1]
    assert "window" in evaluate("05.5", [])[1]
    for float_mask in (lambda t, h: mha_attn_mask(t, h).float(), lambda t, h: (~mha_attn_mask(t, h)).float()):
        assert "adds" in evaluate("05.4", float_mask)[1] and "bool" in evaluate("05.4", float_mask)[1]
    assert "adds" in evaluate("05.2", lambda lengths, n: prefix_lm_mask(lengths, n).float())[1]
    assert "additive float mask" in evaluate("05.2", lambda lengths, n: additive(prefix_lm_mask(lengths, n)))[1]
    assert "True = blocked" in evaluate("05.4", lambda t, h: additive(~mha_attn_mask(t, h)))[1]
    assert "off by one" in evaluate("05.5", [5, 6, 7, 8, 9])[1]
    assert "not one True/False per row" in evaluate("05.5", torch.arange(10) >= 6)[1]  # flags, as ~mask.any(-1) gives
    for not_indices in ("6, 7, 8, 9", [6.0, 7.0, 8.0, 9.0]):
        assert "whole numbers" in evaluate("05.5", not_indices)[1]


def test_the_notebook_leak_answer_is_what_autograd_says():
    """05.3's expected answer, recomputed with the notebook's autograd test, row by row."""
    from helpers.exercises.ch05 import leak_candidates
    from helpers.qkv import QKVProjection, self_attention

    torch.manual_seed(0)
    probe, x0 = QKVProjection(8, 4, 8), torch.randn(6, 8)

    def leaking_rows(mask):  # notebook 05's test: a nonzero Jacobian block of output i w.r.t. a later input j
        J = torch.autograd.functional.jacobian(lambda x: self_attention(x, probe, mask=mask)[0], x0)  # (6, 8, 6, 8)
        return (J.pow(2).sum(dim=(1, 3)).sqrt().triu(diagonal=1) > 0).any(-1).nonzero()[:, 0].tolist()

    answer = {name: rows for name, m in leak_candidates().items() if (rows := leaking_rows(m))}
    assert evaluate("05.3", answer)[0], answer


def test_the_notebook_builds_the_checker_s_masks():
    """05.3's masks in the notebook cell are the checker's (and none is one of the leaks the notebook shows)."""
    from helpers.exercises.ch05 import leak_candidates

    n6 = torch.ones(6, 6, dtype=torch.bool)
    shown = [n6.tril(diagonal=1), n6.triu(), n6]  # the leaking masks notebook 05 draws before the exercise
    candidates = leak_candidates()
    assert torch.equal(candidates["D"], n6.tril() & helpers.padding_mask(torch.tensor([[3, 3, 3, 3, 0, 0]]))[0, 0])
    assert not any(torch.equal(m, s) for m in candidates.values() for s in shown)


def test_mha_attn_mask_matches_separate_masks_in_nn_multihead_attention():
    """05.4's right answer, run: one (B·h, n, n) attn_mask == key_padding_mask + causal attn_mask."""
    torch.manual_seed(0)
    mha = torch.nn.MultiheadAttention(embed_dim=8, num_heads=2, batch_first=True).eval()
    tokens = torch.tensor([[5, 3, 2, 0, 0], [4, 0, 0, 0, 0], [1, 2, 3, 4, 5]])
    x = torch.randn(3, 5, 8)
    with torch.no_grad():
        want, _ = mha(x, x, x, key_padding_mask=tokens == 0, attn_mask=~helpers.causal_mask(5))
        got, _ = mha(x, x, x, attn_mask=mha_attn_mask(tokens, 2))
        tiled, _ = mha(x, x, x, attn_mask=mha_heads_tiled(tokens, 2))
    torch.testing.assert_close(got, want)
    assert not torch.allclose(tiled, want)  # the other order mixes up the sequences' masks
