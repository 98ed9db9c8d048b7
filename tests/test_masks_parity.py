"""Every mask combination notebooks 04-05 show, against PyTorch's own attention.

helpers' convention (True = may attend) is compared with
- ``F.scaled_dot_product_attention`` (bool attn_mask True = attend; float attn_mask added),
- ``nn.MultiheadAttention`` (bool key_padding_mask / attn_mask True = BLOCKED; float added),
on random shapes, for: no mask, padding (right and left), causal, padding + causal (right and
left: left padding leaves fully-masked rows), the VLA prefix-LM mask, and random masks.

It also pins what PyTorch returns for a fully-masked row in the pinned torch version, which
notebook 05 prints and explains: if one of these fails after a torch upgrade, update the
table in notebook 05.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.testing import assert_close

from helpers import causal_mask, padding_mask, scaled_dot_product_attention

KINDS = ["none", "pad-right", "pad-left", "causal", "pad-right+causal", "pad-left+causal", "prefix-lm", "random"]
DTYPES = [torch.float32, torch.float64]


def padded_ids(g: torch.Generator, B: int, L: int, side: str) -> torch.Tensor:
    """(B, L) ids, 1..9 for real tokens and 0 for pads; at least one real token per row."""
    lengths = torch.randint(1, L + 1, (B,), generator=g)
    ids = torch.randint(1, 10, (B, L), generator=g)
    pos = torch.arange(L)
    pad = pos[None, :] >= lengths[:, None] if side == "right" else pos[None, :] < (L - lengths)[:, None]
    return ids.masked_fill(pad, 0)


def build_mask(kind: str, g: torch.Generator, B: int, L: int) -> tuple[torch.Tensor | None, torch.Tensor | None]:
    """(mask broadcastable to (B, 1, L, L) with True = may attend, or None; the ids if padded)."""
    ids = None
    mask = None
    if kind.startswith("pad"):
        ids = padded_ids(g, B, L, "left" if "left" in kind else "right")
        mask = padding_mask(ids)  # (B, 1, 1, L)
    if "causal" in kind:
        mask = causal_mask(L) if mask is None else mask & causal_mask(L)
    if kind == "prefix-lm":
        prefix = int(torch.randint(1, L + 1, (1,), generator=g))
        mask = causal_mask(L).clone()
        mask[:prefix, :prefix] = True
    if kind == "random":
        mask = torch.rand(B, 1, L, L, generator=g) > 0.4  # may hold empty rows too
    return mask, ids


def case(seed: int):
    g = torch.Generator().manual_seed(seed)
    kind = KINDS[seed % len(KINDS)]
    dtype = DTYPES[(seed // len(KINDS)) % 2]
    B, L = int(torch.randint(1, 4, (1,), generator=g)), int(torch.randint(1, 10, (1,), generator=g))
    h, d_k, d_v = (int(torch.randint(1, 9, (1,), generator=g)) for _ in range(3))
    q = torch.randn(B, h, L, d_k, generator=g, dtype=dtype) * 2
    k = torch.randn(B, h, L, d_k, generator=g, dtype=dtype) * 2
    v = torch.randn(B, h, L, d_v, generator=g, dtype=dtype)
    mask, ids = build_mask(kind, g, B, L)
    return kind, q, k, v, mask, ids


def empty_rows(mask: torch.Tensor | None, shape) -> torch.Tensor:
    """(..., L_q) True where a query row has no allowed key."""
    if mask is None:
        return torch.zeros(shape[:-1], dtype=torch.bool)
    return ~mask.expand(shape).any(-1)


@pytest.mark.parametrize("seed", range(240))
def test_sdpa_bool_and_float_masks_match_helpers(seed):
    kind, q, k, v, mask, _ = case(seed)
    ours, weights = scaled_dot_product_attention(q, k, v, mask=mask)
    assert_close(F.scaled_dot_product_attention(q, k, v, attn_mask=mask), ours)
    if mask is not None:
        additive = torch.zeros(mask.shape, dtype=q.dtype).masked_fill(~mask, float("-inf"))
        assert_close(F.scaled_dot_product_attention(q, k, v, attn_mask=additive), ours)
        assert not weights.masked_select(~mask.expand_as(weights)).any()  # blocked = exactly 0
    empty = empty_rows(mask, weights.shape)
    assert (ours[empty] == 0).all() and (weights[empty] == 0).all()  # helpers' documented zeros
    sums = weights.sum(-1)
    assert_close(sums[~empty], torch.ones_like(sums[~empty]))


@pytest.mark.parametrize("seed", range(0, 240, 3))
def test_sdpa_gradients_match_helpers(seed):
    kind, q, k, v, mask, _ = case(seed)
    q, k, v = (t.double().requires_grad_(True) for t in (q, k, v))
    ours = torch.autograd.grad(scaled_dot_product_attention(q, k, v, mask=mask)[0].square().sum(), (q, k, v))
    theirs = torch.autograd.grad(F.scaled_dot_product_attention(q, k, v, attn_mask=mask).square().sum(), (q, k, v))
    for a, b in zip(ours, theirs, strict=True):
        assert torch.isfinite(a).all()
        assert_close(a, b)


def test_is_causal_is_the_lower_triangle():
    for L in range(1, 10):
        q, k, v = (torch.randn(2, 3, L, 4) for _ in range(3))
        assert_close(F.scaled_dot_product_attention(q, k, v, is_causal=True),
                     scaled_dot_product_attention(q, k, v, mask=causal_mask(L))[0])


def test_generate_square_subsequent_mask_is_the_additive_causal_mask():
    for L in range(1, 10):
        additive = nn.Transformer.generate_square_subsequent_mask(L)
        assert torch.equal(additive == 0, causal_mask(L))
        assert torch.isneginf(additive[~causal_mask(L)]).all()


def mha_reference(mha: nn.MultiheadAttention, x: torch.Tensor, may_attend: torch.Tensor | None):
    """nn.MultiheadAttention's computation (batch_first, self-attention) with helpers' attention."""
    B, L, d = x.shape
    h = mha.num_heads
    W_q, W_k, W_v = mha.in_proj_weight.chunk(3)
    b_q, b_k, b_v = mha.in_proj_bias.chunk(3)

    def heads(t):  # (B, L, d) -> (B, h, L, d / h)
        return t.view(B, L, h, d // h).transpose(1, 2)

    q, k, v = heads(x @ W_q.T + b_q), heads(x @ W_k.T + b_k), heads(x @ W_v.T + b_v)
    out, w = scaled_dot_product_attention(q, k, v, mask=may_attend)
    return mha.out_proj(out.transpose(1, 2).reshape(B, L, d)), w.mean(dim=1)


def mha_masks(kind: str, g: torch.Generator, B: int, L: int):
    """For nn.MultiheadAttention: (an (L, L) True = may attend matrix or None, the (B, L) ids or None)."""
    ids = padded_ids(g, B, L, "left" if "left" in kind else "right") if kind.startswith("pad") else None
    square = None
    if "causal" in kind:
        square = causal_mask(L)
    if kind == "prefix-lm":
        square = causal_mask(L).clone()
        prefix = int(torch.randint(1, L + 1, (1,), generator=g))
        square[:prefix, :prefix] = True
    if kind == "random":
        square = torch.rand(L, L, generator=g) > 0.4
    return square, ids


@pytest.mark.parametrize("seed", range(160))
def test_multihead_attention_opposite_convention(seed):
    """key_padding_mask / attn_mask True = blocked; helpers True = may attend: one `~` apart."""
    g = torch.Generator().manual_seed(seed)
    kind = KINDS[seed % len(KINDS)]
    B, L = int(torch.randint(1, 4, (1,), generator=g)), int(torch.randint(1, 9, (1,), generator=g))
    h = [1, 2, 4][seed % 3]
    d = h * int(torch.randint(1, 5, (1,), generator=g))
    torch.manual_seed(seed)
    mha = nn.MultiheadAttention(d, h, batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        mha.out_proj.bias.normal_()  # make the bias visible in the comparison
    x = torch.randn(B, L, d, generator=g, dtype=torch.float64)
    square, ids = mha_masks(kind, g, B, L)

    may_attend = torch.ones(B, 1, L, L, dtype=torch.bool)  # helpers: True = may attend
    if square is not None:
        may_attend = may_attend & square
    if ids is not None:
        may_attend = may_attend & padding_mask(ids)
    want, want_w = mha_reference(mha, x, may_attend)

    kpm = None if ids is None else ids == 0  # nn.MultiheadAttention: True = pad = blocked
    attn = None if square is None else ~square  # True = blocked
    empty = ~may_attend.any(-1)[:, 0]  # (B, L) query rows with no allowed key
    with torch.no_grad():
        got, got_w = mha(x, x, x, key_padding_mask=kpm, attn_mask=attn)
        fused, _ = mha(x, x, x, key_padding_mask=kpm, attn_mask=attn, need_weights=False)
    assert_close(got[~empty], want[~empty])
    assert_close(got_w[~empty], want_w[~empty])
    assert_close(fused[~empty], want[~empty])
    # Fully-masked rows (left padding + causal, random masks) in torch 2.13: NaN with the
    # default need_weights=True; zeros from the fused path with need_weights=False, so the
    # output is the output projection's bias. helpers gives zeros before out_proj as well.
    if empty.any():
        assert torch.isnan(got[empty]).all() and torch.isnan(got_w[empty]).all()
        assert_close(fused[empty], mha.out_proj.bias.expand_as(fused[empty]))
        assert_close(want[empty], mha.out_proj.bias.expand_as(want[empty]))
    # float masks are added to the scores: the same result as the boolean ones
    if kpm is not None or attn is not None:
        f_kpm = None if kpm is None else torch.zeros(kpm.shape, dtype=x.dtype).masked_fill(kpm, float("-inf"))
        f_attn = None if attn is None else torch.zeros(attn.shape, dtype=x.dtype).masked_fill(attn, float("-inf"))
        with torch.no_grad():
            got_f, _ = mha(x, x, x, key_padding_mask=f_kpm, attn_mask=f_attn)
        assert_close(got_f[~empty], want[~empty])


def test_left_padding_causal_row_pinned_behaviour():
    """The exact case notebook 05 tabulates: two left pads under a causal mask."""
    ids = torch.tensor([[0, 0, 5, 6, 7, 8]])
    mask = padding_mask(ids) & causal_mask(6)
    q, k, v = (torch.randn(1, 1, 6, 4) for _ in range(3))
    ours, w = scaled_dot_product_attention(q, k, v, mask=mask)
    assert (ours[..., :2, :] == 0).all() and (w[..., :2, :] == 0).all()
    for attn_mask in (mask, torch.zeros(mask.shape).masked_fill(~mask, float("-inf"))):
        theirs = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask)
        assert (theirs[..., :2, :] == 0).all(), "F.sdpa no longer returns zeros for an empty row: update notebook 05"
    manual = torch.softmax((q @ k.transpose(-2, -1)).masked_fill(~mask, float("-inf")), -1)
    assert torch.isnan(manual[..., :2, :]).all()


def test_zero_one_float_mask_is_added_not_applied():
    """The trap notebook 05 shows: mask.float() passed as attn_mask blocks nothing."""
    mask = padding_mask(torch.tensor([[3, 4, 0, 0]])) & causal_mask(4)
    q, k, v = (torch.randn(1, 1, 4, 8) for _ in range(3))
    leaky = F.scaled_dot_product_attention(q, k, v, attn_mask=mask.float())
    w = torch.softmax(q @ k.transpose(-2, -1) / 8**0.5 + mask.float(), -1)
    assert_close(leaky, w @ v)
    assert (w.masked_select(~mask.expand_as(w)) > 0).all()


@pytest.mark.parametrize("seed", range(24))
def test_bottom_right_causal_mask_gives_the_last_rows_of_full_causal_attention(seed):
    """A KV-cache step or chunk: the last n_q queries against all n_k keys (notebook 05)."""
    from torch.nn.attention.bias import causal_lower_right

    g = torch.Generator().manual_seed(seed)
    n_k = int(torch.randint(1, 10, (1,), generator=g))
    n_q = int(torch.randint(1, n_k + 1, (1,), generator=g))
    q, k, v = (torch.randn(2, 3, n_k, 4, generator=g, dtype=torch.float64) for _ in range(3))
    full = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    mask = causal_mask(n_q, n_k=n_k)
    assert mask.shape == (n_q, n_k) and bool(mask[-1].all())  # the newest query sees every key
    ours, _ = scaled_dot_product_attention(q[..., -n_q:, :], k, v, mask=mask)
    assert_close(ours, full[..., -n_q:, :])
    assert_close(F.scaled_dot_product_attention(q[..., -n_q:, :], k, v, attn_mask=causal_lower_right(n_q, n_k)), ours)


def test_is_causal_aligns_top_left_when_there_are_fewer_queries_than_keys():
    """Pins the trap notebook 05 shows: one query, five keys, is_causal=True -> only key 0."""
    g = torch.Generator().manual_seed(0)
    q, k = torch.randn(1, 4, generator=g), torch.randn(5, 4, generator=g)
    weights = F.scaled_dot_product_attention(q, k, torch.eye(5), is_causal=True)
    assert torch.equal(weights, torch.tensor([[1.0, 0.0, 0.0, 0.0, 0.0]]))


@pytest.mark.parametrize("n, n_k", [(3, 2), (2, 0), (2, 2.5), (0, 3)])
def test_causal_mask_rejects_bad_lengths(n, n_k):
    with pytest.raises(ValueError, match="causal_mask"):
        causal_mask(n, n_k=n_k)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_two_additive_finfo_min_masks_leave_the_empty_rows_finite(dtype):
    """Notebook 05: padding + causal masks of finfo.min, added: no NaN, a silent average over
    pads and later tokens (only cells masked twice reach -inf)."""
    ids = torch.tensor([[0, 0, 5, 6, 7, 8]])
    lo = torch.finfo(dtype).min
    scores = torch.randn(1, 6, 6, generator=torch.Generator().manual_seed(0)).to(dtype)
    pad_key, future = (ids == 0)[:, None, :], ~causal_mask(6)
    additive = torch.zeros(1, 1, 6, dtype=dtype).masked_fill(pad_key, lo) + torch.zeros(6, 6, dtype=dtype).masked_fill(future, lo)
    w = torch.softmax(scores + additive, dim=-1)
    assert not torch.isnan(w).any()
    assert_close(w[0, 0].float(), torch.tensor([0.2, 0, 0.2, 0.2, 0.2, 0.2]), atol=1e-3, rtol=0)
    assert_close(w[0, 1].float(), torch.full((6,), 1 / 6), atol=1e-3, rtol=0)
