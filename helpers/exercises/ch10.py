"""Notebook 10 (attention in a trained model): checkers. None of them prints the expected answer."""

import math
from functools import cache

import torch

from helpers.checks import exercise, number


@cache
def _shipped(one_layer: bool = False):
    from helpers.data import DATA_DIR
    from helpers.toy_model import ONE_LAYER_FILE, load_model

    return load_model(DATA_DIR / ONE_LAYER_FILE) if one_layer else load_model()


@cache
def _held_out():
    from helpers.toy_model import held_out_set

    return held_out_set(_shipped().config)


def _accuracy(predicted: torch.Tensor) -> float:
    from helpers.toy_model import PAD

    x, y = _held_out()
    return (predicted == y)[x != PAD].float().mean().item()


@cache
def _ablated_accuracy(layer: int) -> float:
    from helpers.toy_model import ablate_attention

    model = _shipped()
    with ablate_attention(model, layer), torch.no_grad():
        return _accuracy(model(_held_out()[0]).argmax(-1))


@exercise(
    "10.1",
    hint="measure the held-out accuracy while layer 1's attention adds nothing, as a fraction between 0 and 1.",
    code_hint="with ablate_attention(shipped, 1): token_accuracy(shipped, x_test, y_test)",
)
def _ablate_layer_1(answer):
    value = number(answer)
    if 1 < value <= 100:
        return "give a fraction between 0 and 1, not a percentage."
    if math.isclose(value, _ablated_accuracy(0), abs_tol=0.005):
        return "that is layer 0 switched off (section 8); the question switches off layer 1."
    if math.isclose(value, 1.0, abs_tol=0.005):
        return "that is the intact model: run the accuracy inside the `with ablate_attention(...)` block."
    return math.isclose(value, _ablated_accuracy(1), abs_tol=0.005)


def _block_parameters() -> int:
    from helpers.layers import EncoderBlock

    return sum(p.numel() for p in EncoderBlock(32, 2, 64).parameters())


@exercise("10.2", hint="count every linear layer's weight matrix and its bias, and each LayerNorm's gain and bias.")
def _encoder_block_parameters(answer):
    value = number(answer)
    want = _block_parameters()
    if value == want - 4 * 32 - 64 - 32:
        return "the attention projections and the MLP layers have biases too."
    if value == want - 2 * 64:
        return "do not forget the two LayerNorms (a gain and a bias of 32 each)."
    return value == want


@cache
def _unmasked_predictions() -> torch.Tensor:
    model = _shipped()
    x = _held_out()[0]
    with torch.no_grad():
        stream = model.tokens(x) + model.positions(torch.arange(x.shape[1]))
        for block in model.blocks:
            stream = block(stream, None)  # no padding mask: every query sees every key
        return model.readout(model.norm(stream)).argmax(-1)


@exercise("10.3", hint="run the model's parts by hand (tokens + positions, each block with mask=None, norm, readout), take the argmax, and compare with y_test at the real (non-pad) positions only.")
def _no_padding_mask(answer):
    value = number(answer)
    if 1 < value <= 100:
        return "give a fraction between 0 and 1, not a percentage."
    y = _held_out()[1]
    predicted = _unmasked_predictions()
    if math.isclose(value, (predicted == y).float().mean().item(), abs_tol=0.005) and not math.isclose(value, _accuracy(predicted), abs_tol=0.005):
        return "count only the real positions (x_test != PAD): the padding outputs are never used."
    if math.isclose(value, 1.0, abs_tol=0.005):
        return "that is the model with its mask; pass mask=None to every block."
    return math.isclose(value, _accuracy(predicted), abs_tol=0.005)


WORD_10_4 = "CHIEF"  # not one of the explorer's words, so its readout cannot give the answer


@exercise("10.4", hint="run the shipped model on the word, then average layer 1, head 1's weight on the mirror position over the real rows.")
def _mirror_weight_chief(answer):
    from helpers.toy_model import encode

    model = _shipped()
    with torch.no_grad():
        model(encode(WORD_10_4)[None])
    weights = model.attention()[1, 0, 1]  # layer 1, first sequence, head 1
    i = torch.arange(len(WORD_10_4))
    want = float(weights[i, len(WORD_10_4) - 1 - i].mean())
    value = number(answer)
    wrong_head = float(model.attention()[1, 0, 0][i, len(WORD_10_4) - 1 - i].mean())
    if not math.isclose(want, wrong_head, abs_tol=1e-3) and math.isclose(value, wrong_head, abs_tol=1e-3):
        return "that is head 0; the question asks for head 1."
    diagonal = float(weights[i, i].mean())
    if math.isclose(value, diagonal, abs_tol=1e-3):
        return "that is the diagonal (i -> i); the mirror of i is n - 1 - i."
    if math.isclose(value, want, abs_tol=0.006) and not math.isclose(value, want, abs_tol=1e-3):
        return "close, but the checker wants at least 3 decimals (within ±0.001)."
    return math.isclose(value, want, abs_tol=1e-3)


@cache
def _one_layer_accuracy() -> float:
    from helpers.toy_model import token_accuracy

    return token_accuracy(_shipped(one_layer=True), *_held_out())


@exercise(
    "10.5",
    hint="build a fresh model from the config with one layer, train it with the same 200 steps, then measure its held-out token accuracy as a fraction between 0 and 1.",
    code_hint="one = build_model(replace(config, num_layers=1)); train(one, progress=False); token_accuracy(one, x_test, y_test)",
)
def _one_layer(answer):
    value = number(answer)
    if 1 < value <= 100:
        return "give a fraction between 0 and 1, not a percentage."
    if math.isclose(value, 1.0, abs_tol=0.01):
        return "that is the two-layer model; build and train one with num_layers=1 (the same 200 steps)."
    return math.isclose(value, _one_layer_accuracy(), abs_tol=0.005)  # the exercise states it; train() runs in float64


@cache
def _one_layer_by_position(real_only: bool = True) -> tuple[float, ...]:
    """The shipped one-layer model's held-out accuracy at each output position (over the sequences where it is real)."""
    from helpers.toy_model import PAD

    x, y = _held_out()
    with torch.no_grad():
        right = _shipped(one_layer=True)(x).argmax(-1) == y
    real = x != PAD if real_only else torch.ones_like(x, dtype=torch.bool)
    return tuple(right[real[:, i], i].float().mean().item() for i in range(x.shape[1]))


def _all_close(values: list[float], want: tuple[float, ...]) -> bool:
    return all(math.isclose(v, w, abs_tol=0.005) for v, w in zip(values, want, strict=True))


_WHY_NOT = {
    "a": "your eight numbers are right; are they about equal from position to position? (The line printed above your answer also shows what more training does.)",
    "c": "your eight numbers are right; compare out 1, real in every sequence, with out 7, real only in 8-letter words.",
    "d": "your eight numbers are right; look at out 0, the position that needs the last real letter.",
}


@exercise(
    "10.6",
    hint="score the held-out set with the one-layer model, mark where the most likely token is right, and average each output position over the sequences in which it is real; then ask which explanation those numbers support.",
    code_hint="right = one(x_test).argmax(-1) == y_test; [right[x_test[:, i] != PAD, i].float().mean().item() for i in range(8)]",
)
def _why_one_layer(answer):
    if not isinstance(answer, (tuple, list)) or len(answer) != 2 or not isinstance(answer[1], str):
        return 'answer with a pair: the list of eight accuracies and a letter, such as ([0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5], "a").'
    try:
        values = [float(v) for v in torch.as_tensor(answer[0], dtype=torch.float64).reshape(-1)]
    except (TypeError, ValueError, RuntimeError):
        return "the first part should be a list of eight numbers, one per output position."
    if len(values) != 8:
        return f"give one accuracy for each of the 8 output positions 0 to 7, not {len(values)}."
    if any(1 < v <= 100 for v in values):
        return "give fractions between 0 and 1, not percentages."
    if all(math.isclose(v, 1.0, abs_tol=0.005) for v in values):
        return "those are the two-layer model's; measure the one-layer model, load_model(DATA_DIR / ONE_LAYER_FILE)."
    if _all_close(values, _one_layer_by_position(real_only=False)):
        return "at position i count only the sequences in which position i is real (x_test[:, i] != PAD): the padding outputs are never used."
    if not _all_close(values, _one_layer_by_position()):
        return False  # the hint, then the code hint
    choice = answer[1].strip().lower()
    if choice not in {"a", "b", "c", "d"}:
        return 'the second part is one letter: "a", "b", "c" or "d".'
    return _WHY_NOT.get(choice, True)
