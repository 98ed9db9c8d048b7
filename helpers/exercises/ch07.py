"""Notebook 07 (the Transformer block): checkers. None of them prints the expected answer."""

import math

import torch
from torch import nn

from helpers.checks import exercise, whole_number

FAMILIES = ("encoder-only", "decoder-only", "encoder-decoder")
_MAP = {
    "BERT": "encoder-only",
    "ViT": "encoder-only",
    "GPT-2": "decoder-only",
    "Llama 2": "decoder-only",
    "T5": "encoder-decoder",
    "OpenVLA's language model": "decoder-only",
}
_WHY = {  # a hint per model, naming what to look at, never the family
    "BERT": "BERT reads a whole sentence at once, in both directions, and generates nothing.",
    "ViT": "ViT's image patches all attend to each other; nothing is generated token by token.",
    "GPT-2": "GPT-2 generates text one token at a time from a single stack with a causal mask.",
    "Llama 2": "Llama 2 is a GPT-style text generator: one stack, causal mask.",
    "T5": "T5 reads an input text with one stack and writes an output text with another that cross-attends to it.",
    "OpenVLA's language model": "OpenVLA's Llama 2 backbone reads [patches][text] and emits action tokens with a causal mask, no cross-attention.",
}


@exercise("07.1", hint="a path is a choice of which layers it goes through; count the ways to choose 2 of 6.")
def _paths_through_two(answer):
    value = whole_number(answer)
    if value == 2**6:
        return "that is every path; only those through exactly 2 layers count."
    if value == 6 * 5:
        return "that counts ordered pairs; a path through layers 2 and 5 is the same path as through 5 and 2."
    return value == math.comb(6, 2)


@exercise("07.2", hint="divide x by sqrt(mean(x²) over the last dimension + eps), then multiply by weight.")
def _rms_norm(answer):
    if not callable(answer):
        return "pass the function itself: check(\"07.2\", my_rms_norm)."
    g = torch.Generator().manual_seed(7)
    for shape, eps in [((4, 8), 1e-6), ((2, 3, 16), 1e-5), ((5,), 0.1), ((1, 2, 3, 4), 0.5)]:
        x = torch.randn(*shape, generator=g, dtype=torch.float64) * 3 + 1
        weight = torch.randn(shape[-1], generator=g, dtype=torch.float64)
        ref = nn.RMSNorm(shape[-1], eps=eps, dtype=torch.float64)
        with torch.no_grad():
            ref.weight.copy_(weight)
            want = ref(x)
        got = answer(x, weight, eps)
        if not isinstance(got, torch.Tensor):
            return f"return a torch tensor; got {type(got).__name__}."
        if tuple(got.shape) != tuple(x.shape):
            return f"the output must have the input's shape {tuple(x.shape)}; yours is {tuple(got.shape)}."
        if not torch.allclose(got, want, rtol=1e-6, atol=1e-8):
            centred = x - x.mean(-1, keepdim=True)
            if torch.allclose(got, centred / torch.sqrt(centred.pow(2).mean(-1, keepdim=True) + eps) * weight):
                return "that is LayerNorm without β: RMSNorm does not subtract the mean."
            if torch.allclose(got, x / torch.sqrt(x.pow(2).mean(-1, keepdim=True)) * weight, rtol=1e-3):
                return "close: eps goes inside the square root, added to the mean of the squares."
            return False
    return True


@exercise("07.3", hint="attention 4·d² + 4·d, FFN two linear maps with biases (d → d_ff → d), two LayerNorms of 2·d each.")
def _bert_block_params(answer):
    value, d, d_ff = whole_number(answer), 768, 3072
    attention, ffn, norms = 4 * d * d + 4 * d, 2 * d * d_ff + d_ff + d, 2 * 2 * d
    if value == attention + ffn:
        return "add the two LayerNorms: each has a γ and a β of d_model numbers."
    if value == 4 * d * d + 2 * d * d_ff:
        return "those are the weight matrices only; add the biases and the LayerNorms."
    if value == attention:
        return "that is the attention sublayer alone; the FFN is bigger."
    return value == attention + ffn + norms


@exercise("07.4", hint="does the model generate token by token (causal mask)? does it read a separate input with its own stack?")
def _families(answer):
    if not isinstance(answer, dict):
        return "answer with the dictionary given in the cell, one family per model."
    missing = [name for name in _MAP if name not in answer]
    if missing:
        return f"keep every model in the dictionary; missing: {missing}."
    unknown = [name for name in _MAP if answer[name] not in FAMILIES]
    if unknown:
        return f"write one of {list(FAMILIES)} for {unknown}."
    wrong = [name for name, family in _MAP.items() if answer[name] != family]
    if wrong:
        return f"{len(wrong)} not right yet; for example: {_WHY[wrong[0]]}"
    return True
