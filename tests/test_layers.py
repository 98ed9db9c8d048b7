"""helpers' Transformer layers against PyTorch's own, weights copied with ``from_torch``.

Every parity test draws its case from one seed: shapes, heads, dtype (float32/float64),
norm placement, activation, bias, and the mask kind. PyTorch's masks say True = blocked;
ours say True = may attend, so each case builds one set of masks and hands each side its
own convention. Rows with every key blocked are left out of the parity tests (PyTorch
gives NaN there) and tested on their own below.
"""

import random

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.testing import assert_close

import helpers
from helpers import DecoderBlock, EncoderBlock, FeedForward, LayerNorm, MultiHeadAttention, RMSNorm
from helpers.layers import merge_heads, split_heads

CASES = range(200)
DTYPES = [torch.float32, torch.float64]
# Gradients through two or three LayerNorms in float32 differ by summation order at ~3e-5.
GRAD_TOL = {torch.float32: dict(atol=1e-4, rtol=1e-4), torch.float64: {}}
MASK_KINDS = ["none", "attn", "padding", "attn+padding", "per-batch", "per-head", "causal"]


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    """These tensors are tiny: one intra-op thread is many times faster than two fighting
    over a busy 2-core machine (measured 0.1 ms vs 6 ms per small Linear). Restored after."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def divisors(n: int) -> list[int]:
    return [h for h in range(1, n + 1) if n % h == 0]


def randomise_(module: nn.Module, g: torch.Generator) -> nn.Module:
    """Nudge every parameter (norm weights, zero-initialised biases too) so copying is tested."""
    with torch.no_grad():
        for p in module.parameters():
            p.add_(0.2 * torch.randn(p.shape, generator=g, dtype=p.dtype))
    return module


class Masks:
    """One random set of masks for a (B, h, n_q, n_k) attention, in both conventions.

    ``ours`` is bool True = may attend, shaped as the kind asks; ``attn`` and ``padding``
    are PyTorch's ``attn_mask`` / ``key_padding_mask`` (True = blocked). Every query row
    keeps at least one key (``anchor``), so no row is fully blocked.
    """

    def __init__(self, kind: str, B: int, h: int, n_q: int, n_k: int, g: torch.Generator) -> None:
        self.kind = kind
        anchor = int(torch.randint(0, n_k, (1,), generator=g))
        allowed = torch.ones(B, h, n_q, n_k, dtype=torch.bool)
        self.attn = self.padding = self.ours = None

        def bernoulli(*shape):
            m = torch.rand(*shape, generator=g) > 0.35
            m[..., anchor] = True
            return m

        if kind == "causal" and n_q == n_k:
            self.ours = helpers.causal_mask(n_q)  # (n, n)
            self.attn = ~self.ours
            allowed &= self.ours
        elif "attn" in kind or kind == "causal":
            self.ours = bernoulli(n_q, n_k)  # (n_q, n_k)
            self.attn = ~self.ours
            allowed &= self.ours
        if "padding" in kind:
            real = bernoulli(B, n_k)  # (B, n_k), True = real token
            self.padding = ~real
            pad = real[:, None, None, :]  # (B, 1, 1, n_k), as helpers.padding_mask gives
            self.ours = pad if self.ours is None else self.ours & pad
            allowed &= pad
        if kind == "per-batch":
            self.ours = bernoulli(B, n_q, n_k)  # 3-D: the same for every head
            self.attn = (~self.ours).repeat_interleave(h, dim=0)  # PyTorch's 3-D is (B·h, n_q, n_k)
            allowed &= self.ours[:, None]
        if kind == "per-head":
            self.ours = bernoulli(B, h, n_q, n_k)
            self.attn = (~self.ours).reshape(B * h, n_q, n_k)
            allowed &= self.ours
        self.allowed = allowed


def rng_case(seed: int):
    """A Python RNG for the case's choices and a torch generator for its tensors."""
    return random.Random(seed), torch.Generator().manual_seed(seed)


# --- MultiHeadAttention ------------------------------------------------------------


@pytest.mark.parametrize("seed", CASES)
def test_multi_head_attention_matches_pytorch(seed):
    r, g = rng_case(seed)
    dtype = DTYPES[seed % 2]
    d_model = r.choice([1, 2, 4, 6, 8, 12, 16, 24])
    h = r.choice(divisors(d_model))
    B, n_q = r.randint(1, 3), r.randint(1, 7)
    self_attention = seed % 3 == 0
    n_k = n_q if self_attention else r.randint(1, 7)
    kind = MASK_KINDS[(seed // 2) % len(MASK_KINDS)]
    theirs = nn.MultiheadAttention(d_model, h, bias=seed % 5 != 4, batch_first=True, dtype=dtype)
    randomise_(theirs, g).eval()
    mine = MultiHeadAttention.from_torch(theirs)
    assert (mine.d_model, mine.num_heads, mine.d_k) == (d_model, h, d_model // h)
    assert next(mine.parameters()).dtype == dtype

    query = torch.randn(B, n_q, d_model, generator=g, dtype=dtype, requires_grad=True)
    if self_attention:
        key = value = query
    else:
        key = torch.randn(B, n_k, d_model, generator=g, dtype=dtype, requires_grad=True)
        value = torch.randn(B, n_k, d_model, generator=g, dtype=dtype, requires_grad=True)
    masks = Masks(kind, B, h, n_q, n_k, g)

    out, weights = mine(query, key, value, mask=masks.ours)
    assert out.shape == (B, n_q, d_model) and weights.shape == (B, h, n_q, n_k)
    want, want_avg = theirs(query, key, value, attn_mask=masks.attn, key_padding_mask=masks.padding)
    assert_close(out, want)
    assert_close(weights.mean(dim=1), want_avg)  # PyTorch averages over heads by default
    _, want_heads = theirs(query, key, value, attn_mask=masks.attn, key_padding_mask=masks.padding, average_attn_weights=False)
    assert_close(weights, want_heads)
    assert not weights.masked_select(~masks.allowed).any()

    fused, _ = theirs(query, key, value, attn_mask=masks.attn, key_padding_mask=masks.padding, need_weights=False)
    assert_close(out, fused)  # the fused kernel path too

    upstream = torch.randn(out.shape, generator=g, dtype=dtype)
    inputs = [query] if self_attention else [query, key, value]
    grads = torch.autograd.grad((out * upstream).sum(), inputs)
    want_grads = torch.autograd.grad((want * upstream).sum(), inputs)
    assert_close(grads, want_grads)


def test_in_proj_weight_layout_is_q_k_v():
    torch.manual_seed(0)
    theirs = nn.MultiheadAttention(8, 2, batch_first=True)
    mine = MultiHeadAttention.from_torch(theirs)
    assert torch.equal(theirs.in_proj_weight[:8], mine.w_q.weight)
    assert torch.equal(theirs.in_proj_weight[8:16], mine.w_k.weight)
    assert torch.equal(theirs.in_proj_weight[16:], mine.w_v.weight)
    assert torch.equal(theirs.out_proj.weight, mine.w_o.weight)


@pytest.mark.parametrize("d_model", [8, 12, 64])
def test_parameter_count_does_not_depend_on_heads(d_model):
    for h in divisors(d_model):
        mha = MultiHeadAttention(d_model, h)
        assert sum(p.numel() for p in mha.parameters()) == 4 * d_model**2 + 4 * d_model
        no_bias = MultiHeadAttention(d_model, h, bias=False)
        assert sum(p.numel() for p in no_bias.parameters()) == 4 * d_model**2


def test_split_and_merge_heads_are_inverse_and_slice_features():
    x = torch.arange(2 * 3 * 8.0).reshape(2, 3, 8)
    heads = split_heads(x, 4)
    assert heads.shape == (2, 4, 3, 2)
    assert torch.equal(heads[1, 2, 0], x[1, 0, 4:6])  # head 2 = features 4..5 of every token
    assert torch.equal(merge_heads(heads), x)


def test_one_head_is_plain_scaled_dot_product_attention():
    torch.manual_seed(1)
    mha = MultiHeadAttention(6, 1)
    x = torch.randn(2, 5, 6)
    out, weights = mha(x, x, x)
    ref_out, ref_w = helpers.scaled_dot_product_attention(mha.w_q(x), mha.w_k(x), mha.w_v(x))
    assert_close(weights[:, 0], ref_w)
    assert_close(out, mha.w_o(ref_out))


def test_fully_masked_row_gives_no_nan_and_the_output_bias():
    torch.manual_seed(2)
    mha = MultiHeadAttention(8, 2)
    x = torch.randn(1, 4, 8, requires_grad=True)
    mask = torch.ones(4, 4, dtype=torch.bool)
    mask[2] = False  # query 2 may attend to nothing
    out, weights = mha(x, x, x, mask=mask)
    assert torch.isfinite(out).all() and torch.isfinite(weights).all()
    assert not weights[:, :, 2].any()
    assert_close(out[0, 2], mha.w_o.bias)  # zero weights: the output is W_O(0) = its bias
    out.sum().backward()
    assert torch.isfinite(x.grad).all()


def test_dropout_only_while_training():
    torch.manual_seed(3)
    mha = MultiHeadAttention(8, 2, dropout=0.5)
    x = torch.randn(2, 6, 8)
    mha.eval()
    a, _ = mha(x, x, x)
    b, _ = mha(x, x, x)
    assert torch.equal(a, b)
    mha.train()
    c, _ = mha(x, x, x)
    assert not torch.allclose(a, c)


# --- FeedForward, LayerNorm, RMSNorm -----------------------------------------------


@pytest.mark.parametrize("seed", CASES)
def test_feed_forward_matches_pytorch(seed):
    r, g = rng_case(seed)
    dtype = DTYPES[seed % 2]
    activation = ["relu", "gelu"][(seed // 2) % 2]
    d_model, d_ff = r.randint(1, 16), r.randint(1, 48)
    bias = seed % 7 != 6
    theirs = nn.Sequential(
        nn.Linear(d_model, d_ff, bias=bias, dtype=dtype),
        nn.ReLU() if activation == "relu" else nn.GELU(),
        nn.Linear(d_ff, d_model, bias=bias, dtype=dtype),
    )
    randomise_(theirs, g)
    mine = FeedForward.from_torch(theirs[0], theirs[2], theirs[1] if seed % 3 else activation)
    assert mine.activation == activation
    shape = tuple(r.randint(1, 4) for _ in range(r.randint(0, 3)))
    x = torch.randn(*shape, d_model, generator=g, dtype=dtype, requires_grad=True)
    out = mine(x)
    want = theirs(x)
    assert_close(out, want)
    assert_close(torch.autograd.grad(out.sum(), x), torch.autograd.grad(want.sum(), x))


@pytest.mark.parametrize("seed", CASES)
def test_layer_norm_matches_pytorch(seed):
    r, g = rng_case(seed)
    dtype = DTYPES[seed % 2]
    d = r.randint(1, 64)
    eps = r.choice([1e-5, 1e-6, 1e-3, 0.1])
    theirs = randomise_(nn.LayerNorm(d, eps=eps, bias=seed % 5 != 4, dtype=dtype), g)
    mine = LayerNorm.from_torch(theirs)
    shape = tuple(r.randint(1, 4) for _ in range(r.randint(0, 3)))
    scale = r.choice([0.01, 1.0, 100.0])  # an offset of 5 standard deviations: still well conditioned in float32
    x = (torch.randn(*shape, d, generator=g, dtype=dtype) + r.choice([0.0, 5.0])) * scale
    x.requires_grad_(True)
    out, want = mine(x), theirs(x)
    assert_close(out, want)
    upstream = torch.randn(out.shape, generator=g, dtype=dtype)
    grads = torch.autograd.grad((out * upstream).sum(), [x, mine.weight])
    want_grads = torch.autograd.grad((want * upstream).sum(), [x, theirs.weight])
    assert_close(grads[0], want_grads[0], atol=1e-5 / scale, rtol=1e-5)  # d out / d x grows as 1 / scale
    assert_close(grads[1], want_grads[1])


@pytest.mark.parametrize("seed", CASES)
def test_rms_norm_matches_pytorch(seed):
    r, g = rng_case(seed)
    dtype = DTYPES[seed % 2]
    d = r.randint(1, 64)
    eps = r.choice([None, 1e-5, 1e-6, 0.1])
    theirs = randomise_(nn.RMSNorm(d, eps=eps, dtype=dtype), g)
    mine = RMSNorm.from_torch(theirs)
    shape = tuple(r.randint(1, 4) for _ in range(r.randint(0, 3)))
    scale = r.choice([0.01, 1.0, 100.0])
    x = torch.randn(*shape, d, generator=g, dtype=dtype) * scale
    x.requires_grad_(True)
    out, want = mine(x), theirs(x)
    assert_close(out, want)
    upstream = torch.randn(out.shape, generator=g, dtype=dtype)
    grads = torch.autograd.grad((out * upstream).sum(), [x, mine.weight])
    want_grads = torch.autograd.grad((want * upstream).sum(), [x, theirs.weight])
    assert_close(grads[0], want_grads[0], atol=1e-5 / scale, rtol=1e-5)  # d out / d x grows as 1 / scale
    assert_close(grads[1], want_grads[1])


def test_layer_norm_output_has_zero_mean_unit_variance():
    x = torch.randn(3, 5, 32, dtype=torch.float64) * 7 + 3
    y = LayerNorm(32)(x)
    assert_close(y.mean(-1), torch.zeros(3, 5, dtype=torch.float64))
    assert_close(y.var(-1, unbiased=False), torch.ones(3, 5, dtype=torch.float64), atol=1e-6, rtol=1e-6)


def test_rms_norm_output_has_unit_root_mean_square():
    x = torch.randn(4, 16, dtype=torch.float64) * 9 + 2
    y = RMSNorm(16, eps=0.0)(x)
    assert_close(y.pow(2).mean(-1), torch.ones(4, dtype=torch.float64))


# --- Encoder and decoder blocks ----------------------------------------------------


def block_case(seed: int):
    r, g = rng_case(seed)
    d_model = r.choice([2, 4, 6, 8, 12, 16])
    settings = dict(
        d_model=d_model,
        nhead=r.choice(divisors(d_model)),
        dim_feedforward=r.randint(1, 32),
        dropout=0.0,
        activation=["relu", "gelu"][(seed // 2) % 2],
        layer_norm_eps=r.choice([1e-5, 1e-6]),
        batch_first=True,
        norm_first=bool(seed % 2),
        bias=seed % 9 != 8,
        dtype=DTYPES[(seed // 4) % 2],
    )
    return r, g, settings


@pytest.mark.parametrize("seed", CASES)
def test_encoder_block_matches_pytorch(seed):
    r, g, s = block_case(seed)
    theirs = randomise_(nn.TransformerEncoderLayer(**s), g).eval()
    mine = EncoderBlock.from_torch(theirs).eval()
    assert mine.norm_first == s["norm_first"] and mine.ffn.activation == s["activation"]
    B, n = r.randint(1, 3), r.randint(1, 7)
    kind = ["none", "attn", "padding", "attn+padding", "causal"][(seed // 8) % 5]
    masks = Masks(kind, B, s["nhead"], n, n, g)
    x = torch.randn(B, n, s["d_model"], generator=g, dtype=s["dtype"], requires_grad=True)
    out = mine(x, mask=masks.ours)
    assert out.shape == x.shape
    assert mine.attn_weights.shape == (B, s["nhead"], n, n)
    want = theirs(x, src_mask=masks.attn, src_key_padding_mask=masks.padding)
    assert_close(out, want)
    upstream = torch.randn(out.shape, generator=g, dtype=s["dtype"])
    assert_close(torch.autograd.grad((out * upstream).sum(), x), torch.autograd.grad((want * upstream).sum(), x), **GRAD_TOL[s["dtype"]])
    with torch.no_grad():  # PyTorch's inference fast path, where it applies
        assert_close(mine(x, mask=masks.ours), theirs(x, src_mask=masks.attn, src_key_padding_mask=masks.padding))


@pytest.mark.parametrize("seed", CASES)
def test_decoder_block_matches_pytorch(seed):
    r, g, s = block_case(seed)
    theirs = randomise_(nn.TransformerDecoderLayer(**s), g).eval()
    mine = DecoderBlock.from_torch(theirs).eval()
    assert mine.norm_first == s["norm_first"] and mine.ffn.activation == s["activation"]
    B, n, m = r.randint(1, 3), r.randint(1, 7), r.randint(1, 7)
    h = s["nhead"]
    self_masks = Masks(["none", "causal", "attn+padding"][(seed // 8) % 3], B, h, n, n, g)
    memory_masks = Masks(["none", "padding", "attn", "attn+padding"][(seed // 3) % 4], B, h, n, m, g)
    x = torch.randn(B, n, s["d_model"], generator=g, dtype=s["dtype"], requires_grad=True)
    memory = torch.randn(B, m, s["d_model"], generator=g, dtype=s["dtype"], requires_grad=True)
    out = mine(x, memory, self_mask=self_masks.ours, memory_mask=memory_masks.ours)
    assert out.shape == x.shape
    assert mine.self_attn_weights.shape == (B, h, n, n)
    assert mine.cross_attn_weights.shape == (B, h, n, m)
    want = theirs(
        x, memory, tgt_mask=self_masks.attn, memory_mask=memory_masks.attn,
        tgt_key_padding_mask=self_masks.padding, memory_key_padding_mask=memory_masks.padding,
    )
    assert_close(out, want)
    upstream = torch.randn(out.shape, generator=g, dtype=s["dtype"])
    assert_close(
        torch.autograd.grad((out * upstream).sum(), [x, memory]),
        torch.autograd.grad((want * upstream).sum(), [x, memory]),
        **GRAD_TOL[s["dtype"]],
    )


def test_decoder_self_attention_is_causal_and_cross_attention_reads_memory():
    torch.manual_seed(4)
    block = DecoderBlock(8, 2, 16).eval()
    x, memory = torch.randn(1, 5, 8, requires_grad=True), torch.randn(1, 3, 8)
    out = block(x, memory, self_mask=helpers.causal_mask(5))
    (grad,) = torch.autograd.grad(out[0, 2] @ torch.randn(8), x)  # not .sum(): a LayerNorm output sums to 0
    assert grad[0, 3:].abs().max() == 0 and grad[0, :3].abs().min() > 0  # nothing from the future
    other = block(x, memory + 1.0, self_mask=helpers.causal_mask(5))
    assert not torch.allclose(out, other)


@pytest.mark.parametrize("block_cls", [EncoderBlock, DecoderBlock])
def test_blocks_fully_masked_rows_are_finite(block_cls):
    torch.manual_seed(5)
    block = block_cls(8, 2, 16, norm_first=True)
    x = torch.randn(2, 4, 8, requires_grad=True)
    mask = torch.zeros(4, 4, dtype=torch.bool)  # every key blocked for every query
    out = block(x, mask) if block_cls is EncoderBlock else block(x, x, self_mask=mask, memory_mask=mask)
    out.sum().backward()
    assert torch.isfinite(out).all() and torch.isfinite(x.grad).all()


def test_block_dropout_only_while_training():
    torch.manual_seed(6)
    block = EncoderBlock(8, 2, 16, dropout=0.3)
    x = torch.randn(2, 5, 8)
    block.train()
    assert not torch.allclose(block(x), block(x))
    block.eval()
    assert torch.equal(block(x), block(x))


def test_from_torch_keeps_training_mode_and_dropout():
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.25, batch_first=True)
    mine = EncoderBlock.from_torch(layer)
    assert mine.training and mine.dropout1.p == mine.ffn.dropout.p == mine.self_attn.dropout == 0.25
    assert not EncoderBlock.from_torch(layer.eval()).training


# --- bad input -----------------------------------------------------------------------


def test_heads_must_divide_d_model():
    with pytest.raises(ValueError, match=r"d_model=10 is not divisible by num_heads=3.*\[1, 2, 5, 10\]"):
        MultiHeadAttention(10, 3)
    with pytest.raises(ValueError, match="num_heads must be a positive integer"):
        MultiHeadAttention(8, 0)
    with pytest.raises(ValueError, match="d_model must be a positive integer"):
        LayerNorm(2.5)


@pytest.mark.parametrize(
    ("query", "key", "pattern"),
    [
        (torch.randn(5, 8), torch.randn(5, 8), r"query must have shape \(B, n, d_model=8\), got shape \(5, 8\); add a batch"),
        (torch.randn(2, 5, 6), torch.randn(2, 5, 8), r"query must end in d_model=8 features, got shape \(2, 5, 6\)"),
        (torch.randn(2, 5, 8), torch.randn(3, 5, 8), r"query \(2, 5, 8\), key \(3, 5, 8\), value \(2, 5, 8\)"),
        (torch.randn(2, 5, 8), torch.randn(2, 4, 8), r"key \(2, 4, 8\), value \(2, 5, 8\)"),
    ],
)
def test_multi_head_attention_bad_shapes_name_the_shapes(query, key, pattern):
    value = torch.randn(2, 5, 8) if query.ndim == 3 else key
    with pytest.raises(ValueError, match=pattern):
        MultiHeadAttention(8, 2)(query, key, value)


def test_bad_masks_and_inputs():
    mha = MultiHeadAttention(8, 2)
    x = torch.randn(2, 5, 8)
    with pytest.raises(ValueError, match=r"mask of shape \(4, 4\) does not broadcast.*\(2, 2, 5, 5\)"):
        mha(x, x, x, mask=torch.ones(4, 4, dtype=torch.bool))
    with pytest.raises(TypeError, match="mask must be boolean"):
        mha(x, x, x, mask=torch.ones(5, 5))
    with pytest.raises(TypeError, match="mask must be a bool torch tensor"):
        mha(x, x, x, mask=[[True] * 5] * 5)
    with pytest.raises(TypeError, match="query must be a torch tensor, got ndarray"):
        mha(x.numpy(), x, x)
    with pytest.raises(TypeError, match="floating-point"):
        mha(x.long(), x, x)


def test_norms_ffn_and_blocks_name_bad_shapes():
    x = torch.randn(2, 5, 6)
    for layer in (LayerNorm(8), RMSNorm(8), FeedForward(8, 32)):
        with pytest.raises(ValueError, match=r"x must end in d_model=8 features, got shape \(2, 5, 6\)"):
            layer(x)
    with pytest.raises(ValueError, match=r"x must have shape \(B, n, d_model=8\), got shape \(5, 8\)"):
        EncoderBlock(8, 2, 16)(torch.randn(5, 8))
    with pytest.raises(ValueError, match=r"memory must end in d_model=8 features, got shape \(2, 3, 6\)"):
        DecoderBlock(8, 2, 16)(torch.randn(2, 5, 8), torch.randn(2, 3, 6))


def test_bad_activation_and_from_torch_arguments():
    with pytest.raises(ValueError, match="activation must be 'relu' or 'gelu'"):
        FeedForward(8, 16, activation="tanh")
    with pytest.raises(ValueError, match="activation must be 'relu' or 'gelu'"):
        EncoderBlock.from_torch(nn.TransformerEncoderLayer(8, 2, 16, activation=nn.GELU(approximate="tanh")))
    with pytest.raises(TypeError, match="expected nn.MultiheadAttention, got Linear"):
        MultiHeadAttention.from_torch(nn.Linear(2, 2))
    with pytest.raises(TypeError, match="expected nn.TransformerEncoderLayer"):
        EncoderBlock.from_torch(nn.TransformerDecoderLayer(8, 2))
    with pytest.raises(TypeError, match="expected nn.TransformerDecoderLayer"):
        DecoderBlock.from_torch(nn.TransformerEncoderLayer(8, 2))
    with pytest.raises(ValueError, match="kdim = vdim = embed_dim"):
        MultiHeadAttention.from_torch(nn.MultiheadAttention(8, 2, kdim=4, vdim=4))


def test_activation_functions_are_pytorchs():
    x = torch.linspace(-3, 3, 13)
    ffn = FeedForward(1, 1, activation="gelu")
    with torch.no_grad():
        ffn.up.weight.fill_(1.0), ffn.up.bias.zero_(), ffn.down.weight.fill_(1.0), ffn.down.bias.zero_()
    assert_close(ffn(x[:, None])[:, 0], F.gelu(x))
