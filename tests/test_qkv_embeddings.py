"""helpers.qkv (notebook 04's QKVProjection) and helpers.embeddings (the toy word table)."""

import subprocess
import sys
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from torch.testing import assert_close

from helpers.embeddings import load_sentences, load_toy_embeddings, tokenize
from helpers.qkv import (
    MATCH_AXES,
    QKVProjection,
    hand_set_projection,
    hand_set_weights,
    self_attention,
)

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("seed", range(40))
def test_projection_and_self_attention_match_pytorch(seed):
    g = torch.Generator().manual_seed(seed)
    d_model, d_k, d_v = (int(s) for s in torch.randint(1, 12, (3,), generator=g))
    batch = tuple(int(s) for s in torch.randint(1, 4, (seed % 3,), generator=g))
    n = int(torch.randint(1, 9, (1,), generator=g))
    torch.manual_seed(seed)
    proj = QKVProjection(d_model, d_k, d_v, bias=bool(seed % 2))
    x = torch.randn(*batch, n, d_model, generator=g)
    q, k, v = proj(x)
    assert q.shape == k.shape == (*batch, n, d_k) and v.shape == (*batch, n, d_v)
    assert_close(q, x @ proj.W_q.weight.T + (proj.W_q.bias if proj.W_q.bias is not None else 0))
    mask = torch.ones(n, n, dtype=torch.bool).tril() if seed % 3 == 0 else None
    out, w = self_attention(x, proj, mask)
    assert_close(out, F.scaled_dot_product_attention(q, k, v, attn_mask=mask))
    assert w.shape == (*batch, n, n)


def test_projection_bad_input():
    with pytest.raises(ValueError, match=r"d_model=8.*\(3, 5\)"):
        QKVProjection(8, 4)(torch.ones(3, 5))
    with pytest.raises(TypeError, match="torch tensor"):
        QKVProjection(8, 4)([[1.0] * 8])
    with pytest.raises(ValueError, match="d_k must be a positive integer"):
        QKVProjection(8, 0)


def test_d_v_defaults_to_d_k():
    assert QKVProjection(8, 3).d_v == 3 and QKVProjection(8, 3).W_v.weight.shape == (3, 8)


def test_hand_set_projection_holds_the_rules_of_notebook_04():
    emb = load_toy_embeddings()
    weights = hand_set_weights(emb.axes)
    W_q, W_k = weights["W_q"], weights["W_k"]
    assert W_q.shape == W_k.shape == (8, len(MATCH_AXES))
    a = {name: i for i, name in enumerate(emb.axes)}
    for j, name in enumerate(MATCH_AXES):
        assert W_k[a[name], j] == 3.0 and W_k[:, j].sum() == 3.0
    assert W_q[a["action"], MATCH_AXES.index("living")] == 1.5
    assert W_q[a["colour"], MATCH_AXES.index("object")] == 3.0
    assert torch.equal(weights["W_v"], torch.eye(8))
    proj = hand_set_projection(emb.axes)
    x = emb.embed("the cat sat on the mat")
    q, k, v = proj(x)
    assert_close(q, x @ W_q)
    assert_close(k, x @ W_k)
    assert_close(v, x)
    assert not any(p.requires_grad for p in proj.parameters())
    with pytest.raises(ValueError, match="needed by the hand-set projection"):
        hand_set_weights(["money", "water"])


def test_toy_embeddings_table():
    emb = load_toy_embeddings()
    assert emb.d_model == 8 and emb.pad_id == 0 and emb.pad_token == "<pad>"
    assert emb.table.shape == (len(emb.vocab), 8) and emb.table.dtype == torch.float32
    assert (emb.table[0] == 0).all()  # the pad vector is zero
    assert len(set(emb.vocab)) == len(emb.vocab)
    assert set(emb.axis_meaning) == set(emb.axes)
    bank = emb.embed("bank")[0]
    assert bank[emb.axes.index("money")] == bank[emb.axes.index("water")] > 0  # ambiguous by design
    emb.table[1] = 99  # a copy: the next load is unharmed
    assert (load_toy_embeddings().table[1] != 99).all()


def test_every_sentence_is_in_the_vocabulary():
    emb = load_toy_embeddings()
    for sentence in load_sentences():
        ids = emb.ids(sentence)
        assert emb.words(ids) == tokenize(sentence)
        assert (ids != emb.pad_id).all()


def test_pad_batch_left_and_right():
    emb = load_toy_embeddings()
    right = emb.pad_batch(["the cat sat", "the cat"])
    left = emb.pad_batch(["the cat sat", "the cat"], side="left")
    assert right.shape == left.shape == (2, 3)
    assert right[1, 2] == 0 and left[1, 0] == 0 and (left[1, 1:] == right[1, :2]).all()
    assert emb.pad_batch(["the"], length=4).tolist() == [[emb.index["the"], 0, 0, 0]]
    with pytest.raises(ValueError, match="shorter than the longest"):
        emb.pad_batch(["the cat sat"], length=2)
    with pytest.raises(ValueError, match="'left' or 'right'"):
        emb.pad_batch(["the"], side="middle")


def test_unknown_words_and_bad_ids():
    emb = load_toy_embeddings()
    with pytest.raises(ValueError, match=r"not in the toy vocabulary: \['zebra'\]"):
        emb.ids("the zebra")
    with pytest.raises(TypeError, match="integer token ids"):
        emb(torch.ones(3))


def test_committed_data_matches_the_script():
    """data/toy_embeddings.json and data/sentences.json are exactly what the script writes."""
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "make_toy_embeddings.py"), "--check"],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
