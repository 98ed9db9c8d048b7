"""helpers.vla's interventions: zero- and mean-ablation of heads (everywhere or at some positions),
knocking out one look and activation patching, checked against what they must equal, with and
without the KV cache."""

import pytest
import torch
from torch.testing import assert_close

from helpers.vla import (
    VLAConfig,
    attention_knocked_out,
    build_model,
    colour_word_position,
    encode_batch,
    head_means,
    head_outputs,
    heads_replaced,
    held_out_scenes,
    object_patch,
    object_patches,
    patched_logits,
    patching_recovery,
    residual_replaced,
    residuals,
    sequence_length,
    swap_colour,
)


@pytest.fixture(scope="module", params=["causal", "prefix"])
def model(request):
    torch.manual_seed(0)
    net = build_model(VLAConfig(mask=request.param, init_seed=int(torch.randint(0, 1000, (1,))))).eval()
    with torch.no_grad():  # a random model attends almost uniformly: sharpen layer 0's queries so weights differ
        net.blocks[0].attn.w_q.weight.mul_(8.0)
    return net


def _batch(size=12, seed=3):
    scenes = held_out_scenes(size, seed=seed)
    images, instructions, actions = encode_batch(scenes)
    return scenes, images, instructions, actions


def _logits(net, images, instructions, actions):
    with torch.no_grad():
        return net(images, torch.cat([instructions, actions], dim=1))


def test_zeroing_every_position_is_zero_heads(model):
    _, images, instructions, actions = _batch()
    for layer, heads in ((0, [1]), (1, [0, 3])):
        with torch.no_grad():
            want = model(images, torch.cat([instructions, actions], dim=1), zero_heads={layer: heads})
            want_act = model.act(images, instructions, zero_heads={layer: heads})
        with heads_replaced(model, layer, heads):
            assert_close(_logits(model, images, instructions, actions), want, atol=0, rtol=0)
            with torch.no_grad():
                assert torch.equal(model.act(images, instructions), want_act)
    assert_close(_logits(model, images, instructions, actions), _logits(model, images, instructions, actions))  # hook gone


def test_mean_of_one_scene_is_that_scene():
    """Mean-ablating with means taken over the very scene changes nothing (the mean of one is itself)."""
    net = build_model(VLAConfig(init_seed=5)).eval()
    scenes, images, instructions, actions = _batch(1, seed=8)
    means = head_means(net, scenes)
    assert means.shape == (2, 4, sequence_length(net.config), net.config.d_model // 4)
    intact = _logits(net, images, instructions, actions)
    with heads_replaced(net, 1, [0, 2], means), heads_replaced(net, 0, [3], means):
        assert_close(_logits(net, images, instructions, actions), intact, atol=1e-6, rtol=0)


def test_mean_ablation_puts_the_mean_in_place(model):
    """The replaced slices equal the means (read back before W_O), the other heads are untouched."""
    scenes, images, instructions, actions = _batch()
    means = head_means(model, held_out_scenes(50, seed=4))
    seen = []

    def read_w_o_input():  # registered after heads_replaced's hook, it sees what W_O gets
        probe = model.blocks[1].attn.w_o.register_forward_pre_hook(lambda _m, args: seen.append(args[0]))
        _logits(model, images, instructions, actions)
        probe.remove()

    read_w_o_input()
    with heads_replaced(model, 1, [2], means):
        read_w_o_input()
    intact, ablated = (s.reshape(*s.shape[:2], 4, -1) for s in seen)  # (B, n, h, d_k)
    assert_close(ablated[:, :, 2], means[1, 2].expand_as(ablated[:, :, 2]), atol=0, rtol=0)
    assert_close(ablated[:, :, [0, 1, 3]], intact[:, :, [0, 1, 3]], atol=0, rtol=0)


def test_positions_choose_where(model):
    _, images, instructions, actions = _batch()
    n = sequence_length(model.config)
    intact = _logits(model, images, instructions, actions)
    with heads_replaced(model, 0, [0, 1, 2, 3], positions=[n - 1]):  # only the last position
        last_only = _logits(model, images, instructions, actions)
    if model.config.mask == "causal":  # no earlier position can see the last one
        assert_close(last_only[:, :-1], intact[:, :-1], atol=0, rtol=0)
    assert (last_only[:, -1] - intact[:, -1]).abs().max() > 1e-3
    with heads_replaced(model, 0, [1], positions=range(n)), torch.no_grad():
        every = _logits(model, images, instructions, actions)
    with torch.no_grad():
        assert_close(every, model(images, torch.cat([instructions, actions], dim=1), zero_heads={0: [1]}), atol=0, rtol=0)


@pytest.mark.parametrize("replace", ["zero", "mean", "knock out"])
def test_cached_decoding_equals_recomputation_under_every_intervention(model, replace):
    scenes, images, instructions, _ = _batch()
    colour = colour_word_position(model.config)
    interventions = {
        "zero": lambda: heads_replaced(model, 0, [0], positions=[colour, colour + 2, colour + 3]),
        "mean": lambda: heads_replaced(model, 1, [1], head_means(model, held_out_scenes(20, seed=9))),
        "knock out": lambda: attention_knocked_out(model, 0, 2, colour, object_patch(scenes, 0)),
    }
    with interventions[replace](), torch.no_grad():
        assert torch.equal(model.act(images, instructions), model.act_without_cache(images, instructions))


def test_knocked_out_look_is_renormalised_and_nothing_else_moves(model):
    scenes, images, instructions, actions = _batch()
    layer, head, query = 0, 1, colour_word_position(model.config)
    keys = object_patch(scenes, 0)
    _logits(model, images, instructions, actions)
    before = model.attention()[layer]  # (B, h, n, n)
    with attention_knocked_out(model, layer, head, query, keys):
        _logits(model, images, instructions, actions)
    after = model.attention()[layer]
    rows = torch.arange(len(scenes))
    assert (after[rows, head, query, keys] == 0).all()
    want = before[:, head, query].clone()
    want[rows, keys] = 0
    assert_close(after[:, head, query], want / want.sum(-1, keepdim=True))
    untouched = torch.ones_like(after, dtype=torch.bool)
    untouched[:, head, query] = False
    if model.config.mask == "causal":  # later rows read a changed colour word; earlier ones cannot
        untouched[:, :, query:] = False
    assert_close(after[untouched], before[untouched], atol=0, rtol=0)


def test_several_heads_and_queries_lose_the_same_key(model):
    """Lists of heads and queries: each (head, query) row loses its key and is renormalised; in layer 0 no other row moves."""
    scenes, images, instructions, actions = _batch()
    heads, queries = [0, 2], list(range(model.config.n_patches))
    keys = torch.full((len(scenes),), colour_word_position(model.config))
    _logits(model, images, instructions, actions)
    before = model.attention()[0]
    with attention_knocked_out(model, 0, heads, queries, keys):
        _logits(model, images, instructions, actions)
    after = model.attention()[0]
    rows = torch.arange(len(scenes))
    chosen = torch.zeros_like(after, dtype=torch.bool)
    for head in heads:
        for query in queries:
            assert (after[rows, head, query, keys] == 0).all()
            want = before[:, head, query].clone()
            want[rows, keys] = 0
            assert_close(after[:, head, query], want / want.sum(-1, keepdim=True))
            chosen[:, head, query] = True
    assert_close(after[~chosen], before[~chosen], atol=0, rtol=0)


def test_object_patch_and_bad_input():
    scenes = held_out_scenes(20, seed=2)
    for k in range(3):
        covered = torch.stack([object_patches(s)[k] for s in scenes])
        assert covered[torch.arange(20), object_patch(scenes, k)].all()
    net = build_model().eval()
    _, images, instructions, _ = _batch(4)
    with attention_knocked_out(net, 0, 0, colour_word_position(net.config), torch.zeros(3, dtype=torch.long)):
        with pytest.raises(ValueError, match="one key per scene"), torch.no_grad():
            net.act(images, instructions)
    with pytest.raises(ValueError, match="means must be"), heads_replaced(net, 0, [0], torch.zeros(2, 4, 5, 12)):
        pass


# --- activation patching ---------------------------------------------------------


def _pair(size=16, seed=11):
    """Clean and corrupted runs of the same images: the colour word names another object of the same shape."""
    pairs = [(s, swap_colour(s)) for s in held_out_scenes(4 * size, seed=seed) if swap_colour(s) is not None][:size]
    runs = []
    for scenes in ([p[0] for p in pairs], [p[1] for p in pairs]):
        images, instructions, actions = encode_batch(scenes)
        runs.append((images, torch.cat([instructions, actions], dim=1)))
    return runs


def _x_logit_difference(clean, corrupted, model):
    """Metric: at the query that writes x, the logit of the clean run's x token minus the corrupted run's."""
    at = model.config.n_patches + 2
    good, bad = clean[1][:, 3], corrupted[1][:, 3]
    rows = torch.arange(len(good))
    return lambda logits: (logits[rows, at, good] - logits[rows, at, bad]).mean()


def test_recorded_sites_have_their_shapes(model):
    clean, _ = _pair(5)
    n = model.config.n_patches + clean[1].shape[1]
    assert head_outputs(model, *clean).shape == (5, 2, 4, n, 12)
    assert residuals(model, *clean).shape == (5, 3, n, 48)
    with torch.no_grad():  # the last residual, normed and unembedded, is the logits
        assert_close(model.lm_head(model.norm(residuals(model, *clean)[:, -1])), model(*clean), atol=0, rtol=0)


@pytest.mark.parametrize("site", [(0, None), (1, None), (2, None), (0, 2), (1, 1)])
def test_patching_everything_or_nothing(model, site):
    """Every position of a residual patched: exactly the clean run. No position: exactly the corrupted run."""
    layer, head = site
    clean, corrupted = _pair()
    with torch.no_grad():
        want_clean, want_corrupted = model(*clean), model(*corrupted)
    assert_close(patched_logits(model, clean, corrupted, layer, head, positions=[]), want_corrupted, atol=0, rtol=0)
    metric = _x_logit_difference(clean, corrupted, model)
    assert patching_recovery(model, clean, corrupted, metric, layer, head, positions=[]) == 0.0
    if head is None:
        assert_close(patched_logits(model, clean, corrupted, layer), want_clean, atol=0, rtol=0)
        assert patching_recovery(model, clean, corrupted, metric, layer) == 1.0


def test_patching_every_head_and_the_embeddings_is_the_clean_run(model):
    """Block 0's input from the clean run plus every head of every layer: the clean run again (the MLPs follow)."""
    clean, corrupted = _pair()
    outputs = head_outputs(model, *clean)
    with torch.no_grad():
        want = model(*clean)
    with (residual_replaced(model, 0, residuals(model, *clean)[:, 0]), heads_replaced(model, 0, [0, 1, 2, 3], outputs),
          heads_replaced(model, 1, [0, 1, 2, 3], outputs), torch.no_grad()):
        assert_close(model(*corrupted), want, atol=0, rtol=0)


def _by_hand(model, x, layer, mask, head=None, position=None, delta=None):
    """The blocks from ``layer`` on, written out: x + attention (plus delta @ W_O's head columns at
    one position), then x + SwiGLU(RMSNorm(x)); then the final norm and the unembedding."""
    for k, block in enumerate(model.blocks):
        if k < layer:
            continue
        mid = x + block.attn(block.attn_norm(x), mask)
        if k == layer and delta is not None:
            d_k = block.attn.d_k
            w_o = block.attn.w_o.weight[:, head * d_k : (head + 1) * d_k]  # (d_model, d_k)
            mid = mid.clone()
            mid[:, position] += delta @ w_o.T
        x = mid + block.ffn(block.ffn_norm(mid))
    return model.lm_head(model.norm(x))


def test_patching_matches_a_direct_computation(model):
    """Random sites: a residual at some positions, or one head at one position, against the forward pass written out."""
    from helpers.vla import vla_mask

    clean, corrupted = _pair()
    n = model.config.n_patches + clean[1].shape[1]
    mask = vla_mask(n, model.config.n_prefix, model.config.mask)
    generator = torch.Generator().manual_seed(4)
    x_clean, x_corrupted = residuals(model, *clean), residuals(model, *corrupted)
    outputs_clean, outputs_corrupted = head_outputs(model, *clean), head_outputs(model, *corrupted)
    for _ in range(4):
        layer = int(torch.randint(0, 2, (1,), generator=generator))
        chosen = torch.rand(len(clean[1]), n, generator=generator) < 0.3  # (B, n), scene by scene
        x = torch.where(chosen[..., None], x_clean[:, layer], x_corrupted[:, layer])
        with torch.no_grad():
            want = _by_hand(model, x, layer, mask)
        assert_close(patched_logits(model, clean, corrupted, layer, positions=chosen), want, atol=1e-5, rtol=1e-5)

        head, position = int(torch.randint(0, 4, (1,), generator=generator)), int(torch.randint(0, n, (1,), generator=generator))
        delta = outputs_clean[:, layer, head, position] - outputs_corrupted[:, layer, head, position]  # (B, d_k)
        with torch.no_grad():
            want = _by_hand(model, x_corrupted[:, layer], layer, mask, head, position, delta)
        got = patched_logits(model, clean, corrupted, layer, head, positions=[position])
        assert_close(got, want, atol=1e-5, rtol=1e-5)


def test_patching_bad_input(model):
    clean, corrupted = _pair(4)
    with pytest.raises(ValueError, match="same shapes"):
        patched_logits(model, clean, (corrupted[0], corrupted[1][:, :4]), 0)
    with pytest.raises(ValueError, match="position mask"):
        patched_logits(model, clean, corrupted, 0, positions=torch.ones(4, 3, dtype=torch.bool))
    with pytest.raises(ValueError, match="nothing to recover"):
        patching_recovery(model, clean, clean, lambda logits: logits[:, -1, 0].mean(), 0)
