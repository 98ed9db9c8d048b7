"""helpers.scale: FLOP and memory accounting, the KV cache, blockwise attention, the memory meter."""

import dataclasses
import math

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.testing import assert_close

import helpers
from helpers.layers import merge_heads, split_heads
from helpers.scale import (
    LLAMA2_7B,
    KVCache,
    attention_share,
    attention_sublayer_share,
    blockwise_attention,
    flops_per_token,
    kv_cache_bytes,
    peak_memory,
    score_matrix_bytes,
)


def test_llama2_7b_parameter_count():
    assert LLAMA2_7B.parameters() == 6_738_415_616  # the published 6.74 B
    assert LLAMA2_7B.d_k == 128 and LLAMA2_7B.kv_heads == 32


def test_flops_are_two_per_multiplied_weight_plus_attention():
    parts = flops_per_token(1)
    multiplied = LLAMA2_7B.parameters() - LLAMA2_7B.vocab * LLAMA2_7B.d_model - (2 * LLAMA2_7B.n_layers + 1) * LLAMA2_7B.d_model
    attention = parts["attention scores q·k"] + parts["attention weights × V"]
    assert sum(parts.values()) - attention == 2 * multiplied


@pytest.mark.parametrize("n, low, high", [(300, 0.005, 0.02), (4096, 0.13, 0.15), (58_809, 0.69, 0.71)])
def test_attention_share_corrects_the_notes(n, low, high):
    assert low < attention_share(n) < high


@pytest.mark.parametrize("n, want", [(300, 0.333), (4096, 0.419), (32_768, 0.706)])
def test_attention_sublayer_share_includes_the_projections(n, want):
    assert attention_sublayer_share(n) == pytest.approx(want, abs=0.001)
    assert attention_sublayer_share(n) > attention_share(n) + 0.14  # the projections: 14% to 32%


def test_grouped_query_attention_shrinks_cache_and_projections():
    gqa = dataclasses.replace(LLAMA2_7B, n_kv_heads=8)
    assert kv_cache_bytes(100, gqa) * 4 == kv_cache_bytes(100, LLAMA2_7B)
    assert flops_per_token(10, gqa)["Q, K, V, O projections"] < flops_per_token(10)["Q, K, V, O projections"]


def test_memory_formulas():
    assert kv_cache_bytes(1) == 524_288  # 0.5 MiB per token in fp16
    assert score_matrix_bytes(4096, 32, 2) == 2**30
    assert score_matrix_bytes(10, 2, 4, batch=3) == 3 * 2 * 100 * 4


@pytest.mark.parametrize("bad", [0, -3, 2.5, True])
def test_flops_reject_bad_context(bad):
    with pytest.raises(ValueError, match="context"):
        flops_per_token(bad)


@pytest.mark.parametrize("heads, n", [(1, 1), (4, 9), (2, 17)])
def test_kv_cache_decoding_equals_full_causal_recompute(heads, n):
    torch.manual_seed(n)
    mha = helpers.MultiHeadAttention(d_model=16, num_heads=heads).eval()
    x = torch.randn(2, n, 16)
    with torch.no_grad():
        full, _ = mha(x, x, x, mask=helpers.causal_mask(n))
        cache, steps = KVCache(), []
        for t in range(n):
            x_t = x[:, t : t + 1]
            k, v = cache.append(split_heads(mha.w_k(x_t), heads), split_heads(mha.w_v(x_t), heads))
            out, _ = helpers.scaled_dot_product_attention(split_heads(mha.w_q(x_t), heads), k, v)
            steps.append(mha.w_o(merge_heads(out)))
    assert_close(torch.cat(steps, 1), full)
    assert len(cache) == n and cache.nbytes == 2 * 2 * n * 16 * 4


def test_kv_cache_rejects_mismatched_shapes():
    cache = KVCache()
    cache.append(torch.zeros(1, 2, 3, 4), torch.zeros(1, 2, 3, 4))
    with pytest.raises(ValueError, match="do not match"):
        cache.append(torch.zeros(1, 3, 1, 4), torch.zeros(1, 3, 1, 4))
    with pytest.raises(ValueError, match="both have shape"):
        cache.append(torch.zeros(1, 2, 1, 4), torch.zeros(1, 2, 1, 5))


@settings(max_examples=50, deadline=None)
@given(
    batch=st.lists(st.integers(1, 3), max_size=2),
    n_q=st.integers(1, 70),
    n_k=st.integers(1, 70),
    d_k=st.integers(1, 16),
    d_v=st.integers(1, 16),
    block=st.integers(1, 80),
    causal=st.booleans(),
    seed=st.integers(0, 10_000),
)
def test_blockwise_matches_pytorch(batch, n_q, n_k, d_k, d_v, block, causal, seed):
    if causal:
        n_k = n_q
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(*batch, n_q, d_k, generator=g, dtype=torch.float64) * 3
    k = torch.randn(*batch, n_k, d_k, generator=g, dtype=torch.float64) * 3
    v = torch.randn(*batch, n_k, d_v, generator=g, dtype=torch.float64)
    want = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    assert_close(blockwise_attention(q, k, v, block_size=block, causal=causal), want)


def test_blockwise_survives_huge_scores():
    q = torch.tensor([[1000.0, 0.0], [-1000.0, 0.0]])
    k = torch.tensor([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0]])
    v = torch.eye(3)[:, :2]
    out = blockwise_attention(q, k, v, block_size=1)
    assert torch.isfinite(out).all()
    assert_close(out, F.scaled_dot_product_attention(q, k, v))


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"block_size": 0}, ValueError, "block_size"),
        ({"causal": True, "k": torch.zeros(5, 4), "v": torch.zeros(5, 4)}, ValueError, "n_q == n_k"),
        ({"k": torch.zeros(3, 5)}, ValueError, "d_k"),
    ],
)
def test_blockwise_bad_input(kwargs, error, match):
    args = {"q": torch.zeros(3, 4), "k": torch.zeros(3, 4), "v": torch.zeros(3, 4)} | kwargs
    with pytest.raises(error, match=match):
        blockwise_attention(**args)


@pytest.mark.parametrize("n", [64, 256, 512])
def test_peak_memory_plain_is_quadratic_blockwise_is_not(n):
    q, k, v = torch.randn(n, 32), torch.randn(n, 32), torch.randn(n, 32)
    _, plain = peak_memory(helpers.scaled_dot_product_attention, q, k, v)
    out, block = peak_memory(blockwise_attention, q, k, v, block_size=32)
    assert 3 * n * n * 4 <= plain <= 3 * n * n * 4 + 16 * n * 32 * 4
    assert block - out.numel() * 4 < 20 * 32 * 32 * 4  # a few tiles, whatever n is


def test_peak_memory_ignores_views_of_inputs_and_counts_frees():
    x = torch.randn(1000, 100)

    def slices():
        total = 0.0
        for i in range(10):
            total += x[i * 100 : (i + 1) * 100].sum().item()  # views of x: no new memory
        return total

    _, peak = peak_memory(slices)
    assert peak < 1000  # only the scalar sums

    def temporaries():
        for _ in range(5):
            y = torch.ones(1000)  # 4000 bytes, freed at the next iteration
        return y

    _, peak = peak_memory(temporaries)
    assert 4000 <= peak <= 8000
    assert math.isfinite(peak)
