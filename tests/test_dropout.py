"""Dropout in training mode: helpers' layers draw the same masks as PyTorch's (notebook 07, section 5-7).

Attention dropout matches under the same seed; the residual and FFN masks of PyTorch's
Transformer layers are recorded and replayed with ``helpers.dropout``. Random shapes, both norm
placements, masks, several p.
"""

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.testing import assert_close

from helpers import DecoderBlock, EncoderBlock, MultiHeadAttention, causal_mask
from helpers.dropout import recorded_dropout_masks, replayed_dropout_masks

CASES = range(12)


def _shapes(seed: int) -> dict:
    g = torch.Generator().manual_seed(seed)

    def pick(low: int, high: int) -> int:
        return int(torch.randint(low, high + 1, (), generator=g))

    heads = pick(1, 4)
    return {"B": pick(1, 3), "n": pick(2, 7), "n_k": pick(1, 6), "h": heads, "d": heads * pick(2, 5),
            "d_ff": pick(4, 24), "p": [0.1, 0.3, 0.5][seed % 3], "norm_first": bool(seed % 2),
            "activation": ["relu", "gelu"][seed % 4 // 2], "g": g}


def _padding(B: int, n: int, g: torch.Generator) -> torch.Tensor:
    """(B, n) bool, True = pad (PyTorch's convention); the first token is never padding."""
    pad = torch.rand(B, n, generator=g) < 0.3
    pad[:, 0] = False
    return pad


@pytest.mark.parametrize("seed", CASES)
def test_attention_dropout_matches_nn_multiheadattention_in_both_modes(seed):
    s = _shapes(seed)
    torch_mha = nn.MultiheadAttention(s["d"], s["h"], dropout=s["p"], batch_first=True)
    ours = MultiHeadAttention.from_torch(torch_mha)
    query, memory = torch.randn(s["B"], s["n"], s["d"]), torch.randn(s["B"], s["n_k"], s["d"])
    for training in (True, False):
        torch_mha.train(training), ours.train(training)
        torch.manual_seed(seed)
        want, want_weights = torch_mha(query, memory, memory, average_attn_weights=False)
        torch.manual_seed(seed)
        got, got_weights = ours(query, memory, memory)
        assert_close(got, want)
        assert_close(got_weights, want_weights)  # both return the weights after dropout


@pytest.mark.parametrize("seed", CASES)
def test_encoder_block_matches_nn_transformerencoderlayer_under_the_same_masks(seed):
    s = _shapes(seed)
    layer = nn.TransformerEncoderLayer(s["d"], s["h"], s["d_ff"], dropout=s["p"], activation=s["activation"],
                                       batch_first=True, norm_first=s["norm_first"])
    ours = EncoderBlock.from_torch(layer)
    x, pad = torch.randn(s["B"], s["n"], s["d"]), _padding(s["B"], s["n"], s["g"])
    torch.manual_seed(seed)  # the attention dropout: the first mask both draw
    with recorded_dropout_masks(layer) as masks:
        want = layer(x, src_key_padding_mask=pad)
    torch.manual_seed(seed)
    with replayed_dropout_masks(ours, masks):
        got = ours(x, mask=~pad[:, None, None, :])
    assert len(masks) == 3  # after the attention, inside the FFN, after the FFN
    assert_close(got, want)
    layer.eval(), ours.eval()
    assert_close(ours(x, mask=~pad[:, None, None, :]), layer(x, src_key_padding_mask=pad))


@pytest.mark.parametrize("seed", CASES)
def test_decoder_block_matches_nn_transformerdecoderlayer_under_the_same_masks(seed):
    s = _shapes(seed)
    layer = nn.TransformerDecoderLayer(s["d"], s["h"], s["d_ff"], dropout=s["p"], activation=s["activation"],
                                       batch_first=True, norm_first=s["norm_first"])
    ours = DecoderBlock.from_torch(layer)
    target, memory = torch.randn(s["B"], s["n"], s["d"]), torch.randn(s["B"], s["n_k"], s["d"])
    causal = causal_mask(s["n"])
    torch.manual_seed(seed)  # both attention dropouts: drawn in the same order, from the same generator
    with recorded_dropout_masks(layer) as masks:
        want = layer(target, memory, tgt_mask=~causal)
    torch.manual_seed(seed)
    with replayed_dropout_masks(ours, masks):
        got = ours(target, memory, self_mask=causal)
    assert len(masks) == 4
    assert_close(got, want)


class _DropoutInSequenceMajorOrder(nn.Dropout):
    """nn.Dropout that draws its mask over a (n, B, d) layout, as PyTorch's batch-first attention output has."""

    def forward(self, x):
        return F.dropout(x.transpose(0, 1).contiguous(), self.p, self.training).transpose(0, 1)


@pytest.mark.parametrize("seed", CASES)
def test_seeding_alone_fails_only_because_of_the_memory_layout(seed):
    """What notebook 07 says: with the same seed, the encoder layers differ in training mode; drawing the
    mask after the attention over PyTorch's (n, B, d) layout is all it takes to agree."""
    s = _shapes(seed)
    layer = nn.TransformerEncoderLayer(s["d"], s["h"], s["d_ff"], dropout=0.5, batch_first=True,
                                       norm_first=s["norm_first"])
    ours = EncoderBlock.from_torch(layer)
    x = torch.randn(max(s["B"], 2), s["n"], s["d"])  # two sequences at least, so that the layouts differ
    torch.manual_seed(seed)
    want = layer(x)
    torch.manual_seed(seed)
    assert not torch.allclose(ours(x), want)
    ours.dropout1 = _DropoutInSequenceMajorOrder(0.5)
    torch.manual_seed(seed)
    assert_close(ours(x), want)


def test_replay_refuses_masks_that_do_not_fit():
    block = EncoderBlock(8, 2, 16, dropout=0.2).train()
    x = torch.randn(2, 3, 8)
    with recorded_dropout_masks(block) as masks:
        block(x)
    with pytest.raises(ValueError, match="shape"), replayed_dropout_masks(block, [m[:1] for m in masks]):
        block(x)
    with pytest.raises(ValueError, match="more nn.Dropout calls"), replayed_dropout_masks(block, masks[:2]):
        block(x)
    with pytest.raises(ValueError, match="not used"), replayed_dropout_masks(block, masks + masks):
        block(x)
    with pytest.raises(ValueError, match="no nn.Dropout"), recorded_dropout_masks(nn.Linear(2, 2)):
        pass


def test_nothing_is_recorded_in_evaluation_mode():
    block = EncoderBlock(8, 2, 16, dropout=0.2).eval()
    with recorded_dropout_masks(block) as masks:
        block(torch.randn(1, 3, 8))
    assert masks == []
