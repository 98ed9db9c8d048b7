"""Notebook 11 (a tiny vision-language-action model): checkers. None of them prints the expected answer."""

import math
from functools import cache

import torch

from helpers.checks import exercise, number, whole_number

ABLATED_LAYER, ABLATED_HEADS = 1, (0, 1)  # exercise 11.4 zeroes these heads of the shipped causal model


def _llama3_block() -> int:
    """One Llama 3-8B block: d_model 4096, 32 query heads and 8 key/value heads of 128, d_ff 14336."""
    d, kv, d_ff = 4096, 8 * 128, 14336
    return 2 * d * d + 2 * d * kv + 3 * d * d_ff + 2 * d


@exercise("11.1", hint="W_Q and W_O are 4096 × 4096; W_K and W_V map 4096 to 8 heads × 128; SwiGLU has three 4096 × 14336 matrices; two RMSNorm gains of 4096.")
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


@exercise("11.3", hint="bytes of weights = parameters × bytes per parameter (bfloat16: 2); each token reads them all once; divide by the bandwidth; times the number of tokens.")
def _decode_bound(answer):
    value = number(answer)
    per_token = 3e9 * 2 / 3.35e12 * 1000  # ms
    if math.isclose(value, per_token, rel_tol=0.01):
        return "that is one token; the robot needs all 7 before it can move."
    if math.isclose(value, 7 * per_token / 2, rel_tol=0.01) or math.isclose(value, 7 * per_token * 2, rel_tol=0.01):
        return "a bfloat16 weight takes 2 bytes."
    if math.isclose(value, 7 * per_token / 1000, rel_tol=0.01):
        return "answer in milliseconds."
    return math.isclose(value, 7 * per_token, rel_tol=0.01)


@cache
def _ablated_success() -> tuple[float, float]:
    from helpers.vla import held_out_scenes, load_models, success_rate

    model, scenes = load_models()["causal"], held_out_scenes(200)
    return success_rate(model, scenes, {ABLATED_LAYER: list(ABLATED_HEADS)}), success_rate(model, scenes)


@exercise("11.4", hint="zero_heads maps a layer to the list of its heads to zero; measure the ablated causal model's success on the 200 scenes the exercise names.",
          code_hint="success_rate(shipped['causal'], held_out_scenes(200), zero_heads={layer: [heads]}) with the layer and the heads the exercise names.")
def _ablation(answer):
    value = number(answer)
    ablated, intact = _ablated_success()
    if not 0 <= value <= 1:
        return "a success rate is a fraction between 0 and 1."
    if math.isclose(value, intact, abs_tol=1e-9) and not math.isclose(ablated, intact, abs_tol=1e-9):
        return "that is the intact model: pass the heads to zero as zero_heads={layer: [heads]}."
    return math.isclose(value, ablated, abs_tol=1e-9)
