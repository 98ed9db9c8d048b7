"""Notebook 09 (attention at scale): checkers. None of them prints the expected answer."""

import math

from helpers.checks import exercise
from helpers.scale import LLAMA2_7B, flops_per_token


@exercise("09.1", hint="the score matrix is N × N: what happens to N² when N is multiplied by 4?")
def _score_growth(answer):
    value = float(answer)
    if value == 4:
        return "4 is how much longer the sequence is; the scores form an N × N matrix."
    return value == 16


@exercise("09.2", hint="heads × n × n numbers, 2 bytes each, divided by 2**20.")
def _score_mib(answer):
    value = float(answer)
    want = 32 * 4096 * 4096 * 2 / 2**20
    if math.isclose(value, want * 2**20, rel_tol=1e-6):
        return "that is in bytes; the question asks for MiB (divide by 2**20)."
    if math.isclose(value, want / 32, rel_tol=1e-6):
        return "that is one head; the layer has 32."
    return math.isclose(value, want, rel_tol=1e-3)


@exercise("09.3", hint="a key and a value, for every layer, every KV head and every dimension of a head, 2 bytes each.")
def _kv_bytes_13b(answer):
    value = float(answer)
    want = 2 * 40 * 40 * 128 * 2
    if value == want / 2:
        return "count both the key and the value."
    if value == want / 40:
        return "every one of the 40 layers keeps its own cache."
    return value == want


def _half_point() -> float:
    """Context length where the n × n part equals everything else (linear in n)."""
    parts_1 = flops_per_token(1, LLAMA2_7B)
    per_key = parts_1["attention scores q·k"] + parts_1["attention weights × V"]
    fixed = sum(parts_1.values()) - per_key
    return fixed / per_key


@exercise("09.4", hint="the n × n part is 4 · layers · d_model FLOPs per key of context; set it equal to everything else.")
def _half_point_check(answer):
    value = float(answer)
    if math.isclose(value, 0.7 / 0.3 * _half_point(), rel_tol=0.05):
        return "that is where it reaches 70%; the question asks for half."
    return math.isclose(value, _half_point(), rel_tol=0.05)


@exercise("09.5", hint="the new maximum is 5; rescale the old denom by exp(old m - new m), then add exp(s - 5) for the second chunk.")
def _online_softmax(answer):
    value = float(answer)
    first, second = [1.0, 3.0, 2.0], [5.0, 0.0]
    l_old = sum(math.exp(s - 3) for s in first)
    want = l_old * math.exp(3 - 5) + sum(math.exp(s - 5) for s in second)
    if math.isclose(value, l_old + sum(math.exp(s - 5) for s in second), rel_tol=1e-4):
        return "the first chunk's sum was taken against m = 3; rescale it to the new maximum first."
    return math.isclose(value, want, rel_tol=1e-4)
