"""helpers.softmax and helpers.scaled_dot_product_attention against PyTorch's own."""

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch.testing import assert_close

from helpers import causal_mask, padding_mask, scaled_dot_product_attention, softmax

DTYPES = [torch.float32, torch.float64]
MASK_KINDS = ["none", "padding", "causal", "padding+causal", "random"]


def random_case(seed: int):
    """Random shapes (0-2 batch dims), dtype, scale, mask kind and input kind, from one seed."""
    g = torch.Generator().manual_seed(seed)

    def rand(lo: int, hi: int) -> int:
        return int(torch.randint(lo, hi + 1, (1,), generator=g))

    kind = MASK_KINDS[seed % len(MASK_KINDS)]
    batch = tuple(rand(1, 3) for _ in range(rand(0, 2)))
    n_q, n_k = rand(1, 9), rand(1, 9)  # cross-attention shapes: n_q may differ from n_k
    if "causal" in kind:
        n_k = n_q
    if "padding" in kind:
        batch = (rand(1, 3), 1)  # (B, heads=1); the padding mask is (B, 1, 1, n_k)
    d_k, d_v = rand(1, 16), rand(1, 16)
    dtype = DTYPES[seed % 2]
    q = torch.randn(*batch, n_q, d_k, generator=g, dtype=dtype) * 3
    k = torch.randn(*batch, n_k, d_k, generator=g, dtype=dtype) * 3
    v = torch.randn(*batch, n_k, d_v, generator=g, dtype=dtype)
    mask = causal_mask(n_q) if "causal" in kind else None
    if "padding" in kind:
        lengths = torch.randint(1, n_k + 1, (batch[0], 1), generator=g)
        tokens = (torch.arange(n_k) < lengths).long()  # (B, n_k): 1 = real token, 0 = pad
        mask = padding_mask(tokens) if mask is None else padding_mask(tokens) & mask
    if kind == "random":
        mask = torch.rand(n_q, n_k, generator=g) > 0.3
        mask[:, 0] = True  # keep every row non-empty here; empty rows are tested below
    scale = None if seed % 3 else float(torch.rand(1, generator=g)) + 0.1
    return q, k, v, mask, scale


@pytest.mark.parametrize("seed", range(300))
def test_sdpa_matches_pytorch(seed):
    q, k, v, mask, scale = random_case(seed)
    want = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=scale)
    if seed % 4 == 0:  # numpy in, numpy out
        args = [t.numpy() for t in (q, k, v)]
        out, weights = scaled_dot_product_attention(*args, mask=None if mask is None else mask.numpy(), scale=scale)
        assert isinstance(out, np.ndarray) and out.dtype == args[0].dtype
        out, weights = torch.from_numpy(out), torch.from_numpy(weights)
    else:
        out, weights = scaled_dot_product_attention(q, k, v, mask=mask, scale=scale)
        assert isinstance(out, torch.Tensor) and out.dtype == q.dtype
    assert_close(out, want)
    assert_close(weights.sum(-1), torch.ones_like(weights.sum(-1)))
    if mask is not None:
        assert not weights.masked_select(~mask.expand_as(weights)).any()


@pytest.mark.parametrize("seed", range(100))
def test_softmax_matches_torch(seed):
    g = torch.Generator().manual_seed(seed)
    shape = tuple(int(s) for s in torch.randint(1, 6, (1 + seed % 4,), generator=g))
    x = torch.randn(shape, generator=g, dtype=DTYPES[seed % 2]) * 10 ** (seed % 4)
    axis = int(torch.randint(-len(shape), len(shape), (1,), generator=g))
    assert_close(softmax(x, axis=axis), torch.softmax(x, dim=axis))
    got = softmax(x.numpy(), axis=axis)
    assert isinstance(got, np.ndarray)
    assert_close(torch.from_numpy(got), torch.softmax(x, dim=axis))


def test_softmax_huge_scores_do_not_overflow():
    for kind in (np.array, torch.tensor):
        p = softmax(kind([1e4, 0.0, -1e4]))
        assert np.isfinite(np.asarray(p)).all()
        assert_close(torch.as_tensor(p), torch.tensor([1.0, 0.0, 0.0], dtype=torch.as_tensor(p).dtype))


def test_softmax_of_lists_and_ints():
    assert_close(torch.from_numpy(softmax([2, -2, 0])), torch.softmax(torch.tensor([2.0, -2.0, 0.0], dtype=torch.float64), 0))
    assert softmax(torch.tensor([1, 2])).dtype == torch.get_default_dtype()


def test_sdpa_huge_scores_do_not_overflow():
    q = torch.full((2, 4), 1e3)
    out, w = scaled_dot_product_attention(q, q, torch.randn(2, 3))
    assert torch.isfinite(out).all() and torch.isfinite(w).all()


@pytest.mark.parametrize("as_numpy", [False, True])
def test_fully_masked_row_gives_zeros_not_nan(as_numpy):
    # left padding under a causal mask: the first query may see nothing
    tokens = torch.tensor([[0, 0, 5, 6]])
    mask = padding_mask(tokens) & causal_mask(4)  # (1, 1, 4, 4)
    q, k, v = (torch.randn(1, 1, 4, 8, dtype=torch.float64) for _ in range(3))
    if as_numpy:
        q, k, v, mask = q.numpy(), k.numpy(), v.numpy(), mask.numpy()
    out, w = scaled_dot_product_attention(q, k, v, mask=mask)
    out, w = torch.as_tensor(out), torch.as_tensor(w)
    assert not torch.isnan(out).any() and not torch.isnan(w).any()
    assert (w[..., :2, :] == 0).all() and (out[..., :2, :] == 0).all()
    assert_close(w[..., 2:, :].sum(-1), torch.ones(1, 1, 2, dtype=torch.float64))


def test_fully_masked_row_has_zero_gradient_not_nan():
    q = torch.randn(3, 4, requires_grad=True)
    mask = torch.tensor([[False, False, False], [True, False, False], [True, True, True]])
    out, _ = scaled_dot_product_attention(q, q, q, mask=mask)
    out.sum().backward()
    assert torch.isfinite(q.grad).all()


def test_default_scale_is_one_over_sqrt_dk():
    q, k, v = torch.randn(5, 16), torch.randn(6, 16), torch.randn(6, 3)
    _, w = scaled_dot_product_attention(q, k, v)
    assert_close(w, torch.softmax(q @ k.T / math.sqrt(16), -1))


def test_gradients_match_pytorch():
    q, k, v = (torch.randn(2, 5, 8, dtype=torch.float64, requires_grad=True) for _ in range(3))
    mask = causal_mask(5)
    ours = torch.autograd.grad(scaled_dot_product_attention(q, k, v, mask)[0].square().sum(), (q, k, v))
    theirs = torch.autograd.grad(F.scaled_dot_product_attention(q, k, v, attn_mask=mask).square().sum(), (q, k, v))
    for a, b in zip(ours, theirs, strict=True):
        assert_close(a, b)


# --- bad input: a clear error naming the shapes ------------------------------------


def test_mismatched_dk_names_shapes():
    with pytest.raises(ValueError, match=r"d_k.*q \(3, 4\), k \(3, 5\)"):
        scaled_dot_product_attention(np.ones((3, 4)), np.ones((3, 5)), np.ones((3, 2)))


def test_k_v_length_mismatch_names_shapes():
    with pytest.raises(ValueError, match=r"n_k.*k \(3, 4\), v \(2, 4\)"):
        scaled_dot_product_attention(np.ones((3, 4)), np.ones((3, 4)), np.ones((2, 4)))


def test_rank_too_low():
    with pytest.raises(ValueError, match=r"at least 2 dimensions.*q \(4,\)"):
        scaled_dot_product_attention(np.ones(4), np.ones((3, 4)), np.ones((3, 4)))


def test_batch_dims_that_do_not_broadcast():
    with pytest.raises(ValueError, match=r"do not broadcast.*q \(2, 3, 4\), k \(3, 3, 4\)"):
        scaled_dot_product_attention(torch.ones(2, 3, 4), torch.ones(3, 3, 4), torch.ones(3, 3, 4))


def test_mask_that_does_not_broadcast():
    with pytest.raises(ValueError, match=r"mask of shape \(4, 4\) does not broadcast.*\(3, 3\)"):
        scaled_dot_product_attention(torch.ones(3, 2), torch.ones(3, 2), torch.ones(3, 2), mask=causal_mask(4))


def test_mask_must_be_boolean():
    with pytest.raises(TypeError, match="boolean"):
        scaled_dot_product_attention(torch.ones(3, 2), torch.ones(3, 2), torch.ones(3, 2), mask=torch.ones(3, 3))


def test_mixed_kinds_rejected():
    with pytest.raises(TypeError, match="not a mix"):
        scaled_dot_product_attention(torch.ones(3, 2), np.ones((3, 2)), np.ones((3, 2)))
    with pytest.raises(TypeError, match="one kind"):
        scaled_dot_product_attention(torch.ones(3, 2), torch.ones(3, 2), torch.ones(3, 2), mask=np.ones((3, 3), bool))


def test_softmax_bad_input():
    with pytest.raises(ValueError, match="axis 2 is out of range.*\\(3,\\)"):
        softmax(np.ones(3), axis=2)
    with pytest.raises(ValueError, match="scalar"):
        softmax(np.float64(1.0))
    with pytest.raises(TypeError, match="numbers"):
        softmax(["a", "b"])


# --- masks ---------------------------------------------------------------------------


def test_causal_mask_matches_pytorch_is_causal():
    for n in range(1, 8):
        q, k, v = (torch.randn(n, 4) for _ in range(3))
        assert_close(scaled_dot_product_attention(q, k, v, causal_mask(n))[0], F.scaled_dot_product_attention(q, k, v, is_causal=True))


def test_padding_mask_shape_and_values():
    m = padding_mask([[5, 6, 0], [7, 0, 0]])
    assert m.shape == (2, 1, 1, 3) and m.dtype == torch.bool
    assert m[:, 0, 0].tolist() == [[True, True, False], [True, False, False]]
    assert (padding_mask([[5, 9, 9]], pad_id=9)[0, 0, 0] == torch.tensor([True, False, False])).all()


def test_mask_helpers_bad_input():
    with pytest.raises(ValueError, match=r"\(B, n\).*\(3,\)"):
        padding_mask([1, 2, 0])
    with pytest.raises(TypeError, match="integer"):
        padding_mask(torch.ones(2, 3))
    with pytest.raises(ValueError, match="positive integer"):
        causal_mask(0)
