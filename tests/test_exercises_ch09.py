"""Notebook 09's checkers accept the right answers, reject wrong ones, and never reveal them."""

import math

import pytest

from helpers.checks import evaluate
from tests.exercise_harness import exercise_tests


def online(chunks, rescale=True):
    row_max, denom = -math.inf, 0.0
    for chunk in chunks:
        new_max = max(row_max, *chunk)
        denom = denom * (math.exp(row_max - new_max) if rescale else 1) + sum(math.exp(s - new_max) for s in chunk)
        row_max = new_max
    return denom


CHUNKS = [[1, 3, 2], [5, 0], [4, 6]]
# Under the causal mask the peak holds about four n × n float32 matrices per sequence (scores, masked
# scores, exponentials, weights) plus the output; without it, three. The checker accepts 2 %.
PEAK_MIB = 4 * 4 * 1536 * 1536 * 4 / 2**20 + 4 * 1536 * 64 * 4 / 2**20
NO_MASK_MIB = 3 * 4 * 1536 * 1536 * 4 / 2**20 + 4 * 1536 * 64 * 4 / 2**20
NO_MAX = sum(math.exp(s) for chunk in CHUNKS for s in chunk)  # 09.5 without subtracting a maximum: 637.6
MAX_NEVER_MOVED = sum(math.exp(s - 3) for chunk in CHUNKS for s in chunk)  # row_max stuck at the first chunk's: 31.75
RIGHT = {
    "09.1": PEAK_MIB,
    "09.2": 40 * 3000**2 * 2 / 2**20,
    "09.3": 17,  # (80 GiB - 2 bytes × 13,015,864,320 parameters) / (4096 tokens × 819,200 bytes) = 17.8
    "09.4": 31_376,
    "09.5": (math.exp(3 - 5), math.exp(5 - 6), sum(math.exp(s - 6) for chunk in CHUNKS for s in chunk)),
}
DENOM = RIGHT["09.5"][2]
F2, F3 = RIGHT["09.5"][:2]
WRONG = {
    "09.1": [PEAK_MIB / 4, PEAK_MIB * 2**20, 36, NO_MASK_MIB, 1024],
    "09.2": [40 * 3000**2 * 2, 3000**2 * 2 / 2**20, 32 * 3000**2 * 2 / 2**20, 40 * 3000**2 * 4 / 2**20, 1024,
             549.3, 17.17, 1373.3],
    "09.3": [18, 35, 25, 16, 819_200, 4096 * 819_200, 713, 27, 22, 524_288],
    "09.4": [25_204, 73_211, 4096, 100_000],
    "09.5": [(F2, F3, online(CHUNKS, rescale=False)), (F2, F3, online(CHUNKS[:2])), (F2, F3, 1.0),
             (F2, F3, 1.58), (round(F2, 2), F3, DENOM), (F2, F3, NO_MAX), (F2, F3, MAX_NEVER_MOVED), DENOM,
             (1 / F2, 1 / F3, DENOM), (F3, F2, DENOM), (1.0, 1.0, DENOM), (F2, 0.5, DENOM)],
}
HINTS = {("09.1", PEAK_MIB / 4): "one sequence", ("09.1", PEAK_MIB * 2**20): "bytes", ("09.1", 36): "several n × n",
         ("09.1", NO_MASK_MIB): "without the mask",
         ("09.2", 3000**2 * 2 / 2**20): "one head", ("09.2", 40 * 3000**2 * 2): "bytes",
         ("09.2", 32 * 3000**2 * 2 / 2**20): "32 heads", ("09.2", 40 * 3000**2 * 4 / 2**20): "fp32",
         ("09.2", 549.3): "32 heads", ("09.2", 17.17): "one head", ("09.2", 1373.3): "fp32",
         ("09.3", 18): "round down", ("09.3", 35): "key and the value", ("09.3", 25): "weights take",
         ("09.3", 16): "2**30", ("09.3", 819_200): "how many sequences", ("09.3", 713): "40 layers",
         ("09.3", 27): "Llama 2-7B", ("09.3", 22): "Llama 2-7B",
         ("09.4", 25_204): "7B", ("09.4", 73_211): "70%",
         ("09.5", (F2, F3, 1.58)): "decimals", ("09.5", (round(F2, 2), F3, DENOM)): "decimals",
         ("09.5", (F2, F3, online(CHUNKS, rescale=False))): "rescaled",
         ("09.5", (F2, F3, online(CHUNKS[:2]))): "third chunk",
         ("09.5", (F2, F3, NO_MAX)): "subtract the running maximum", ("09.5", (F2, F3, MAX_NEVER_MOVED)): "must move",
         ("09.5", DENOM): "tuple of three", ("09.5", (1 / F2, 1 / F3, DENOM)): "below 1",
         ("09.5", (F3, F2, DENOM)): "wrong order", ("09.5", (1.0, 1.0, DENOM)): "neither factor is 1",
         ("09.5", (F2, 0.5, DENOM)): "a factor is not"}

test_right_answers_pass, test_wrong_answers_fail_without_revealing = exercise_tests(
    RIGHT, WRONG
)


@pytest.mark.parametrize(("exercise_id", "wrong"), list(HINTS))
def test_common_mistakes_get_a_specific_hint(exercise_id, wrong):
    assert HINTS[exercise_id, wrong] in evaluate(exercise_id, wrong)[1]


def test_rounded_answers_pass_within_the_stated_tolerance():
    """09.5 asks for 4 decimals (within 0.0001); 09.2's 1e-3 accepts the MiB rounded to one decimal."""
    assert evaluate("09.5", tuple(round(v, 4) for v in RIGHT["09.5"]))[0]
    assert evaluate("09.2", round(RIGHT["09.2"], 1))[0]


def test_online_softmax_answer_equals_the_direct_sum():
    assert math.isclose(online(CHUNKS), DENOM, rel_tol=1e-12)
