"""helpers.toy_model: the task, the model built from helpers' layers, training, safe save/load."""

import dataclasses
import json

import pytest
import torch
from torch import nn
from torch.testing import assert_close

import helpers
from helpers.data import DATA_DIR
from helpers.toy_model import (
    ONE_LAYER_FILE,
    PAD,
    ToyConfig,
    ToyReverser,
    ablate_attention,
    build_model,
    decode,
    encode,
    held_out_set,
    load_metadata,
    load_model,
    make_batch,
    reverse_targets,
    save_model,
    token_accuracy,
    train,
)


def test_targets_reverse_the_real_tokens_and_keep_padding():
    x = torch.stack([encode("BADGE"), encode("AB"), encode("ABCDEFGH")])
    y = reverse_targets(x)
    assert [decode(r) for r in y] == ["EGDAB", "BA", "HGFEDCBA"]
    assert (y[x == PAD] == PAD).all()


def test_batches_are_seeded_and_in_range():
    config = ToyConfig()
    a = make_batch(64, torch.Generator().manual_seed(3), config)
    b = make_batch(64, torch.Generator().manual_seed(3), config)
    assert all(torch.equal(s, t) for s, t in zip(a, b, strict=True))
    lengths = (a[0] != PAD).sum(1)
    assert lengths.min() >= config.min_len and lengths.max() <= config.max_len
    for row, n in zip(a[0], lengths, strict=True):  # padding only at the end
        assert (row[:n] != PAD).all() and (row[n:] == PAD).all()


@pytest.mark.parametrize("text", ["", "ABCDEFGHI", "abc", "AKB"])
def test_encode_rejects_bad_text(text):
    with pytest.raises(ValueError, match="letters"):
        encode(text)


def test_model_is_made_of_helpers_layers_and_is_seeded():
    model = build_model()
    assert all(isinstance(b, helpers.EncoderBlock) and b.norm_first for b in model.blocks)
    assert isinstance(model.norm, helpers.LayerNorm)
    again = build_model()
    assert all(torch.equal(p, q) for p, q in zip(model.state_dict().values(), again.state_dict().values(), strict=True))
    assert sum(p.numel() for p in model.parameters()) == 18_123


def test_padding_never_receives_attention(one_thread):
    model = build_model().eval()
    x = torch.stack([encode("BADGE"), encode("ABCDEFGH")])
    with torch.no_grad():
        model(x)
    weights = model.attention()  # (layers, B, heads, n, n)
    assert weights.shape == (2, 2, 2, 8, 8)
    assert weights[:, 0, :, :, 5:].abs().max() == 0
    assert_close(weights.sum(-1), torch.ones_like(weights.sum(-1)))


def test_forward_rejects_bad_input():
    model = build_model()
    with pytest.raises(ValueError, match="integer token ids"):
        model(torch.zeros(2, 8))
    with pytest.raises(ValueError, match="at most 8"):
        model(torch.ones(1, 9, dtype=torch.long))


@pytest.fixture
def one_thread():
    """Tiny matrices: one thread is as fast, reproducible, and immune to a busy second core."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def test_a_few_training_steps_lower_the_loss_deterministically(one_thread):
    config = dataclasses.replace(ToyConfig(), steps=15)
    a, b = build_model(config), build_model(config)
    losses_a, losses_b = train(a, config, progress=False), train(b, config, progress=False)
    assert losses_a == losses_b and losses_a[-1] < losses_a[0]


def test_training_runs_in_float64_and_leaves_float32_weights(one_thread):
    config = dataclasses.replace(ToyConfig(), steps=3)
    model = build_model(config)
    seen = []
    model.readout.register_forward_hook(lambda _m, _i, out: seen.append(out.dtype))
    train(model, config, progress=False)
    assert seen == [torch.float64] * 3
    assert {p.dtype for p in model.state_dict().values()} == {torch.float32} and not model.training


def test_training_reproduces_the_shipped_one_layer_model(one_thread):
    """What exercise 10.5 asks a learner to do, on whatever CPU runs this test (a few seconds)."""
    from helpers.training import largest_difference

    path = DATA_DIR / ONE_LAYER_FILE
    shipped = load_model(path)
    model = build_model(shipped.config)
    losses = train(model, progress=False)
    assert largest_difference(model.state_dict(), shipped.state_dict()) < 1e-5
    assert max(abs(a - b) for a, b in zip(losses, json.loads(load_metadata(path)["losses"]), strict=True)) < 1e-6
    x, y = held_out_set()
    assert token_accuracy(model, x, y) == token_accuracy(shipped, x, y)


def test_save_and_load_round_trip_without_pickle(tmp_path):
    model = build_model().eval()
    path = tmp_path / "m.safetensors"
    save_model(model, path, note="hello")
    assert path.read_bytes()[:8] != b"\x80\x04\x95"  # not a pickle
    loaded = load_model(path)
    x, _ = held_out_set(size=32)
    assert_close(loaded(x), model(x))
    assert load_metadata(path)["note"] == "hello"
    with pytest.raises(FileNotFoundError, match="train_toy_model"):
        load_model(tmp_path / "missing.safetensors")


def test_shipped_weights_load_and_solve_the_task(one_thread):
    model = load_model()
    x, y = held_out_set()
    assert token_accuracy(model, x, y) >= 0.99
    meta = load_metadata()
    assert float(meta["held_out_accuracy"]) >= 0.95  # the training time stored beside it is reported by `make bench`, not tested


def test_shipped_last_layer_heads_are_anti_diagonal():
    from helpers.explorers.trained import heads_for, mirror_weight

    model = load_model()
    for word in ["ABCDEFGH", "BADGE", "JIG"]:
        weights, answer = heads_for(model, word)
        assert answer == word[::-1]
        assert min(mirror_weight(weights[-1, h], len(word)) for h in range(2)) > 0.7


def test_ablating_layer_0_attention_drops_held_out_accuracy_to_about_43_percent(one_thread):
    """Notebook 10, section 8: layer 0's diffuse-looking heads are needed (100% -> ~43%)."""
    model = load_model()
    x, y = held_out_set()
    with ablate_attention(model, 0):
        ablated = token_accuracy(model, x, y)
        model(x[:4])
        assert model.blocks[0].attn_weights is not None  # weights still computed, output dropped
    assert 0.40 < ablated < 0.46
    assert token_accuracy(model, x, y) == 1.0  # the hook is gone after the with block
    with pytest.raises(ValueError, match="layer"), ablate_attention(model, 2):
        pass


def test_shipped_one_layer_model_is_far_from_solving_the_task_in_200_steps(one_thread):
    path = DATA_DIR / ONE_LAYER_FILE
    model = load_model(path)
    assert model.config == dataclasses.replace(ToyConfig(), num_layers=1)
    x, y = held_out_set()
    assert 0.55 < token_accuracy(model, x, y) < 0.70
    with torch.no_grad():
        right = (model(x).argmax(-1) == y)[:, 0]
    assert right.float().mean() == 1.0  # output 0 copies the last real letter: the mask alone finds it
    meta = load_metadata(path)  # exercise 10.6: ten times the steps do much better
    assert float(meta["held_out_accuracy_2000_steps"]) > float(meta["held_out_accuracy"]) + 0.15


def test_toy_reverser_is_an_nn_module():
    assert isinstance(ToyReverser(), nn.Module)
