"""helpers.vla: scenes, patches, action bins, masks, KV-cache decoding, the shipped weights, attention shares."""

import json

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch.testing import assert_close

from helpers.llama import LlamaBlock
from helpers.vla import (
    BACKGROUND,
    COLOURS,
    FOOT,
    GRID,
    HELD_OUT_COMBOS,
    IMAGE,
    N_BINS,
    OBJECT,
    PATCH,
    SHAPES,
    VOCAB,
    WORDS,
    PatchEmbedding,
    VLAConfig,
    bin_centres,
    build_model,
    discretise,
    encode_batch,
    held_out_scenes,
    image_attention,
    load_mask_comparison,
    load_metadata,
    load_models,
    mass_shares,
    object_patches,
    patchify,
    sample_scene,
    scene_actions,
    success_rate,
    swap_colour,
    train,
    vla_mask,
)


@pytest.fixture(autouse=True)
def one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def shipped():
    return load_models()


def test_scenes_are_seeded_and_well_formed():
    a = held_out_scenes(200, seed=5)
    assert a == held_out_scenes(200, seed=5)
    for scene in a:
        combos = [(c, s) for c, s, _, _ in scene.objects]
        assert len({c for c, _ in combos}) == 3 and not set(combos) & set(HELD_OUT_COMBOS)
        assert object_patches(scene).sum(0).max() == 1  # objects never overlap
        assert object_patches(scene).sum() == 3 * FOOT**2
    assert all(s.objects[0][:2] in HELD_OUT_COMBOS for s in held_out_scenes(50, "held out"))
    with pytest.raises(ValueError, match="combos"):
        sample_scene(np.random.default_rng(0), "all")


def test_render_paints_each_object_in_its_colour_and_footprint():
    scene = held_out_scenes(1)[0]
    image = encode_batch([scene])[0][0]  # (3, IMAGE, IMAGE)
    assert image.shape == (3, IMAGE, IMAGE)
    for colour, _, r, c in scene.objects:
        window = image[:, r * PATCH : r * PATCH + 8, c * PATCH : c * PATCH + 8].reshape(3, -1)
        painted = (window != BACKGROUND).any(0)
        assert painted.sum() >= 20
        assert_close(window[:, painted].mean(1), torch.tensor(COLOURS[colour]))


@pytest.mark.parametrize("seed", range(3))
def test_patchify_equals_the_strided_conv(seed):
    g = torch.Generator().manual_seed(seed)
    B, C, p = int(torch.randint(1, 4, (1,), generator=g)), int(torch.randint(1, 4, (1,), generator=g)), int(torch.randint(1, 5, (1,), generator=g))
    rows, cols = (int(v) for v in torch.randint(1, 5, (2,), generator=g))
    images = torch.randn(B, C, rows * p, cols * p, generator=g, dtype=torch.float64)
    embed = PatchEmbedding(7, patch=p, channels=C).double()
    by_reshape = patchify(images, p) @ embed.conv.weight.reshape(7, -1).T + embed.conv.bias
    assert_close(embed(images), by_reshape)
    assert patchify(images, p).shape == (B, rows * cols, C * p * p)
    last = (rows - 1) * cols + cols - 1  # the bottom-right patch, its first channel
    assert torch.equal(patchify(images, p)[0, last, : p * p].reshape(p, p), images[0, 0, -p:, -p:])


def test_patchify_rejects_bad_shapes():
    with pytest.raises(ValueError, match="multiples of patch=4"):
        patchify(torch.zeros(1, 3, 10, 12), 4)


def test_action_bins_round_trip():
    values = torch.linspace(-1, 1, 101, dtype=torch.float64)
    bins = discretise(values)
    assert bins.min() == 0 and bins.max() == N_BINS - 1
    assert (bin_centres(bins) - values).abs().max() <= 1 / N_BINS + 1e-12  # half a bin width
    scene = held_out_scenes(1)[0]
    _, _, r, c = scene.objects[0]
    x, y, grip = scene_actions(scene)
    assert abs(x - ((c * PATCH + OBJECT / 2) / IMAGE * 2 - 1)) < 1e-12 and abs(y - ((r * PATCH + OBJECT / 2) / IMAGE * 2 - 1)) < 1e-12
    assert grip == (1.0 if scene.verb == "pick" else -1.0)
    ids = encode_batch([scene])[2]
    assert (ids >= len(WORDS)).all() and (ids < len(VOCAB)).all()


def test_masks():
    causal, prefix = vla_mask(7, 4, "causal"), vla_mask(7, 4, "prefix")
    assert torch.equal(causal, torch.ones(7, 7, dtype=torch.bool).tril())
    assert prefix[:4, :4].all() and torch.equal(prefix[4:], causal[4:])  # actions stay causal
    assert not prefix[:4, 4:].any()  # the prefix never sees an action
    with pytest.raises(ValueError, match="causal"):
        vla_mask(3, 2, "bidirectional")


def test_model_is_llama_blocks_and_patches_never_see_the_instruction_under_the_causal_mask():
    model = build_model().double()
    assert all(isinstance(b, LlamaBlock) for b in model.blocks)
    images, instructions, actions = encode_batch(held_out_scenes(2))
    images = images.double()
    other = instructions.clone()
    other[:, 1] = WORDS.index("yellow") if other[0, 1] != WORDS.index("yellow") else WORDS.index("red")
    n = model.config.n_patches
    with torch.no_grad():
        a, b = model(images, instructions), model(images, other)
    assert_close(a[:, :n], b[:, :n], rtol=0, atol=0)  # causal: patch outputs ignore the words
    prefix = build_model(VLAConfig(mask="prefix")).double()
    with torch.no_grad():
        assert (prefix(images, instructions)[:, :n] - prefix(images, other)[:, :n]).abs().max() > 1e-6


def test_with_two_prefix_words_the_prefix_ends_at_the_colour_word():
    """prefix_words=2 (the default, the shipped design): the patches, the verb and the colour word see each
    other, never the shape word, so the colour word, which the shape word is scored at, cannot see its own
    target under either mask. prefix_words=3 puts the whole instruction in the prefix."""
    config = VLAConfig(mask="prefix", prefix_words=2)
    assert config.n_prefix == config.n_patches + 2 == VLAConfig().n_prefix
    assert VLAConfig(prefix_words=3).n_prefix == config.n_patches + 3
    with pytest.raises(ValueError, match="prefix_words"):
        _ = VLAConfig(prefix_words=1).n_prefix
    images, instructions, actions = encode_batch(held_out_scenes(3))
    other = instructions.clone()
    other[:, 2] = torch.tensor([WORDS.index("cup") if w != WORDS.index("cup") else WORDS.index("ball") for w in other[:, 2]])
    for mask in ("causal", "prefix"):
        model = build_model(VLAConfig(mask=mask, prefix_words=2)).double()
        with torch.no_grad():
            a, b = (model(images.double(), torch.cat([words, actions], dim=1)) for words in (instructions, other))
            assert torch.equal(model.act(images, instructions), model.act_without_cache(images, instructions))
        assert_close(a[:, : config.n_prefix], b[:, : config.n_prefix], rtol=0, atol=0)
        assert (a[:, config.n_prefix :] - b[:, config.n_prefix :]).abs().max() > 1e-6


@pytest.mark.parametrize("mask", ["causal", "prefix"])
def test_kv_cache_decoding_equals_full_recompute(mask, shipped):
    model = shipped[mask]
    images, instructions, _ = encode_batch(held_out_scenes(64))
    with torch.no_grad():
        assert torch.equal(model.act(images, instructions), model.act_without_cache(images, instructions))
        untrained = build_model(VLAConfig(mask=mask)).eval()
        assert torch.equal(untrained.act(images, instructions), untrained.act_without_cache(images, instructions))


def test_decoding_returns_the_logits_each_action_token_was_chosen_from(shipped):
    images, instructions, _ = encode_batch(held_out_scenes(16))
    with torch.no_grad():
        ids, logits = shipped["prefix"].act_with_logits(images, instructions)
        assert torch.equal(ids, shipped["prefix"].act(images, instructions))
        assert logits.shape == (16, 3, N_BINS) and torch.equal(logits.argmax(-1) + len(WORDS), ids)
        first = shipped["prefix"](images, instructions)[:, -1, len(WORDS) :]  # the x token, from the full forward
    assert_close(logits[:, 0], first, atol=1e-5, rtol=1e-5)


def test_training_runs_in_float64_and_leaves_float32_weights():
    config = VLAConfig(steps=2, batch_size=4)
    model = build_model(config)
    seen = []
    model.lm_head.register_forward_hook(lambda _m, _i, out: seen.append(out.dtype))
    losses, curve = train(model, progress=False, eval_every=2)
    assert set(seen) == {torch.float64} and len(losses) == 2 and curve[0][0] == 2
    assert {p.dtype for p in model.state_dict().values()} == {torch.float32}


def test_fused_attention_with_is_causal_is_top_left_aligned():
    """Why the cache passes no mask: is_causal with n_q < n_k lets the last query see only key 0."""
    q, k = torch.randn(1, 1, 1, 4), torch.randn(1, 1, 5, 4)
    v = torch.eye(5)[None, None]
    assert_close(F.scaled_dot_product_attention(q, k, v, is_causal=True), v[..., :1, :])


def test_shipped_models_succeed_on_unseen_scenes(shipped):
    meta = load_metadata()
    assert list(shipped) == ["causal", "prefix"]  # a fixed order, whatever order the metadata comes in
    assert shipped["causal"].config.mask == "causal" and shipped["prefix"].config.mask == "prefix"
    assert "causal.curve" in meta and "prefix.cpu_seconds" in meta
    rows = {r["mask"]: r for r in load_mask_comparison() if r["seed"] == shipped["causal"].config.init_seed}
    for mask, model in shipped.items():  # the shipped pair is the comparison's row of its seed (no cherry-picked run)
        assert success_rate(model, held_out_scenes(1000)) == rows[mask]["success on unseen scenes"]


def test_attention_shares_sum_and_chance(shipped):
    scenes = held_out_scenes(20)
    weights = image_attention(shipped["causal"], *encode_batch(scenes)[:2])
    config = shipped["causal"].config
    assert weights.shape == (config.num_layers, 20, config.num_heads, 4, GRID * GRID)
    shares = mass_shares(weights, scenes)
    assert shares["chance target"] == FOOT**2 / GRID**2 and shares["chance distractors"] == 2 * FOOT**2 / GRID**2
    total = shares["target"] + shares["distractors"]
    assert ((total >= 0) & (total <= 1 + 1e-6)).all()
    assert shares["image"].shape == shares["target"].shape
    torch.testing.assert_close(shares["image"], weights.sum(-1).mean(1))  # the part of each row on the patches
    assert ((shares["image"] >= 0) & (shares["image"] <= 1 + 1e-6)).all()


def test_swap_colour_names_the_other_object_of_the_same_shape():
    scenes = [s for s in held_out_scenes(100) if swap_colour(s) is not None]
    assert scenes
    for scene in scenes:
        swapped = swap_colour(scene)
        assert swapped.instruction[2] == scene.instruction[2] and swapped.instruction[1] != scene.instruction[1]
        assert torch.equal(encode_batch([scene])[0], encode_batch([swapped])[0])  # the same image
    assert all(s[1] in SHAPES for s in scenes[0].objects)


@pytest.mark.parametrize("steps", [None, 3000])
def test_mask_comparison_log_holds_both_masks_on_one_schedule(steps):
    runs = load_mask_comparison(steps=steps)
    assert {r["steps"] for r in runs} == {runs[0]["steps"]}  # one schedule for both masks
    for mask in ("causal", "prefix"):
        seeds = [r["seed"] for r in runs if r["mask"] == mask]
        assert len(set(seeds)) == len(seeds) >= 5
    for run in runs:
        steps = [s for s, _ in run["probe"]]
        assert steps == list(range(steps[0], run["steps"] + 1, steps[0]))
        assert run["steps to 95 %"] == next((s for s, p in run["probe"] if p >= 0.95), None)
        assert (run["init_seed"], run["data_seed"]) == (run["seed"], run["seed"] + 1)
        fractions = [p for _, p in run["probe"]] + [v for k, v in run.items() if k.startswith(("success", "accuracy", "points", "colour", "writes"))]
        assert all(0 <= f <= 1 for f in fractions)
        assert run["points at the target"] >= run["success on unseen scenes"]  # a success points at the target


def test_mask_comparison_loader_names_what_is_wrong(tmp_path):
    with pytest.raises(FileNotFoundError, match="compare_vla_masks"):
        load_mask_comparison(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text('{"runs": [{"mask": "causal", "seed": 0}]}', encoding="utf-8")
    with pytest.raises(ValueError, match="expected"):
        load_mask_comparison(bad)


def test_the_comparison_log_is_the_shipped_design():
    """data/vla_mask_comparison.json: 10 seeds per mask, the shape word in the suffix (prefix_words=2), and the
    shipped models are its rows of VLAConfig's seed."""
    from helpers.data import DATA_DIR
    from helpers.vla import MASK_COMPARISON_FILE, VLAConfig, load_metadata

    runs = load_mask_comparison()
    assert sorted((r["mask"], r["seed"]) for r in runs) == sorted((m, s) for m in ("causal", "prefix") for s in range(10))
    schedule = json.loads((DATA_DIR / MASK_COMPARISON_FILE).read_text(encoding="utf-8"))["schedule"]
    assert schedule["prefix_words"] == VLAConfig().prefix_words == 2 and schedule["steps"] == VLAConfig().steps
    meta = load_metadata()
    for mask in ("causal", "prefix"):
        row = next(r for r in runs if r["mask"] == mask and r["seed"] == VLAConfig().init_seed)
        assert [tuple(p) for p in json.loads(meta[f"{mask}.curve"])] == row["probe"]


def test_the_schedule_tuning_log_follows_its_rule():
    """data/vla_schedule_tuning.json: 1500 against 3000 steps on seeds 0-2 of both masks; its 1500-step rows are the
    comparison log's; the means are the runs' means; the chosen schedule is the rule's (the longer only if its mean
    final success is more than 2 points higher)."""
    from helpers.vla import load_schedule_tuning
    from scripts.compare_vla_masks import (
        MASKS,
        TUNING_MARGIN,
        TUNING_SEEDS,
        TUNING_STEPS,
        tuning_choice,
    )

    log = load_schedule_tuning()
    runs = log["runs"]
    assert sorted((r["steps"], r["mask"], r["seed"]) for r in runs) == sorted(
        (steps, mask, seed) for steps in TUNING_STEPS for mask in MASKS for seed in TUNING_SEEDS)
    logged = {(r["mask"], r["seed"], r["steps"]): r for r in load_mask_comparison()}
    for run in runs:
        if run["steps"] == TUNING_STEPS[0]:  # the shipped models' schedule: its rows are the comparison log's
            row = logged[run["mask"], run["seed"], run["steps"]]
            assert all(run[k] == row[k] for k in run)
        assert 0 <= run["success on unseen scenes"] <= 1
    means, chosen = tuning_choice(runs)
    assert {int(k): v for k, v in log["mean success"].items()} == pytest.approx(means, abs=1e-6)
    for steps, by_mask in log["mean success by mask"].items():
        for mask, mean in by_mask.items():
            picked = [r["success on unseen scenes"] for r in runs if (r["steps"], r["mask"]) == (int(steps), mask)]
            assert mean == pytest.approx(sum(picked) / len(picked), abs=1e-6)
    assert log["chosen steps"] == chosen == (TUNING_STEPS[1] if means[TUNING_STEPS[1]] - means[TUNING_STEPS[0]] > TUNING_MARGIN
                                             else TUNING_STEPS[0])
    assert all(r["init_seed"] == r["seed"] and r["data_seed"] == r["seed"] + 1 for r in runs)


def test_the_tuned_schedule_has_its_own_ten_seed_log():
    """data/vla_mask_comparison_<chosen>.json: the schedule the tuning chose, 10 seeds per mask; seeds 0-2 are the
    tuning's own runs of that schedule, field for field (they chose it, then count in the comparison)."""
    from helpers.data import DATA_DIR
    from helpers.vla import load_schedule_tuning, mask_comparison_file

    tuning = load_schedule_tuning()
    chosen = tuning["chosen steps"]
    runs = load_mask_comparison(steps=chosen)
    assert sorted((r["mask"], r["seed"]) for r in runs) == sorted((m, s) for m in ("causal", "prefix") for s in range(10))
    assert {r["steps"] for r in runs} == {chosen}
    schedule = json.loads((DATA_DIR / mask_comparison_file(chosen)).read_text(encoding="utf-8"))["schedule"]
    assert schedule["steps"] == chosen and schedule["prefix_words"] == 2
    logged = {(r["mask"], r["seed"]): r for r in runs}
    for run in (r for r in tuning["runs"] if r["steps"] == chosen):
        assert logged[run["mask"], run["seed"]] == run
