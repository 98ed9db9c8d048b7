"""helpers.llama against independent references, on random shapes; Llama 2-7B's block size."""

import pytest
import torch
import torch.nn.functional as F
from torch.testing import assert_close

import helpers
from helpers.llama import GroupedQueryAttention, LlamaBlock, SwiGLU, repeat_kv
from helpers.position import rope
from helpers.scale import KVCache

SEEDS = range(4)


def shapes(seed: int) -> dict:
    """Random sizes: B, n, h_kv, heads per K/V head, an even d_k, d_ff."""
    g = torch.Generator().manual_seed(seed)
    pick = lambda low, high: int(torch.randint(low, high + 1, (1,), generator=g))  # noqa: E731
    h_kv, n_rep, d_k = pick(1, 3), pick(1, 3), 2 * pick(1, 4)
    return {"B": pick(1, 3), "n": pick(1, 9), "h_kv": h_kv, "h": h_kv * n_rep, "d_k": d_k,
            "d_model": h_kv * n_rep * d_k, "d_ff": pick(3, 20)}


@pytest.mark.parametrize("seed", SEEDS)
def test_swiglu_equals_its_formula(seed):
    s = shapes(seed)
    torch.manual_seed(seed)
    ffn = SwiGLU(s["d_model"], s["d_ff"]).double()
    x = torch.randn(s["B"], s["n"], s["d_model"], dtype=torch.float64)
    gate, up, down = ffn.gate.weight, ffn.up.weight, ffn.down.weight
    want = (x @ gate.T * torch.sigmoid(x @ gate.T) * (x @ up.T)) @ down.T
    assert_close(ffn(x), want)
    assert sum(p.numel() for p in ffn.parameters()) == 3 * s["d_model"] * s["d_ff"]


@pytest.mark.parametrize("seed", SEEDS)
def test_repeat_kv_is_repeat_interleave(seed):
    s = shapes(seed)
    kv = torch.randn(s["B"], s["h_kv"], s["n"], s["d_k"])
    n_rep = s["h"] // s["h_kv"]
    assert torch.equal(repeat_kv(kv, n_rep), kv.repeat_interleave(n_rep, dim=1))


def reference_gqa(attn: GroupedQueryAttention, x: torch.Tensor, is_causal: bool) -> torch.Tensor:
    """PyTorch's fused attention with enable_gqa=True on the same projections."""
    B, n, _ = x.shape
    q = rope(attn.w_q(x).view(B, n, attn.num_heads, attn.d_k).transpose(1, 2))
    k = rope(attn.w_k(x).view(B, n, attn.num_kv_heads, attn.d_k).transpose(1, 2))
    v = attn.w_v(x).view(B, n, attn.num_kv_heads, attn.d_k).transpose(1, 2)
    out = F.scaled_dot_product_attention(q, k, v, is_causal=is_causal, enable_gqa=True)
    return attn.w_o(out.transpose(1, 2).reshape(B, n, -1))


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("causal", [False, True])
def test_gqa_equals_pytorch_enable_gqa(seed, causal):
    s = shapes(seed)
    torch.manual_seed(seed)
    attn = GroupedQueryAttention(s["d_model"], s["h"], s["h_kv"]).double()
    x = torch.randn(s["B"], s["n"], s["d_model"], dtype=torch.float64)
    mask = helpers.causal_mask(s["n"]) if causal else None
    assert_close(attn(x, mask), reference_gqa(attn, x, causal))
    assert attn.attn_weights.shape == (s["B"], s["h"], s["n"], s["n"])


@pytest.mark.parametrize("seed", SEEDS)
def test_gqa_with_cache_equals_full_recompute(seed):
    s = shapes(seed)
    torch.manual_seed(seed)
    attn = GroupedQueryAttention(s["d_model"], s["h"], s["h_kv"]).double()
    x = torch.randn(s["B"], s["n"] + 3, s["d_model"], dtype=torch.float64)
    full = attn(x, helpers.causal_mask(s["n"] + 3))
    cache = KVCache()
    steps = [attn(x[:, : s["n"]], helpers.causal_mask(s["n"]), cache=cache)]
    steps += [attn(x[:, t : t + 1], cache=cache) for t in range(s["n"], s["n"] + 3)]
    assert_close(torch.cat(steps, dim=1), full)
    assert cache.keys.shape == (s["B"], s["h_kv"], s["n"] + 3, s["d_k"])  # h_kv heads cached, not h


def test_zeroing_a_head_removes_its_share_of_w_o():
    torch.manual_seed(0)
    attn = GroupedQueryAttention(16, 4, 2).double()
    x = torch.randn(2, 5, 16, dtype=torch.float64)
    with torch.no_grad():
        attn.w_o.weight[:, 4:8] = 0  # head 1's slice of W_O
        assert_close(attn(x), attn(x, zero_heads=[1]))


@pytest.mark.parametrize("seed", SEEDS)
def test_llama_block_equals_its_formula(seed):
    s = shapes(seed)
    torch.manual_seed(seed)
    block = LlamaBlock(s["d_model"], s["h"], s["h_kv"], s["d_ff"]).double()
    x = torch.randn(s["B"], s["n"], s["d_model"], dtype=torch.float64)
    norm = lambda t, w: t / torch.sqrt(t.pow(2).mean(-1, keepdim=True) + 1e-5) * w  # noqa: E731
    h = x + reference_gqa(block.attn, norm(x, block.attn_norm.weight), True)
    want = h + block.ffn(norm(h, block.ffn_norm.weight))
    assert_close(block(x, helpers.causal_mask(s["n"])), want)
    assert isinstance(block.attn_norm, helpers.RMSNorm)
    assert all(not name.endswith("bias") for name, _ in block.named_parameters())


def test_llama2_7b_block_has_202_383_360_parameters_on_the_meta_device():
    with torch.device("meta"):
        block = LlamaBlock(4096, 32, 32, 11008)
    assert all(p.is_meta for p in block.parameters())  # nothing allocated
    assert sum(p.numel() for p in block.parameters()) == 202_383_360


def test_grouped_kv_heads_shrink_w_k_and_w_v():
    with torch.device("meta"):
        mha, gqa = GroupedQueryAttention(4096, 32, 32), GroupedQueryAttention(4096, 32, 8)
    count = lambda m: sum(p.numel() for p in m.parameters())  # noqa: E731
    assert count(mha) - count(gqa) == 2 * 4096 * (4096 - 8 * 128)


@pytest.mark.parametrize("args", [(12, 4, 3), (12, 5, 5), (12, 12, 4), (0, 1, 1)])
def test_bad_sizes_are_rejected(args):
    with pytest.raises(ValueError):
        GroupedQueryAttention(*args)


def test_bad_inputs_name_the_shapes():
    attn = GroupedQueryAttention(8, 2, 1)
    with pytest.raises(ValueError, match=r"\(B, n, d_model=8\)"):
        attn(torch.randn(3, 8))
    with pytest.raises(ValueError, match="h_kv"):
        repeat_kv(torch.randn(2, 3, 4), 2)
    with pytest.raises(ValueError, match="d_model=8"):
        SwiGLU(8, 16)(torch.randn(2, 7))
