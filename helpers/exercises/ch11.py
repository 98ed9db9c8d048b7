"""Notebook 11 (a tiny vision-language-action model): checkers. None of them prints the expected answer."""

import math
from functools import cache

import torch

from helpers.checks import exercise, number, whole_number

KNOCKED_LAYER, KNOCKED_HEAD = 0, 0  # exercise 11.4: this head of the shipped causal model may not look from the colour word at the target


def _llama3_block() -> int:
    """One Llama 3-8B block: d_model 4096, 32 query heads and 8 key/value heads of 128, d_ff 14336."""
    d, kv, d_ff = 4096, 8 * 128, 14336
    return 2 * d * d + 2 * d * kv + 3 * d * d_ff + 2 * d


@exercise("11.1", hint="count each matrix by its shape: four attention projections, of which W_K and W_V are only as wide as the key/value heads; the three SwiGLU matrices; the two RMSNorm gains; no biases.",
          code_hint="2 * 4096 * 4096 + 2 * 4096 * (8 * 128) + 3 * 4096 * 14336 + 2 * 4096")
def _llama3_block_parameters(answer):
    value = whole_number(answer)
    want = _llama3_block()
    d, d_ff = 4096, 14336
    if value == 4 * d * d + 3 * d * d_ff + 2 * d:
        return "that is a block with 32 key/value heads; Llama 3-8B's W_K and W_V have only 8 heads of 128 each."
    if value == want - 2 * d:
        return "add the two RMSNorm gains."
    if value == want - d * d_ff:
        return "SwiGLU has three matrices (gate, up, down), not two."
    return value == want


def _reference_images(seed: int) -> tuple[torch.Tensor, int]:
    g = torch.Generator().manual_seed(seed)
    B, C, p, rows, cols = (int(torch.randint(1, 5, (1,), generator=g)) for _ in range(5))
    return torch.randn(B, C, rows * p, cols * p, generator=g, dtype=torch.float64), p


def _reference_patchify(images: torch.Tensor, p: int) -> torch.Tensor:
    B, C, H, W = images.shape
    x = images.reshape(B, C, H // p, p, W // p, p).permute(0, 2, 4, 1, 3, 5)
    return x.reshape(B, (H // p) * (W // p), C * p * p)


@exercise("11.2", hint="patchify_by_reshape does a reshape, a permute and a reshape: undo them in reverse order, with the permute that puts every axis back where it came from.")
def _unpatchify(answer):
    if not callable(answer):
        return "the answer is the function itself: check(\"11.2\", unpatchify)."
    for seed in range(6):
        images, p = _reference_images(seed)
        B, C, H, W = images.shape
        got = answer(_reference_patchify(images, p).clone(), p, H, W)
        if got is None:
            return "unpatchify returns None: finish the function and return the images."
        got = torch.as_tensor(got, dtype=torch.float64)
        if got.shape != images.shape:
            return f"for patches of shape {tuple(_reference_patchify(images, p).shape)} with p = {p} your images have shape {tuple(got.shape)}; they should be (B, C, H, W) = {tuple(images.shape)}."
        if not torch.equal(got, images):
            return "the shape is right but pixels land in the wrong places: inside a patch the order is channel, then row, then column; patches go row by row."
    return True


@exercise("11.3", hint="a pass for one token is limited by reading every weight once, so its floor is the weights' bytes over the bandwidth; count how many such passes the 7 tokens take (the prefill writes the first).",
          code_hint="7 * 3e9 * 2 / 3.35e12 * 1000  # 7 reads of 3e9 parameters × 2 bytes, in ms")
def _decode_bound(answer):
    value = number(answer)
    per_token = 3e9 * 2 / 3.35e12 * 1000  # ms
    if math.isclose(value, per_token, rel_tol=0.01):
        return "that is one token; the robot needs all 7 before it can move."
    if math.isclose(value, 6 * per_token, rel_tol=0.01):
        return "the prefill that writes the first token reads every weight too: count its read."
    if math.isclose(value, 7 * per_token / 2, rel_tol=0.01) or math.isclose(value, 7 * per_token * 2, rel_tol=0.01):
        return "a bfloat16 weight takes 2 bytes."
    if math.isclose(value, 7 * per_token / 1000, rel_tol=0.01):
        return "answer in milliseconds."
    return math.isclose(value, 7 * per_token, rel_tol=0.01)


KNOCK_OUT_TOLERANCE = 0.0051  # one scene of 200 is 0.005: a decision that flips on another CPU still passes
KNOCK_OUT_CLOSE = 0.02  # nearer than this, but not within the tolerance: the right method, rounded


@cache
def _knocked_out_success() -> tuple[float, float, float]:
    """Success on held_out_scenes(200): with the look knocked out, with the whole head zeroed, intact."""
    from helpers.vla import (
        attention_knocked_out,
        colour_word_position,
        held_out_scenes,
        load_models,
        object_patch,
        success_rate,
    )

    model, scenes = load_models()["causal"], held_out_scenes(200)
    colour = colour_word_position(model.config)
    with attention_knocked_out(model, KNOCKED_LAYER, KNOCKED_HEAD, colour, object_patch(scenes, 0)):
        knocked = success_rate(model, scenes)
    zeroed = success_rate(model, scenes, {KNOCKED_LAYER: [KNOCKED_HEAD]})
    return knocked, zeroed, success_rate(model, scenes)


@exercise("11.4", hint="the query is the colour word's position, the same in every scene; the key to forbid is each scene's target patch, which object_patch(scenes, 0) gives; measure the success inside the with block.",
          code_hint="scenes = held_out_scenes(200); with attention_knocked_out(model, 0, 0, colour_word_position(config), object_patch(scenes, 0)): answer = success_rate(model, scenes)")
def _knock_out(answer):
    value = number(answer)
    knocked, zeroed, intact = _knocked_out_success()
    if not 0 <= value <= 1:
        return "a success rate is a fraction between 0 and 1."
    if math.isclose(value, knocked, abs_tol=KNOCK_OUT_TOLERANCE):
        return True
    if math.isclose(value, intact, abs_tol=1e-9):
        return "that is the intact model: measure inside the with block, where the look is forbidden."
    if math.isclose(value, zeroed, abs_tol=1e-9):
        return "that zeroes the whole head; forbid only its one look, from the colour word at the target's patch."
    if math.isclose(value, knocked, abs_tol=KNOCK_OUT_CLOSE):
        return "close: give the value success_rate returns (three decimals)."
    return False


PATCHING_TOLERANCE = 0.005  # a recovery is a ratio of two logit means: CPUs move it by far less


def _patch_mask(scenes, k: int, n: int) -> torch.Tensor:
    """(B, n) bool: True at the patch of object k of each scene (0: the target)."""
    from helpers.vla import object_patch

    mask = torch.zeros(len(scenes), n, dtype=torch.bool)
    mask[torch.arange(len(scenes)), object_patch(scenes, k)] = True
    return mask


@cache
def _patched_recoveries() -> dict[str, float]:
    """Exercise 11.5's answer and the near misses a checker should name."""
    from helpers.vla import load_models, patching_pair, patching_recovery, patching_scenes

    models = load_models()
    clean, corrupted, metric = patching_pair()
    scenes = [a for a, _ in patching_scenes()]
    n = models["prefix"].config.n_patches + clean[1].shape[1]
    recover = lambda net, positions: patching_recovery(net, clean, corrupted, metric, 1, None, positions)  # noqa: E731
    return {
        "right": recover(models["prefix"], _patch_mask(scenes, 0, n)),
        "the other object's patch": recover(models["prefix"], _patch_mask([b for _, b in patching_scenes()], 0, n)),
        "every patch": recover(models["prefix"], list(range(models["prefix"].config.n_patches))),
        "causal": recover(models["causal"], _patch_mask(scenes, 0, n)),
    }


@exercise("11.5", hint="build a (B, n) bool mask that is True at one position per scene, the patch that object_patch(scenes, 0) gives for the clean scenes, and pass it as positions to patching_recovery on the residual entering layer 1.",
          code_hint="mask = torch.zeros(len(scenes), clean[1].shape[1] + 16, dtype=torch.bool); mask[torch.arange(len(scenes)), object_patch(scenes, 0)] = True")
def _patch_the_target(answer):
    value = number(answer)
    found = _patched_recoveries()
    if math.isclose(value, found["right"], abs_tol=PATCHING_TOLERANCE):
        return True
    hint = _near_miss(value, {
        "that is the patch of the object the corrupted run names; patch the clean run's target, the object it names.":
            found["the other object's patch"],
        "that patches all 16 patches, as section 9 does; patch only the target's patch, one position per scene.": found["every patch"],
        "that is the causal model, whose patches never see the words; use the prefix-LM model.": found["causal"],
    })
    if hint:
        return hint
    if abs(value) > 1.5:
        return "a recovery is a fraction of the clean-minus-corrupted difference: near 0 or 1, not a logit."
    return False


# Exercise 11.6: logits of (the clean run's x token, the corrupted run's x token) at the query that writes x
PATCHING_BY_HAND = {"clean": (5.0, 1.0), "corrupted": (0.5, 6.5), "patched": (3.0, 2.0)}


def _by_hand() -> dict[str, float]:
    """11.6's recovery, and the near misses a checker should name."""
    metric = {run: a - b for run, (a, b) in PATCHING_BY_HAND.items()}
    clean_token = {run: a for run, (a, _) in PATCHING_BY_HAND.items()}
    corrupted_token = {run: b for run, (_, b) in PATCHING_BY_HAND.items()}
    right = (metric["patched"] - metric["corrupted"]) / (metric["clean"] - metric["corrupted"])
    return {
        "right": right,
        "zero": metric["patched"] / metric["clean"],
        "rest": 1 - right,
        "logit": (clean_token["patched"] - clean_token["corrupted"]) / (clean_token["clean"] - clean_token["corrupted"]),
        "corrupted_logit": ((corrupted_token["patched"] - corrupted_token["corrupted"])
                        / (corrupted_token["clean"] - corrupted_token["corrupted"])),
    }


@exercise("11.6", hint="first the metric of each run (the clean x token's logit minus the corrupted one's); then how far the patched "
          "run's metric has moved from the corrupted run's, as a fraction of the whole way to the clean run's.")
def _patching_by_hand(answer):
    value = number(answer)
    found = _by_hand()
    if math.isclose(value, found["right"], abs_tol=PATCHING_TOLERANCE):
        return True
    hints = {
        "give a fraction between 0 and 1, not a percentage.": 100 * found["right"],
        "check the sign: a site that moves the metric towards the clean run's recovers a positive fraction.": -found["right"],
        "the fraction is measured from the corrupted run's metric, not from zero.": found["zero"],
        "that is the part the site does not bring back.": found["rest"],
        "the metric is a difference of two logits, not the clean x token's logit alone: form it for each run first.": found["logit"],
        "the metric is a difference of two logits, not the corrupted run's x token's logit alone: form it for each run first.":
            found["corrupted_logit"],
    }
    return _near_miss(value, hints) or False


def _near_miss(value: float, hints: dict[str, float]) -> str | None:
    """The first hint whose wrong answer ``value`` matches within PATCHING_TOLERANCE, or None."""
    return next((hint for hint, wrong in hints.items() if math.isclose(value, wrong, abs_tol=PATCHING_TOLERANCE)), None)
