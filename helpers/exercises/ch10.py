"""Notebook 10 (attention in a trained model): checkers. None of them prints the expected answer."""

import math
from functools import cache

import torch

from helpers.checks import exercise


@exercise("10.1", hint="output position i copies input position n - 1 - i; positions count from 0.")
def _mirror_position(answer):
    value = float(answer)
    if value == 5 - 1:
        return "that is where output position 0 looks; output position 1 looks one step to the left of it."
    if value == 5 - 1 - 1 + 1:
        return "positions count from 0: the last of 5 letters is at position 4."
    return value == 5 - 1 - 1


def _block_parameters() -> int:
    from helpers.layers import EncoderBlock

    return sum(p.numel() for p in EncoderBlock(32, 2, 64).parameters())


@exercise("10.2", hint="attention: 4 × (32·32 + 32); MLP: (32·64 + 64) + (64·32 + 32); each LayerNorm: 32 + 32.")
def _encoder_block_parameters(answer):
    value = float(answer)
    want = _block_parameters()
    if value == want - 4 * 32 - 64 - 32:
        return "the attention projections and the MLP layers have biases too."
    if value == want - 2 * 64:
        return "do not forget the two LayerNorms (a gain and a bias of 32 each)."
    return value == want


@cache
def _shipped():
    from helpers.toy_model import load_model

    return load_model()


@exercise("10.3", hint="shipped(encode('BEACH')[None]).argmax(-1), keep the first 5 positions, then decode(...).")
def _reverse_beach(answer):
    from helpers.toy_model import decode, encode

    if not isinstance(answer, str):
        return "answer with a string of letters, e.g. the output of decode(...)."
    with torch.no_grad():
        want = decode(_shipped()(encode("BEACH")[None]).argmax(-1)[0, :5])
    if answer.upper() == "BEACH":
        return "that is the input; run the model and decode its most likely tokens."
    return answer == want


@exercise("10.4", hint="after shipped(encode('FACADE')[None]), take shipped.attention()[1, 0, 1] and average weights[i, 5 - i] for i = 0..5.")
def _mirror_weight_facade(answer):
    from helpers.toy_model import encode

    model = _shipped()
    with torch.no_grad():
        model(encode("FACADE")[None])
    weights = model.attention()[1, 0, 1]  # layer 1, first sequence, head 1
    i = torch.arange(6)
    want = float(weights[i, 5 - i].mean())
    value = float(answer)
    wrong_head = float(model.attention()[1, 0, 0][i, 5 - i].mean())
    if not math.isclose(want, wrong_head, abs_tol=1e-3) and math.isclose(value, wrong_head, abs_tol=1e-3):
        return "that is head 0; the question asks for head 1."
    diagonal = float(weights[i, i].mean())
    if math.isclose(value, diagonal, abs_tol=1e-3):
        return "that is the diagonal (i -> i); the mirror of i is n - 1 - i."
    return math.isclose(value, want, abs_tol=1e-3)
