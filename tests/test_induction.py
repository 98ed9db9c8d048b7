"""Notebook 10b's decoder: data, KV-cache generation = full recompute, head scores, ablations."""

import copy
from dataclasses import replace

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from helpers.induction import (
    InductionConfig,
    ablate_heads,
    build_model,
    bump_step,
    copying_score,
    decode_mask,
    generate,
    held_out_set,
    load_curve,
    load_model,
    make_batch,
    mean_ablate_heads,
    ov_circuit,
    prefix_matching_score,
    prefix_targets,
    previous_token_score,
    qk_circuit,
    repeat_mask,
    repeated_sequence,
    split_metrics,
    train,
)
from helpers.layers import merge_heads, split_heads
from helpers.masks import causal_mask
from helpers.scale import KVCache

torch.set_num_threads(1)


def random_config(rng: np.random.Generator) -> InductionConfig:
    heads = int(rng.integers(1, 4))
    return replace(
        InductionConfig(), n=int(rng.integers(8, 20)), min_period=2, max_period=4, vocab_size=int(rng.integers(5, 12)),
        d_model=8 * heads, num_heads=heads, num_layers=int(rng.integers(1, 4)), d_ff=16, init_seed=int(rng.integers(100)),
    )


def test_batches_repeat_a_block_of_different_letters():
    config = InductionConfig()
    x, periods = make_batch(50, torch.Generator().manual_seed(0), config)
    assert x.shape == (50, config.n) and periods.min() >= config.min_period and periods.max() <= config.max_period
    for row, period in zip(x, periods.tolist(), strict=True):
        assert len(set(row[:period].tolist())) == period  # P different letters
        torch.testing.assert_close(row[period:], row[:-period])  # then the same again
    assert repeat_mask(torch.tensor([3]), 5).tolist() == [[False, False, False, True, True]]
    assert repeated_sequence(4, 7).tolist() == repeated_sequence(4, 7).tolist()
    with pytest.raises(ValueError, match="period"):
        repeated_sequence(0, 1)


@pytest.mark.parametrize("seed", range(4))
def test_cached_forward_equals_full_forward(seed):
    rng = np.random.default_rng(seed)
    config = random_config(rng)
    model = build_model(config)
    x = torch.randint(0, config.vocab_size, (int(rng.integers(1, 4)), config.n))
    with torch.no_grad():
        full = model(x)
        caches = [KVCache() for _ in model.blocks]
        cut = int(rng.integers(1, config.n))
        pieces = [model.forward_cached(x[:, :cut], caches)]  # a prompt of several tokens at once
        pieces += [model.forward_cached(x[:, t : t + 1], caches) for t in range(cut, config.n)]  # then one by one
    torch.testing.assert_close(torch.cat(pieces, dim=1), full, atol=1e-5, rtol=1e-5)
    assert all(len(c) == config.n for c in caches)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("temperature", [0.0, 0.7, 1.5])
def test_generation_with_a_kv_cache_equals_full_recompute(seed, temperature):
    rng = np.random.default_rng(seed)
    config = random_config(rng)
    model = build_model(config)
    prompt = torch.randint(0, config.vocab_size, (2, int(rng.integers(1, config.n // 2))))
    new = config.n - prompt.shape[1]
    cached = generate(model, prompt, new, temperature=temperature, seed=seed)
    full = generate(model, prompt, new, temperature=temperature, seed=seed, use_cache=False)
    assert cached.shape == (2, config.n)
    torch.testing.assert_close(cached, full)
    torch.testing.assert_close(cached[:, : prompt.shape[1]], prompt)


def test_decode_mask_is_the_bottom_of_the_causal_mask_not_torch_is_causal():
    torch.testing.assert_close(decode_mask(5, 5), causal_mask(5))
    assert decode_mask(1, 4).tolist() == [[True, True, True, True]]
    q, k, v = torch.randn(1, 2, 3, 8), torch.randn(1, 2, 7, 8), torch.randn(1, 2, 7, 8)
    ours = F.scaled_dot_product_attention(q, k, v, attn_mask=decode_mask(3, 7))
    top_left = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # aligns the triangle to key 0
    explicit = F.scaled_dot_product_attention(q, k, v, attn_mask=torch.ones(3, 7, dtype=torch.bool).tril(4))
    torch.testing.assert_close(ours, explicit)
    assert not torch.allclose(ours, top_left)


def test_scores_on_hand_built_patterns():
    tokens = torch.tensor([[0, 1, 2, 0, 1, 2]])  # period 3
    n = tokens.shape[1]
    previous = torch.zeros(n, n)
    previous[0, 0] = 1
    previous[torch.arange(1, n), torch.arange(n - 1)] = 1  # every query on the key before it
    targets = prefix_targets(tokens)[0]
    assert targets.nonzero().tolist() == [[3, 1], [4, 2], [5, 3]]  # key after the earlier occurrence
    induction = torch.eye(n)
    induction[3:] = targets[3:].float()
    weights = torch.stack([previous, induction])[None]  # (B=1, h=2, n, n)
    torch.testing.assert_close(previous_token_score(weights), torch.tensor([[1.0, 0.0]]))
    torch.testing.assert_close(prefix_matching_score(weights, tokens), torch.tensor([0.0, 1.0]))
    half = (previous + induction) / 2
    torch.testing.assert_close(prefix_matching_score(half[None, None], tokens), torch.tensor([0.5]))
    with pytest.raises(ValueError, match="disagree"):
        prefix_matching_score(weights, tokens[:, :4])
    with pytest.raises(ValueError, match="self-attention weights"):
        previous_token_score(torch.zeros(3, 4))


def test_ablation_removes_exactly_one_head():
    config = replace(InductionConfig(), n=10, d_model=16, num_heads=2, d_ff=16)
    model = build_model(config)
    x = torch.randint(0, config.vocab_size, (3, config.n))
    ablated = ablate_heads(model, [(0, 1)])
    with torch.no_grad():
        before = model(x)
        out = ablated(x)
        ablated.blocks[0].self_attn.w_v.weight[8:] += 1.0  # head 1's values: no longer read
        torch.testing.assert_close(ablated(x), out)
        ablated.blocks[0].self_attn.w_v.weight[:8] += 1.0  # head 0's values still matter
        assert not torch.allclose(ablated(x), out)
    torch.testing.assert_close(model(x), before)  # the original is untouched
    assert not torch.allclose(out, before)
    with pytest.raises(ValueError, match="no head"):
        ablate_heads(model, [(2, 0)])


def test_mean_ablation_keeps_the_mean_and_removes_the_rest():
    config = replace(InductionConfig(), n=10, d_model=16, num_heads=2, d_ff=16)
    model = build_model(config)
    x = torch.randint(0, config.vocab_size, (5, config.n))
    with torch.no_grad():
        before = model(x)
        same = x[:1].expand(4, -1)  # four copies of one sequence: the mean is that sequence's own output
        torch.testing.assert_close(mean_ablate_heads(model, [(0, 1), (1, 0)], same)(same), model(same))
        ablated = mean_ablate_heads(model, [(0, 1)], x)
        out = ablated(x)
        assert not torch.allclose(out, before)
        ablated.blocks[0].self_attn.w_v.weight[8:] += 1.0  # head 1's own values: no longer read
        torch.testing.assert_close(ablated(x), out)
        torch.testing.assert_close(model(x), before)  # the original keeps no hook
    with pytest.raises(ValueError, match="sequences of 10 tokens"):
        ablated(x[:, :4])
    with pytest.raises(ValueError, match="no head"):
        mean_ablate_heads(model, [(0, 2)], x)


def _by_modules(model, layer: int, head: int) -> torch.Tensor:
    """The OV circuit run through the modules themselves (biases zeroed, other heads silenced), float64."""
    model = copy.deepcopy(model).double()
    for module in model.modules():
        if isinstance(module, torch.nn.Linear) and module.bias is not None:
            torch.nn.init.zeros_(module.bias)
    attn = model.blocks[layer].self_attn
    tokens = model.tokens.weight[:, None, :]  # (vocab, 1, d_model): each token its own sequence
    with torch.no_grad():
        values = split_heads(attn.w_v(tokens * model.blocks[layer].norm1.weight), attn.num_heads)  # (vocab, h, 1, d_k)
        only = torch.zeros_like(values)
        only[:, head] = values[:, head]
        written = attn.w_o(merge_heads(only))  # (vocab, 1, d_model)
        return model.readout(written * model.norm.weight)[:, 0]


@pytest.mark.parametrize("seed", range(3))
def test_ov_circuit_equals_running_the_modules(seed):
    rng = np.random.default_rng(seed)
    config = replace(random_config(rng), num_layers=2)
    model = build_model(config)
    for layer in range(2):
        for head in range(config.num_heads):
            torch.testing.assert_close(ov_circuit(model, layer, head), _by_modules(model, layer, head))


def _identity_model(vocab: int, value_map: torch.Tensor) -> torch.nn.Module:
    """One head, d_model = vocab, every matrix the identity except W_V (layer 0) = value_map."""
    config = replace(InductionConfig(), vocab_size=vocab, d_model=vocab, num_heads=1, num_layers=2, d_ff=4)
    model = build_model(config)
    eye = torch.eye(vocab)
    with torch.no_grad():
        model.tokens.weight.copy_(eye)
        model.readout.weight.copy_(eye)
        for block in model.blocks:
            for linear in (block.self_attn.w_q, block.self_attn.w_k, block.self_attn.w_v, block.self_attn.w_o):
                linear.weight.copy_(eye)
        model.blocks[0].self_attn.w_v.weight.copy_(value_map)
    return model


def test_copying_score_of_a_copy_a_shift_and_an_anticopy():
    shift = torch.roll(torch.eye(5), 1, dims=0)  # token t -> t + 1: eigenvalues the 5th roots of unity
    assert copying_score(ov_circuit(_identity_model(5, torch.eye(5)), 0, 0)) == pytest.approx(1.0)
    assert copying_score(ov_circuit(_identity_model(5, -2 * torch.eye(5)), 0, 0)) == pytest.approx(-1.0)
    assert copying_score(ov_circuit(_identity_model(5, shift), 0, 0)) == pytest.approx(0.0, abs=1e-12)
    rng = np.random.default_rng(0)
    matrix = rng.standard_normal((7, 7))
    eigenvalues = np.linalg.eigvals(matrix)
    assert copying_score(torch.tensor(matrix)) == pytest.approx(eigenvalues.sum().real / np.abs(eigenvalues).sum())
    with pytest.raises(ValueError, match="square"):
        copying_score(torch.zeros(3, 4))


def test_qk_circuit_reads_the_key_directly_or_through_a_layer_0_head():
    shift = torch.roll(torch.eye(5), 1, dims=0)
    model = _identity_model(5, shift)  # layer 0 writes token t + 1 for token t; layer 1 matches query and key
    torch.testing.assert_close(qk_circuit(model, 0), torch.eye(5, dtype=torch.float64))
    torch.testing.assert_close(qk_circuit(model, 0, via=0), shift.double())  # query t + 1 matches a key after t
    rng = np.random.default_rng(1)
    model = build_model(replace(random_config(rng), num_layers=2))
    attn = model.blocks[1].self_attn
    x = (model.tokens.weight * model.blocks[1].norm1.weight)[None]  # (1, vocab, d_model)
    with torch.no_grad():
        queries = split_heads(attn.w_q(x) - attn.w_q.bias, attn.num_heads)[0, 0]  # head 0: (vocab, d_k)
        keys = split_heads(attn.w_k(x) - attn.w_k.bias, attn.num_heads)[0, 0]
    torch.testing.assert_close(qk_circuit(model, 0), (queries @ keys.T).double(), rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="layer"):
        qk_circuit(build_model(replace(InductionConfig(), num_layers=1)), 0)


def test_bad_token_input_is_named():
    model = build_model(replace(InductionConfig(), n=8))
    with pytest.raises(ValueError, match="integer token ids"):
        model(torch.randn(1, 4))
    with pytest.raises(ValueError, match="exceed"):
        model(torch.zeros(1, 9, dtype=torch.long))
    with pytest.raises(ValueError, match="temperature"):
        generate(model, torch.zeros(1, 2, dtype=torch.long), 2, temperature=-1)


def test_training_is_deterministic():
    config = replace(InductionConfig(), n=8, min_period=2, max_period=4, d_model=16, d_ff=16, steps=6, eval_every=3)
    runs = []
    for _ in range(2):
        model = build_model(config)
        curve = train(model, progress=False)
        runs.append((model.state_dict(), curve))
    for key, value in runs[0][0].items():
        assert torch.equal(value, runs[1][0][key])
    assert torch.equal(runs[0][1]["loss_repeats"], runs[1][1]["loss_repeats"])
    assert runs[0][1]["head_scores"].shape == (2, 2, 2, 2)  # evals, scores, layers, heads


def test_training_runs_in_float64_and_leaves_float32_weights_and_curve():
    config = replace(InductionConfig(), n=8, min_period=2, max_period=4, d_model=16, d_ff=16, steps=2, eval_every=1)
    model = build_model(config)
    seen = []
    model.readout.register_forward_hook(lambda _m, _i, out: seen.append(out.dtype))
    curve = train(model, progress=False)
    assert set(seen) == {torch.float64}
    assert {p.dtype for p in model.state_dict().values()} == {torch.float32}
    assert {v.dtype for k, v in curve.items() if k != "eval_steps"} == {torch.float32}


def test_shipped_models_learn_induction_and_the_control_does_not():
    two, one = load_model(2), load_model(1)
    x, periods = held_out_set(two.config)
    assert split_metrics(two, x, periods)["accuracy, repeats"] > 0.95
    assert split_metrics(one, x, periods)["accuracy, repeats"] < 0.5
    assert split_metrics(build_model(two.config), x, periods)["accuracy, repeats"] < 0.1
    curve = load_curve(2)
    assert curve["loss_repeats"].shape == (two.config.steps,)
    assert 50 < bump_step(curve["loss_repeats"]) < two.config.steps // 2
