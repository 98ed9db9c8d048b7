"""Notebook 09 (attention at scale): checkers. None of them prints the expected answer."""

import math
from functools import cache

import torch

from helpers.checks import exercise, number
from helpers.scale import LLAMA2_7B, DecoderShape, flops_per_token, peak_memory, score_matrix_bytes

LLAMA2_13B = DecoderShape("Llama 2-13B", d_model=5120, n_layers=40, n_heads=40, d_ff=13824, vocab=32000)
BATCH, N, D_K = 4, 1536, 64  # exercise 09.1's shapes


@cache
def _measured_peak(causal: bool = True) -> int:
    """Peak bytes of plain attention on (4, 1536, 64) inputs, with or without the causal mask
    (made before the call, so not counted), measured like section 1 does."""
    from helpers.attention import scaled_dot_product_attention
    from helpers.masks import causal_mask

    q, k, v = (torch.zeros(BATCH, N, D_K) for _ in range(3))
    mask = causal_mask(N) if causal else None
    return peak_memory(scaled_dot_product_attention, q, k, v, mask=mask)[1]


@exercise(
    "09.1",
    hint="make q, k and v of shape (4, 1536, 64) and the causal mask first, then measure the call with peak_memory; "
    "its second result is in bytes.",
    code_hint="_, peak = peak_memory(helpers.scaled_dot_product_attention, q, k, v, mask=helpers.causal_mask(1536)); "
    "then divide peak by 2**20",
)
def _batched_peak(answer):
    value = number(answer)
    want = _measured_peak() / 2**20
    if math.isclose(value, want * 2**20, rel_tol=0.02):
        return "that is in bytes; the question asks for MiB (divide by 2**20)."
    if math.isclose(value, _measured_peak(causal=False) / 2**20, rel_tol=0.02):
        return "that is the peak without the mask: pass the causal mask too, and measure what the masked softmax keeps alive."
    if math.isclose(value, want / BATCH, rel_tol=0.02) or math.isclose(value, BATCH * N * N * 4 / 2**20, rel_tol=0.02):
        return "that is one sequence, or one n × n float32 matrix per sequence; the 4 sequences are alive at once, each with several n × n matrices. Measure it."
    return math.isclose(value, want, rel_tol=0.02)


@exercise(
    "09.2",
    hint="count the numbers in all the heads' score matrices (one n × n matrix per head), then their bytes at 2 "
    "bytes each, then MiB.",
    code_hint="heads * n * n * 2 / 2**20, with the 13B model's own number of heads",
)
def _score_mib(answer):
    value = number(answer)
    want = score_matrix_bytes(3000, n_heads=40, bytes_per_value=2) / 2**20
    if math.isclose(value, want * 2**20, rel_tol=1e-3):
        return "that is in bytes; the question asks for MiB (divide by 2**20)."
    if math.isclose(value, want / 40, rel_tol=1e-3):
        return "that is one head; the layer has 40."
    if math.isclose(value, want * 32 / 40, rel_tol=1e-3):
        return "that counts Llama 2-7B's 32 heads; the 13B model has 40."
    if math.isclose(value, want * 2, rel_tol=1e-3):
        return "that is 4 bytes a number (fp32); fp16 takes 2."
    return math.isclose(value, want, rel_tol=1e-3)


LLAMA2_13B_PARAMETERS = 13_015_864_320  # 09.3: its fp16 weights sit in the same GPU memory
GPU_BYTES = 80 * 2**30  # 09.3: an "80 GB" GPU, which is 80 GiB (section 9's explorer)
SEQUENCE = 4096  # 09.3: tokens per sequence


def _sequences_that_fit(bytes_per_token: float, gpu_bytes: float = GPU_BYTES, weights: bool = True) -> float:
    """How many SEQUENCE-token KV caches fit beside the fp16 weights (a fraction: round it down)."""
    free = gpu_bytes - (2 * LLAMA2_13B_PARAMETERS if weights else 0)
    return free / (SEQUENCE * bytes_per_token)


@exercise(
    "09.3",
    hint="first the cache of one token (a key and a value, for every layer, every KV head and every dimension of a "
    "head, 2 bytes each), then of one 4,096-token sequence; then see how many such sequences fit in what the fp16 "
    "weights (2 bytes a parameter) leave of the 80 GiB.",
)
def _sequences_13b(answer):
    value = number(answer)
    per_token = 2 * 40 * 40 * 128 * 2
    right = math.floor(_sequences_that_fit(per_token))
    mistakes = {  # what a slip gives, rounded down or up -> its hint; never the right answer
        "a part of a sequence does not fit: round down to whole sequences.": [_sequences_that_fit(per_token)],
        "count both the key and the value of every token.": [_sequences_that_fit(per_token / 2)],
        "the weights take their share of the GPU first: 2 bytes for every parameter.":
            [_sequences_that_fit(per_token, weights=False)],
        "80 GiB is 80 · 2**30 bytes, not 80 · 10**9.": [_sequences_that_fit(per_token, gpu_bytes=80e9)],
        "every one of the 40 layers keeps its own cache.": [_sequences_that_fit(per_token / 40)],
        "that counts Llama 2-7B's 32 heads (or layers); the 13B model has 40 layers of 40 heads of 128.":
            [_sequences_that_fit(2 * 32 * 32 * 128 * 2), _sequences_that_fit(2 * 40 * 32 * 128 * 2)],
    }
    for hint, fits in mistakes.items():
        if value != right and any(value in (math.floor(f), math.ceil(f)) for f in fits):
            return hint
    if value in (per_token, per_token * SEQUENCE):
        return "that is the cache of one token or of one sequence in bytes; the question asks how many sequences fit."
    return value == right


def _crossover(shape: DecoderShape, target: float) -> float:
    """Context length where the n × n part is ``target`` of the FLOPs per token (linear in n)."""
    parts_1 = flops_per_token(1, shape)
    per_key = parts_1["attention scores q·k"] + parts_1["attention weights × V"]
    fixed = sum(parts_1.values()) - per_key
    return target / (1 - target) * fixed / per_key


@exercise("09.4", hint="the n × n part costs 4 · layers · d_model FLOPs per key of context; everything else does not grow with n. Use 13B's sizes (helpers.scale.DecoderShape and flops_per_token do the counting).")
def _half_point_13b(answer):
    value = number(answer)
    if math.isclose(value, _crossover(LLAMA2_7B, 0.5), rel_tol=0.05):
        return "that is Llama 2-7B's half-way point; the question is about the 13B model."
    if math.isclose(value, _crossover(LLAMA2_13B, 0.7), rel_tol=0.05):
        return "that is where it reaches 70%; the question asks for half."
    return math.isclose(value, _crossover(LLAMA2_13B, 0.5), rel_tol=0.05)


CHUNKS = ([1.0, 3.0, 2.0], [5.0, 0.0], [4.0, 6.0])  # exercise 09.5's row of scores, in three chunks


def _online(rescale: bool, chunks=CHUNKS) -> float:
    """denom after the chunks, with or without rescaling what was summed before a new maximum."""
    row_max, denom = -math.inf, 0.0
    for chunk in chunks:
        new_max = max(row_max, *chunk)
        denom = denom * (math.exp(row_max - new_max) if rescale else 1.0) + sum(math.exp(s - new_max) for s in chunk)
        row_max = new_max
    return denom


def _online_steps(chunks=CHUNKS) -> tuple[float, ...]:
    """The rescaling factor applied at each chunk after the first, then denom at the end."""
    row_max, factors, denom = -math.inf, [], 0.0
    for k, chunk in enumerate(chunks):
        new_max = max(row_max, *chunk)
        if k:
            factors.append(math.exp(row_max - new_max))
        denom = denom * (factors[-1] if k else 1.0) + sum(math.exp(s - new_max) for s in chunk)
        row_max = new_max
    return (*factors, denom)


@exercise(
    "09.5",
    hint="when a chunk brings a larger maximum, everything summed so far was taken against the old one: shrink it "
    "by exp(old maximum − new maximum) before adding the chunk's terms, each taken against the new maximum.",
    code_hint="new_max = max(row_max, *chunk); factor = math.exp(row_max - new_max); denom = denom * factor + "
    "sum(math.exp(s - new_max) for s in chunk); row_max = new_max",
)
def _online_softmax(answer):
    if not isinstance(answer, (tuple, list)) or len(answer) != 3:
        return "give a tuple of three numbers: the factor applied at the second chunk, the one at the third, then denom."
    first, second, value = (number(v) for v in answer)
    want = _online_steps()
    if first > 1 or second > 1:
        return "a factor is exp(old max − new max), below 1: the old terms shrink when a larger maximum arrives."
    if abs(first - want[1]) <= 1e-4 and abs(second - want[0]) <= 1e-4 and abs(first - second) > 1e-4:
        return "the two factors are in the wrong order: the one applied at the second chunk comes first."
    if first == 1 or second == 1:
        return "both later chunks bring a new maximum, so neither factor is 1."
    if math.isclose(value, _online(rescale=False), rel_tol=1e-4):
        return "what was summed against an old maximum must be rescaled by exp(old - new) whenever the maximum grows."
    if math.isclose(value, sum(math.exp(s) for chunk in CHUNKS for s in chunk), rel_tol=1e-4):
        return "subtract the running maximum before exponentiating: each term is exp(s - row_max)."
    if math.isclose(value, sum(math.exp(s - max(CHUNKS[0])) for chunk in CHUNKS for s in chunk), rel_tol=1e-4):
        return "row_max must move to the new maximum when a chunk brings one."
    if math.isclose(value, _online(rescale=True, chunks=CHUNKS[:2]), rel_tol=1e-4):
        return "that denom is the one after the second chunk; the third chunk brings a new maximum too."
    got = (first, second, value)
    if all(abs(g - w) <= 1e-4 for g, w in zip(got, want, strict=True)):  # 4 decimals, within 0.0001
        return True
    if all(abs(g - w) <= 0.005 for g, w in zip(got, want, strict=True)):
        return "right to 2 or 3 decimals; give 4 (the question accepts 0.0001 at most)."
    if abs(value - want[2]) <= 1e-4:
        return "denom is right, a factor is not: each is exp(row_max before the chunk − row_max after it)."
    return False
