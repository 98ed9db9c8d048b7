"""helpers.position: sinusoidal encodings and rotary embeddings, against independent references."""

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.testing import assert_close

from helpers.position import frequencies, rope, sinusoidal_encoding


def reference_pe(n: int, d: int) -> np.ndarray:
    """The 2017 paper's formula, one entry at a time."""
    pe = np.zeros((n, d))
    for p in range(n):
        for i in range(d // 2):
            pe[p, 2 * i] = math.sin(p / 10000 ** (2 * i / d))
            pe[p, 2 * i + 1] = math.cos(p / 10000 ** (2 * i / d))
    return pe


def reference_rope(x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
    """Meta's Llama formulation: pairs as complex numbers times e^(i p θ)."""
    d = x.shape[-1]
    theta = 10000.0 ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    turn = torch.polar(torch.ones(len(positions), d // 2, dtype=torch.float64), positions[:, None].double() * theta)
    pairs = torch.view_as_complex(x.double().reshape(*x.shape[:-1], d // 2, 2).contiguous())
    return torch.view_as_real(pairs * turn).flatten(-2).to(x.dtype)


def rotate_half_rope(x: torch.Tensor) -> torch.Tensor:
    """Hugging Face's formulation (pairs i, i + d/2), for inputs with the dims reordered to match."""
    d, n = x.shape[-1], x.shape[-2]
    theta = 10000.0 ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    angle = torch.arange(n, dtype=torch.float64)[:, None] * theta
    cos, sin = torch.cat([angle.cos()] * 2, -1), torch.cat([angle.sin()] * 2, -1)
    half1, half2 = x[..., : d // 2], x[..., d // 2 :]
    return x * cos + torch.cat([-half2, half1], -1) * sin


@pytest.mark.parametrize("n, d", [(1, 2), (7, 4), (50, 16), (128, 64), (5, 512)])
def test_sinusoidal_matches_the_formula(n, d):
    assert_close(sinusoidal_encoding(n, d).double(), torch.from_numpy(reference_pe(n, d)), check_dtype=False)


def reference_pe_concatenated(n: int, d: int, fairseq_spacing: bool = False) -> np.ndarray:
    """The [sin | cos] layout many libraries use; with ``fairseq_spacing`` also their speeds
    10000^(-i/(d/2 - 1)) (fairseq, tensor2tensor) instead of the paper's 10000^(-2i/d)."""
    i = np.arange(d // 2)
    omega = 10000.0 ** (-i / (d // 2 - 1)) if fairseq_spacing else 10000.0 ** (-2 * i / d)
    angles = np.arange(n)[:, None] * omega[None, :]
    return np.concatenate([np.sin(angles), np.cos(angles)], axis=1)


@pytest.mark.parametrize("n, d", [(3, 2), (50, 16), (128, 64), (7, 512)])
def test_concatenated_layout_is_the_paper_table_with_columns_permuted(n, d):
    paper = reference_pe(n, d)
    order = np.concatenate([np.arange(0, d, 2), np.arange(1, d, 2)])  # sin columns, then cos columns
    concatenated = reference_pe_concatenated(n, d)
    np.testing.assert_allclose(concatenated, paper[:, order], rtol=0, atol=1e-12)
    np.testing.assert_allclose(sinusoidal_encoding(n, d).double().numpy()[:, order], concatenated, rtol=0, atol=1e-6)  # float32
    np.testing.assert_allclose(concatenated @ concatenated.T, paper @ paper.T, rtol=0, atol=1e-9)  # same dot products


def test_fairseq_spacing_is_a_different_table_not_a_permutation():
    other = reference_pe_concatenated(64, 64, fairseq_spacing=True)
    paper = reference_pe(64, 64)
    assert not np.allclose(np.sort(other, axis=1), np.sort(paper, axis=1), atol=1e-3)
    assert abs(other[:, 63] - np.cos(np.arange(64) / 10000)).max() < 1e-12  # slowest clock exactly 1/10000


def test_sinusoidal_dot_product_depends_only_on_distance():
    pe = sinusoidal_encoding(200, 32).double()
    for k in [0, 1, 5, 40]:
        dots = (pe[: 200 - k] * pe[k:]).sum(-1)
        assert_close(dots, torch.full_like(dots, float(torch.cos(k * frequencies(32)).sum())))


def test_frequencies_run_from_one_to_nearly_one_over_base():
    w = frequencies(512)
    assert w[0] == 1 and w.shape == (256,) and math.isclose(float(w[-1]), 10000 ** (-510 / 512))


@settings(max_examples=60, deadline=None)
@given(
    batch=st.lists(st.integers(1, 3), max_size=2),
    n=st.integers(1, 12),
    half=st.integers(1, 16),
    seed=st.integers(0, 10_000),
    dtype=st.sampled_from([torch.float32, torch.float64]),
)
def test_rope_matches_llama_complex_formulation(batch, n, half, seed, dtype):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(*batch, n, 2 * half, generator=g, dtype=dtype)
    positions = torch.randint(0, 5000, (n,), generator=g)
    got = rope(x, positions)
    assert got.dtype == dtype and got.shape == x.shape
    assert_close(got, reference_rope(x, positions))
    assert_close(got.norm(dim=-1), x.norm(dim=-1))  # a rotation keeps lengths


def test_rope_equals_rotate_half_up_to_a_fixed_reordering_of_dims():
    x = torch.randn(2, 9, 16, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    order = torch.cat([torch.arange(0, 16, 2), torch.arange(1, 16, 2)])  # interleaved -> halves
    assert_close(rope(x)[..., order], rotate_half_rope(x[..., order]))


@settings(max_examples=40, deadline=None)
@given(m=st.integers(0, 3000), n=st.integers(0, 3000), shift=st.integers(-3000, 3000), seed=st.integers(0, 1000))
def test_rope_scores_depend_only_on_the_offset(m, n, shift, seed):
    if min(m, n) + shift < 0:
        shift = -min(m, n)
    g = torch.Generator().manual_seed(seed)
    q, k = torch.randn(1, 64, generator=g, dtype=torch.float64), torch.randn(1, 64, generator=g, dtype=torch.float64)

    def score(a, b):
        return (rope(q, torch.tensor([a])) @ rope(k, torch.tensor([b])).T).item()

    assert math.isclose(score(m, n), score(m + shift, n + shift), rel_tol=1e-9, abs_tol=1e-9)


def test_rope_position_zero_is_the_identity():
    x = torch.randn(3, 1, 8)
    assert_close(rope(x, torch.tensor([0])), x)


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda: rope(torch.zeros(4, 5)), ValueError, "even"),
        (lambda: rope(torch.zeros(4)), ValueError, "shape"),
        (lambda: rope(torch.zeros(3, 4), torch.arange(4)), ValueError, r"\(3,\)"),
        (lambda: rope(np.zeros((3, 4))), TypeError, "torch tensor"),
        (lambda: sinusoidal_encoding(0, 4), ValueError, "positive"),
        (lambda: sinusoidal_encoding(3, 5), ValueError, "even"),
    ],
)
def test_bad_input_is_a_clear_error(call, error, match):
    with pytest.raises(error, match=match):
        call()
