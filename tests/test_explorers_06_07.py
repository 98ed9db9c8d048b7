"""The explorers of notebooks 06 (heads) and 07 (depth): every control swept, values checked."""

import numpy as np
import pytest
import torch
from torch.testing import assert_close

import helpers
from helpers.embeddings import load_toy_embeddings, tokenize
from helpers.explorers.depth import (
    ACTIVATION_LIMITS,
    D_MODEL,
    GAIN_LABELS,
    GAINS,
    GPT2_GAIN,
    GRADIENT_LIMITS,
    MAX_DEPTH,
    PLACEMENTS,
    depth_explorer,
    depth_table,
    layer_scales,
    make_stack,
    one_thread,
)
from helpers.explorers.heads import (
    RELATIONS,
    SCALES,
    SENTENCES,
    hand_set_attention,
    head_relations,
    head_weights,
    heads_explorer,
    mean_entropy,
    score_scale,
    split_diagram,
)
from tests.widget_sweep import sweep

# --- 06: heads ------------------------------------------------------------------------


def test_heads_explorer_sweeps_every_control():
    sweep(heads_explorer())


@pytest.mark.parametrize("num_heads", [1, 2, 4, 8])
def test_every_head_count_shares_the_same_parameters(num_heads):
    axes = load_toy_embeddings().axes
    one, many = hand_set_attention(1, axes), hand_set_attention(num_heads, axes)
    assert sum(p.numel() for p in many.parameters()) == 4 * 8**2
    for a, b in zip(one.parameters(), many.parameters(), strict=True):
        assert torch.equal(a, b)


def test_head_weights_are_rows_of_a_multi_head_attention():
    sentence = SENTENCES[0]
    emb = load_toy_embeddings()
    x = emb.embed(sentence)[None]
    _, weights = hand_set_attention(4, emb.axes)(x, x, x)
    assert_close(torch.from_numpy(head_weights(sentence, 4)), weights[0])
    assert np.allclose(head_weights(sentence, 8).sum(-1), 1.0)


def test_single_relation_heads_are_sharp_where_the_relation_applies():
    tokens = tokenize(SENTENCES[0])
    weights = head_weights(SENTENCES[0], 8)  # head j = relation j alone
    sat, cat, mat = tokens.index("sat"), tokens.index("cat"), tokens.index("mat")
    assert head_relations(8, 0) == ["who acts?"] and weights[0, sat].argmax() == cat
    assert head_relations(8, 2) == ["on what?"] and weights[2, sat].argmax() == mat
    assert weights[0, sat, cat] > 0.8 and weights[2, sat, mat] > 0.9
    robot = tokenize(SENTENCES[1])
    assert head_relations(8, 3) == ["which thing?"]
    assert head_weights(SENTENCES[1], 8)[3, robot.index("red")].argmax() == robot.index("cup")


def test_head_selector_follows_the_number_of_heads():
    live = heads_explorer(num_heads=8, head=7)
    live.set(num_heads=2)
    assert live.controls["head"].max == 1 and live.controls["head"].value == 1
    assert live.readouts["head"] == "1 of h = 2" and live.readouts["d_k = 8 / h"] == 4
    live.set(num_heads=1)
    assert live.controls["head"].value == 0
    assert live.readouts["this head compares"] == ", ".join(name for name, _, _ in RELATIONS)


def test_heads_explorer_rejects_a_non_divisor():
    with pytest.raises(ValueError, match="num_heads must divide d_model = 8"):
        heads_explorer(num_heads=3)


def test_every_control_has_a_description():
    for control in heads_explorer().controls.values():
        assert control.description


def test_split_diagram_draws_one_colour_per_head():
    import matplotlib.pyplot as plt

    fig = split_diagram(n=3, d_model=6, num_heads=3)
    left, right = fig.axes
    assert left.images[0].get_array().shape[:2] == (3, 6)
    assert len(right.get_xticklabels()) == 3
    plt.close(fig)


def test_split_diagram_wrong_view_panel_mixes_two_neighbouring_tokens():
    """Notebook 06's claim: view(h, n, d_k) gives each 'head' numbers of two neighbouring tokens."""
    import matplotlib.pyplot as plt

    fig = split_diagram(n=5, d_model=8, num_heads=4, show_wrong_view=True)
    right, wrong = fig.axes[1:]
    d_k, gap = 2, 1
    for head in range(4):
        def tokens_in(ax, head=head):
            left = head * (d_k + gap)
            return {int(t.get_text()) for t in ax.texts if left <= t.get_position()[0] < left + d_k}
        assert tokens_in(right) == set(range(5))  # every token, its own slice
        assert tokens_in(wrong) == {head, head + 1}
    plt.close(fig)


def test_rescoring_four_heads_without_the_scale_gives_the_eight_head_row():
    """The 'more heads = sharper' confound: for 'sat', h = 4 -> 8 is only the 1/√d_k factor."""
    tokens = tokenize(SENTENCES[0])
    sat = tokens.index("sat")
    assert np.array_equal(head_weights(SENTENCES[0], 4, "none")[0, sat], head_weights(SENTENCES[0], 8)[0, sat])
    assert not np.allclose(head_weights(SENTENCES[0], 4)[0, sat], head_weights(SENTENCES[0], 8)[0, sat])


@pytest.mark.parametrize("num_heads", [1, 2, 4, 8])
def test_score_scales(num_heads):
    d_k = 8 // num_heads
    assert score_scale("1/√d_k", 8, num_heads) == pytest.approx(d_k**-0.5)
    assert score_scale("1/√d_model", 8, num_heads) == pytest.approx(8**-0.5)
    assert score_scale("none", 8, num_heads) == 1.0
    weights = {scale: head_weights(SENTENCES[0], num_heads, scale) for scale in SCALES}
    assert all(np.allclose(w.sum(-1), 1.0) for w in weights.values())
    if num_heads > 1:  # the bug flattens every head: higher entropy than the right scale
        assert mean_entropy(weights["1/√d_model"]) > mean_entropy(weights["1/√d_k"])


def test_unknown_scale_is_refused():
    with pytest.raises(ValueError, match="scale must be one of"):
        heads_explorer(scale="1/d_k")


def test_scale_control_changes_the_readout():
    live = heads_explorer(num_heads=8, head=0)
    assert live.readouts["scores multiplied by"] == 1.0
    live.set(scale="1/√d_model")
    assert live.readouts["scores multiplied by"] == round(8**-0.5, 3)
    sat = tokenize(SENTENCES[0]).index("sat")
    assert live.frame.weights[sat].max() < head_weights(SENTENCES[0], 8)[0, sat].max()


def test_explorer_layer_is_helpers_multi_head_attention():
    assert isinstance(hand_set_attention(2, load_toy_embeddings().axes), helpers.MultiHeadAttention)


# --- 07: depth ------------------------------------------------------------------------

def test_depth_explorer_sweeps_every_control():
    live = depth_explorer(depth=8)
    sweep(live)
    assert all(control.description for control in live.controls.values())


@pytest.mark.parametrize("gain", GAINS)
@pytest.mark.parametrize("norm_first", [False, True])
def test_scales_stay_inside_the_fixed_axes(gain, norm_first):
    act, grad = layer_scales(MAX_DEPTH, norm_first, gain)
    assert act.shape == grad.shape == (MAX_DEPTH,)
    assert np.all(np.isfinite(act)) and np.all(np.isfinite(grad))
    assert ACTIVATION_LIMITS[0] < act.min() and act.max() < ACTIVATION_LIMITS[1]
    assert GRADIENT_LIMITS[0] < grad.min() and grad.max() < GRADIENT_LIMITS[1]


def test_post_norm_pins_the_stream_and_pre_norm_lets_it_grow():
    post, _ = layer_scales(MAX_DEPTH, False)
    pre, pre_grad = layer_scales(MAX_DEPTH, True)
    np.testing.assert_allclose(post, 1.0, atol=1e-4)
    assert pre[-1] > 1.8 * pre[0]
    assert pre_grad[0] == pre_grad.max()  # the identity path delivers the most at the bottom


def test_stronger_branches_starve_post_norms_lower_blocks():
    _, grad = layer_scales(MAX_DEPTH, False, 4.0)
    assert grad[: MAX_DEPTH // 2].mean() < 0.5 * grad[MAX_DEPTH // 2 :].mean()


def test_gpt2_gain_keeps_both_placements_near_one():
    """GPT-2's 1/√(2L) branch scale: at initialisation the two placements barely differ."""
    assert GPT2_GAIN == pytest.approx(1 / 8) and set(GAIN_LABELS) == set(GAINS)
    post_act, post_grad = layer_scales(MAX_DEPTH, False, GPT2_GAIN)
    pre_act, pre_grad = layer_scales(MAX_DEPTH, True, GPT2_GAIN)
    assert pre_act.max() < 1.5 and np.all((post_grad > 0.7) & (post_grad < 1.2))
    np.testing.assert_allclose(pre_grad, post_grad, rtol=0.25)  # at gain 1: by up to half


def scales_at_one_depth(blocks, final_norm, norm_first, seed=0):
    """The experiment as notebook 07 writes it: one stack of ``len(blocks)`` blocks, run alone."""
    g = torch.Generator().manual_seed(seed + 1)
    x, readout = torch.randn(2, 10, D_MODEL, generator=g), torch.randn(2, 10, D_MODEL, generator=g)
    h, inputs, activations = x.requires_grad_(True), [], []
    for block in blocks:
        block.norm_first = norm_first
        h.retain_grad()
        inputs.append(h)
        h = block(h)
        activations.append(h.pow(2).mean().sqrt().item())
    ((final_norm(h) if norm_first else h) * readout).sum().backward()
    return np.array(activations), np.array([t.grad.pow(2).mean().sqrt().item() for t in inputs])


@pytest.mark.parametrize("gain", GAINS)
@pytest.mark.parametrize("norm_first", [False, True])
def test_the_all_depths_table_equals_each_depth_run_alone(gain, norm_first):
    with one_thread():
        blocks, final_norm = make_stack(MAX_DEPTH, gain)  # make_stack(L) = the first L of these
        for depth in (1, 7, MAX_DEPTH):
            act, grad = scales_at_one_depth(blocks[:depth], final_norm, norm_first)
            want_act, want_grad = layer_scales(depth, norm_first, gain)
            np.testing.assert_allclose(want_act, act, rtol=1e-5)
            np.testing.assert_allclose(want_grad, grad, rtol=1e-5)
    _, gradients = depth_table(norm_first, gain)
    assert np.isnan(gradients[np.triu_indices(MAX_DEPTH, k=1)]).all()  # block ℓ > L is not in a depth-L stack
    assert not np.isnan(gradients[np.tril_indices(MAX_DEPTH)]).any()


def test_depth_updates_only_redraw():
    """Every position is computed once (``depth_table``, cached), so an update after the first
    visit of a (placement, gain) is only a redraw: no table is computed again. Its speed is
    measured by ``make bench``."""
    live = depth_explorer(depth=1)
    for gain in GAINS:
        live.set(gain=gain)
    computed = depth_table.cache_info().misses
    for gain in GAINS:
        live.set(gain=gain)
        for depth in range(1, MAX_DEPTH + 1, 3):
            live.set(depth=depth)
    assert depth_table.cache_info().misses == computed
    assert depth_table.cache_info().currsize >= len(GAINS) * len(PLACEMENTS)


def test_a_shallow_stack_is_a_prefix_of_the_deep_one():
    deep, _ = layer_scales(MAX_DEPTH, True)
    shallow, _ = layer_scales(5, True)
    np.testing.assert_allclose(shallow, deep[:5])


def test_depth_and_placement_checks():
    with pytest.raises(ValueError, match="depth must be between 1 and 32"):
        make_stack(0)
    with pytest.raises(ValueError, match="placement must be one of"):
        depth_explorer(placement="sandwich")
    assert set(PLACEMENTS.values()) == {False, True}


def test_gain_scales_the_branch_outputs_only():
    plain, _ = make_stack(2, gain=1.0)
    strong, _ = make_stack(2, gain=4.0)
    assert_close(strong[0].self_attn.w_o.weight, 4 * plain[0].self_attn.w_o.weight)
    assert_close(strong[0].ffn.down.weight, 4 * plain[0].ffn.down.weight)
    assert_close(strong[0].ffn.up.weight, plain[0].ffn.up.weight)
