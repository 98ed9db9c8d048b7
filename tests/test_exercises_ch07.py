"""Notebook 07's checkers accept the right answers, reject wrong ones with a hint, and never reveal them."""

import pytest
import torch

from helpers.checks import evaluate
from tests.exercise_harness import exercise_tests


def rms_right(x, weight, eps):
    return x / torch.sqrt(x.pow(2).mean(dim=-1, keepdim=True) + eps) * weight


def rms_centred(x, weight, eps):  # LayerNorm without beta
    c = x - x.mean(-1, keepdim=True)
    return c / torch.sqrt(c.pow(2).mean(-1, keepdim=True) + eps) * weight


def rms_no_eps(x, weight, eps):
    return x / torch.sqrt(x.pow(2).mean(dim=-1, keepdim=True)) * weight


def rms_wrong_axis(x, weight, eps):
    return x / torch.sqrt(x.pow(2).mean(dim=0, keepdim=True) + eps) * weight


FAMILY = {"BERT": "encoder-only", "ViT": "encoder-only", "GPT-2": "decoder-only", "Llama 2": "decoder-only",
          "T5": "encoder-decoder", "OpenVLA's language model": "decoder-only"}
RIGHT = {"07.1": 15, "07.2": rms_right, "07.3": 7_087_872, "07.4": FAMILY}
WRONG = {
    "07.1": [64, 30, 2, 6, 14.5],
    "07.2": [rms_centred, rms_no_eps, rms_wrong_axis, lambda x, w, e: x.numpy(), "rms"],
    "07.3": [7_087_872 - 3072, 4 * 768**2 + 2 * 768 * 3072, 4 * 768**2 + 4 * 768, 7_087_873],
    "07.4": [
        {**FAMILY, "OpenVLA's language model": "encoder-decoder"},
        {**FAMILY, "T5": "decoder-only"},
        {**FAMILY, "ViT": "encoder"},
        {k: v for k, v in FAMILY.items() if k != "BERT"},
        ["encoder-only"] * 6,
    ],
}

test_right_answers_pass, test_wrong_answers_fail_without_revealing = exercise_tests(
    RIGHT, WRONG
)


SPECIFIC = {
    ("07.1", 64): "every path",
    ("07.1", 30): "ordered pairs",
    ("07.2", rms_centred): "does not subtract the mean",
    ("07.2", rms_no_eps): "eps goes inside",
    ("07.3", 7_087_872 - 3072): "LayerNorms",
}


@pytest.mark.parametrize(("exercise_id", "wrong"), list(SPECIFIC))
def test_common_mistakes_get_a_specific_hint(exercise_id, wrong):
    assert SPECIFIC[exercise_id, wrong] in evaluate(exercise_id, wrong)[1]


def test_family_hint_names_a_model_but_not_its_family():
    _, message = evaluate("07.4", {**FAMILY, "T5": "decoder-only"})
    assert "T5" in message and "encoder-decoder" not in message.split("Hint:")[1]
