"""Notebook 11 (a tiny vision-language-action model): checkers. None of them prints the expected answer."""

import math
from functools import cache

import torch

from helpers.checks import exercise, number, whole_number

KNOCKED_LAYER, KNOCKED_HEAD = 1, 1  # exercise 11.4: this head of the shipped causal model may not read the colour word from "writes x"


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
        success_rate,
    )

    model, scenes = load_models()["causal"], held_out_scenes(200)
    colour = colour_word_position(model.config)
    with attention_knocked_out(model, KNOCKED_LAYER, KNOCKED_HEAD, colour + 1, torch.full((len(scenes),), colour)):
        knocked = success_rate(model, scenes)
    zeroed = success_rate(model, scenes, {KNOCKED_LAYER: [KNOCKED_HEAD]})
    return knocked, zeroed, success_rate(model, scenes)


@exercise("11.4", hint="the query that writes x sits one position after the colour word, and the key to forbid is the colour word itself, at the same position in every scene; measure the success inside the with block.",
          code_hint="colour = colour_word_position(config); with attention_knocked_out(model, 1, 1, colour + 1, torch.full((200,), colour)): answer = success_rate(model, held_out_scenes(200))")
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
        return "that zeroes the whole head; forbid only its one look, from the query that writes x to the colour word."
    if math.isclose(value, knocked, abs_tol=KNOCK_OUT_CLOSE):
        return "close: give the value success_rate returns (three decimals)."
    return False


PATCHING_TOLERANCE = 0.005  # a recovery is a ratio of two logit means: CPUs move it by far less


def reading_head(model) -> int:
    """The layer-0 head whose patch rows put the most weight on the colour word (notebook 11, section 9), on
    held_out_scenes(300, seed=99)."""
    from helpers.vla import colour_word_position, encode_batch, held_out_scenes

    images, instructions, _ = encode_batch(held_out_scenes(300, seed=99))
    with torch.no_grad():
        model(images, instructions)
    n, colour = model.config.n_patches, colour_word_position(model.config)
    return int(model.attention()[0, :, :, :n, colour].mean((0, 2)).argmax())


@cache
def _patched_recoveries() -> dict[str, float]:
    """Exercise 11.5's answer and the near misses a checker should name."""
    from helpers.vla import load_models, patching_pair, patching_recovery

    models = load_models()
    prefix = models["prefix"]
    clean, corrupted, metric = patching_pair()
    head, patches = reading_head(prefix), list(range(prefix.config.n_patches))
    recover = lambda net, layer, head=None, positions=None: patching_recovery(net, clean, corrupted, metric, layer, head, positions)  # noqa: E731
    return {
        "right": recover(prefix, 0, head, patches),
        "every position": recover(prefix, 0, head),
        "residual at the patches": recover(prefix, 1, None, patches),
        "causal": recover(models["causal"], 0, reading_head(models["causal"]), patches),
    }


@exercise("11.5", hint="patch one head, not the residual stream: patching_recovery(prefix, clean, corrupted, metric, 0, head, positions) with head the layer-0 head section 9 found and positions the 16 patch positions.",
          code_hint="answer = patching_recovery(shipped['prefix'], clean, corrupted, metric, 0, reader, list(range(16)))")
def _patch_one_head(answer):
    value = number(answer)
    found = _patched_recoveries()
    if math.isclose(value, found["right"], abs_tol=PATCHING_TOLERANCE):
        return True
    if math.isclose(value, found["every position"], abs_tol=PATCHING_TOLERANCE):
        return "that patches the head at every position, the words and action tokens too; patch it at the 16 patch positions only."
    if math.isclose(value, found["residual at the patches"], abs_tol=PATCHING_TOLERANCE):
        return "that patches the whole residual stream at the patches, as the demo does; patch one head's output (head=...)."
    if math.isclose(value, found["causal"], abs_tol=PATCHING_TOLERANCE):
        return "that is the causal model, whose patches never see the words; use the prefix-LM model."
    if abs(value) > 1.5:
        return "a recovery is a fraction of the clean-minus-corrupted difference: near 0 or 1, not a logit."
    return False
