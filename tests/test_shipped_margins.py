"""Every accuracy or success rate notebooks 10, 10b and 11 print from the shipped weights counts argmax
predictions; it reads the same on any CPU only if no prediction it counts can flip there.

Each case rebuilds one evaluation the notebooks (or their exercise checkers) print from, as a
list of printed values: logits (samples, tokens, classes), the right answers (samples, tokens)
and the format the notebook prints with; a sample is right when all its tokens are (one token
per sample for an accuracy, the three action tokens for a VLA success).
helpers.training.margin_to_change says how large a logit change, relative to the largest
|logit|, would change what is printed; it must exceed RELATIVE, three times what float32 rounding
on another CPU moved these logits (MEASURED: the largest |Δ logit| / largest |logit| over these
cases, native against ATEN_CPU_CAPABILITY=default and avx2 and the nudge emulator). Where nothing
is counted against an answer (generated text, the words shown), every top-1 margin must exceed
RELATIVE of the largest |logit|. A notebook that computes a printed value in float64 makes its
case here float64 too, held to RELATIVE_FLOAT64 (the same factor over float64 rounding).
"""

from collections.abc import Callable
from functools import cache

import pytest
import torch

from helpers.data import DATA_DIR
from helpers.training import margin_to_change, top1_margins

RELATIVE = 1e-4  # 3 times the largest logit change measured across CPUs (MEASURED)
# float64 logits (notebook 11 runs its shipped models in float64): the same factor over float32's rounding,
# scaled to float64's: 1e-4 * 2.2e-16 / 1.2e-7 is about 2e-13; 1e-10 leaves a thousandfold margin on top
RELATIVE_FLOAT64 = 1e-10
MEASURED = 3.2e-5  # largest |Δ logit| / largest |logit| over these cases, native vs default, avx2 and nudge 1, 2
PERCENT, THREE_DECIMALS = "{:.1%}".format, "{:.3f}".format  # how notebooks 10 and 11, and 10b, print them


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


# --- notebook 10: the toy reverser ------------------------------------------------------------


@cache
def _reverser():
    """The shipped model, the held-out set, and layer 0's attention output on it (notebook 10, section 8)."""
    from helpers.toy_model import PAD, held_out_set, load_model

    model = load_model()
    x, y = held_out_set(model.config)
    captured = []
    handle = model.blocks[0].self_attn.register_forward_hook(lambda _m, _i, out: captured.append(out[0]))
    with torch.no_grad():
        model(x)
    handle.remove()
    return model, x, y, x != PAD, captured[0]


def _tokens(net, replace_layer_0=None):
    """Held-out logits of the real tokens, optionally with layer 0's attention output replaced."""
    model, x, y, real, _ = _reverser()
    hook = replace_layer_0 and model.blocks[0].self_attn.register_forward_hook(lambda _m, _i, out: (replace_layer_0(out[0]), out[1]))
    try:
        with torch.no_grad():
            return net(x)[real][:, None], y[real][:, None], PERCENT
    finally:
        if hook:
            hook.remove()


def _layer_0_replacements() -> dict[str, Callable]:
    model, x, _, real, out_0 = _reverser()
    lengths = real.sum(dim=1)
    ends = torch.zeros_like(real)
    ends[:, 0] = ends[torch.arange(len(x)), lengths - 1] = True
    same_length = torch.empty_like(lengths)
    for n in lengths.unique():
        group = (lengths == n).nonzero().squeeze(1)
        same_length[group] = group.roll(1)
    position_mean = torch.stack([out_0[real[:, i], i].mean(dim=0) for i in range(x.shape[1])])
    return {
        "mean output": lambda out: out_0[real].mean(dim=0).expand_as(out),
        "mean output per position": lambda out: position_mean.expand_as(out),
        "zeros in the middle rows": lambda out: out * ~(real & ~ends)[..., None],
        "zeros in the end rows": lambda out: out * ~ends[..., None],
        "another sequence, same length": lambda out: out_0[same_length],
        "another sequence, any length": lambda out: out_0.roll(1, dims=0),
    }


def _ablated(layer):
    from helpers.toy_model import ablate_attention

    model = _reverser()[0]
    with ablate_attention(model, layer):
        return _tokens(model)


def _without_padding_mask():  # exercise 10.3
    model, x, y, real, _ = _reverser()
    with torch.no_grad():
        stream = model.tokens(x) + model.positions(torch.arange(x.shape[1]))
        for block in model.blocks:
            stream = block(stream, None)
        return model.readout(model.norm(stream))[real][:, None], y[real][:, None], PERCENT


def _words():  # the words whose outputs notebook 10 prints, and exercise 10.4's
    from helpers.toy_model import PAD, encode

    ids = torch.stack([encode(w) for w in ("ABCDEFGH", "FACADE", "BADGE", "JIG", "CHIEF")])
    with torch.no_grad():
        return _reverser()[0](ids)[ids != PAD][:, None], None, None


def _one_layer():
    from helpers.toy_model import ONE_LAYER_FILE, load_model

    return _tokens(load_model(DATA_DIR / ONE_LAYER_FILE))


REPLACEMENTS = ("mean output", "mean output per position", "zeros in the middle rows", "zeros in the end rows",
                "another sequence, same length", "another sequence, any length")
CASES: dict[str, Callable] = {
    "10: shipped model": lambda: _tokens(_reverser()[0]),
    "10: layer 0's attention off": lambda: _ablated(0),
    "10.1: layer 1's attention off": lambda: _ablated(1),
    **{f"10: layer 0's output replaced by {name}": lambda name=name: _tokens(_reverser()[0], _layer_0_replacements()[name])
       for name in REPLACEMENTS},
    "10.3: no padding mask": _without_padding_mask,
    "10: the words shown": _words,
    "10.5: one-layer model": _one_layer,
}


# --- notebook 10b: the induction decoder -------------------------------------------------------


def _next_token(net):
    from helpers.induction import held_out_set

    x, _ = held_out_set(net.config)
    with torch.no_grad():
        return net(x)[:, :-1].reshape(-1, 1, net.config.vocab_size), x[:, 1:].reshape(-1, 1), THREE_DECIMALS


def _greedy():  # notebook 10b, section 6: a prompt of P + 2 = 12 letters of a period-10 sequence
    from helpers.induction import generate, load_model, repeated_sequence

    model = load_model(2)
    out = generate(model, repeated_sequence(10, seed=3)[None, :12], model.config.n - 12)
    with torch.no_grad():
        return model(out)[0, 11:-1, None], None, None  # the rows that chose each generated token


@cache
def _induction_heads() -> tuple[int, int]:
    """Notebook 10b's previous-token head (layer 0) and induction head (layer 1): the largest scores."""
    from helpers.induction import head_scores, held_out_set, load_model

    model = load_model(2)
    scores = head_scores(model, held_out_set(model.config)[0])
    return int(scores["previous-token"][0].argmax()), int(scores["prefix-matching"][1].argmax())


def _induction(name):
    from helpers.induction import ablate_heads, build_model, load_model

    if name == "untrained":
        return _next_token(build_model(load_model(2).config))
    if name == "one layer":
        return _next_token(load_model(1))
    previous, induction = _induction_heads()  # notebook 10b ablates a float64 copy (shipped_64)
    removed = {"previous-token head": [(0, previous)], "other layer-0 head": [(0, 1 - previous)],
               "both layer-0 heads": [(0, 0), (0, 1)], "induction head": [(1, induction)],
               "both layer-1 heads": [(1, 0), (1, 1)], "nothing": []}[name]
    return _next_token(ablate_heads(load_model(2).double(), removed))


CASES |= {f"10b: {name}": lambda name=name: _induction(name) for name in (
    "untrained", "one layer", "nothing", "previous-token head", "other layer-0 head", "both layer-0 heads",
    "induction head", "both layer-1 heads")}  # notebook 10b, sections 2 and 5: what is removed
CASES["10b: greedy continuation"] = _greedy


# --- notebook 11: the tiny VLA -----------------------------------------------------------------


@cache
def _shipped() -> dict:
    """Notebook 11's shipped models as it runs them: in float64, one instance each (an intervention hooks it)."""
    from helpers.vla import load_models

    return {kind: net.double() for kind, net in load_models().items()}


def _decoded(mask, scenes, zero_heads=None, net=None):
    from helpers.vla import WORDS, build_model, encode_batch

    if net is None:
        net = build_model().eval() if mask == "untrained" else _shipped()[mask]
    images, instructions, actions = encode_batch(scenes)
    with torch.no_grad():
        _, logits = net.act_with_logits(images, instructions, zero_heads)
    return logits, actions - len(WORDS), PERCENT


def _scenes(name):
    from helpers.vla import held_out_scenes, swap_colour

    if name == "swapped colour words":
        return [swap_colour(s) for s in held_out_scenes(300, seed=99) if swap_colour(s) is not None]
    return {"unseen scenes": held_out_scenes(1000), "held-out combinations": held_out_scenes(1000, "held out"),
            "ablation scenes": held_out_scenes(300, seed=5), "exercise 11.4's scenes": held_out_scenes(200)}[name]


def _exercise_11_4():
    from helpers.exercises.ch11 import KNOCKED_HEAD, KNOCKED_LAYER
    from helpers.vla import attention_knocked_out, colour_word_position, load_models, object_patch

    scenes, net = _scenes("exercise 11.4's scenes"), load_models()["causal"]  # the checker's float32 model
    with attention_knocked_out(net, KNOCKED_LAYER, KNOCKED_HEAD, colour_word_position(net.config), object_patch(scenes, 0)):
        return _decoded("causal", scenes, net=net)


CASES["11: untrained, unseen scenes"] = lambda: (*_decoded("untrained", _scenes("unseen scenes"))[:2], "{:.0%}".format)  # printed as 0%
for _mask in ("causal", "prefix"):
    for _set in ("unseen scenes", "held-out combinations", "swapped colour words"):
        CASES[f"11: {_mask}, {_set}"] = lambda m=_mask, s=_set: _decoded(m, _scenes(s))


@cache
def _heads() -> dict[str, list[int]]:
    """Notebook 11, section 8: the causal model's looking heads (its colour word puts over half of its image
    attention on the target), its layer-1 head that reads the colour word from "writes x", and the prefix-LM
    model's reading heads (the target's patch puts over half of its weight on the colour word). Section 9
    picks the causal and prefix-LM heads again, on its own scenes and from the raw weights: the same heads."""
    from helpers.vla import (
        colour_word_position,
        encode_batch,
        held_out_scenes,
        image_attention,
        mass_shares,
        object_patch,
    )

    scenes = held_out_scenes(300, seed=99)
    images, instructions, _ = encode_batch(scenes)
    models = _shipped()
    causal, prefix = models["causal"], models["prefix"]
    n, colour = causal.config.n_patches, colour_word_position(causal.config)
    on_target = mass_shares(image_attention(causal, images, instructions), scenes)["target"][0, :, 0]
    image_attention(causal, images, instructions)
    l1_reader = int(causal.attention()[1, :, :, n + 2, colour].mean(0).argmax())
    with torch.no_grad():
        prefix(images, instructions)
    reads = prefix.attention()[0, :, :, :n, colour][torch.arange(len(scenes)), :, object_patch(scenes, 0)].mean(0)
    return {"lookers": [h for h in range(4) if on_target[h] > 0.5], "l1 reader": [l1_reader],
            "readers": [h for h in range(4) if reads[h] > 0.5]}


@cache
def _means(mask):
    from helpers.vla import head_means

    return head_means(_shipped()[mask], _scenes("unseen scenes"))


def _intervened(mask, intervention):
    """Notebook 11, section 9: the ablation scenes decoded inside ``intervention(model)``, a context manager."""
    with intervention(_shipped()[mask]):
        return _decoded(mask, _scenes("ablation scenes"))


def _head_removed(mask, layer, head, how):
    from helpers.vla import heads_replaced

    means = _means(mask) if how == "mean-ablated" else None
    return _intervened(mask, lambda net: heads_replaced(net, layer, [head], means))


def _one_look(trial):
    from helpers.vla import (
        VLAConfig,
        attention_knocked_out,
        colour_word_position,
        heads_replaced,
        object_patch,
        sequence_length,
    )

    lookers, config, scenes = _heads()["lookers"], VLAConfig(), _scenes("ablation scenes")
    colour = colour_word_position(config)
    elsewhere = [p for p in range(sequence_length(config)) if p != colour]
    return _intervened("causal", {
        "zero the looking heads at the colour word only": lambda net: heads_replaced(net, 0, lookers, positions=[colour]),
        "zero the looking heads everywhere but the colour word": lambda net: heads_replaced(net, 0, lookers, positions=elsewhere),
        "knock out both looks at the target": lambda net: attention_knocked_out(net, 0, lookers, colour, object_patch(scenes, 0)),
        "knock out their looks at a distractor": lambda net: attention_knocked_out(net, 0, lookers, colour, object_patch(scenes, 1)),
        "knock out the layer-1 read of the colour word": lambda net: attention_knocked_out(
            net, 1, _heads()["l1 reader"][0], config.n_patches + 2, torch.full((len(scenes),), colour)),
    }[trial])


def _prefix_trial(trial):
    from helpers.vla import VLAConfig, attention_knocked_out, colour_word_position, object_patch

    readers, config, scenes = _heads()["readers"], VLAConfig(), _scenes("ablation scenes")
    patches, every = list(range(config.n_patches)), range(config.num_heads)
    colour_words = torch.full((len(scenes),), colour_word_position(config))
    return _intervened("prefix", {
        "forbid every patch to read the colour word": lambda net: attention_knocked_out(net, 0, every, patches, colour_words),
        "forbid it in the reading heads only": lambda net: attention_knocked_out(net, 0, readers, patches, colour_words),
        "knock out the colour word's look at the target (every head)": lambda net: attention_knocked_out(
            net, 0, every, colour_words[0].item(), object_patch(scenes, 0)),
    }[trial])


SECTION_9 = []  # notebook 11, section 9: printed as success and as each token's accuracy (x, y, gripper)
for _mask in ("causal", "prefix"):  # every head of both models, zeroed and mean-ablated
    SECTION_9.append(f"11: {_mask}, ablation scenes, intact")
    CASES[SECTION_9[-1]] = lambda m=_mask: _decoded(m, _scenes("ablation scenes"))
    for _layer in range(2):
        for _head in range(4):
            for _how in ("zeroed", "mean-ablated"):
                SECTION_9.append(f"11: {_mask}, layer {_layer} head {_head} {_how}")
                CASES[SECTION_9[-1]] = (
                    lambda m=_mask, layer=_layer, head=_head, how=_how: _head_removed(m, layer, head, how))
for _trial in ("zero the looking heads at the colour word only", "zero the looking heads everywhere but the colour word",
               "knock out both looks at the target", "knock out their looks at a distractor",
               "knock out the layer-1 read of the colour word"):
    SECTION_9.append(f"11: causal, {_trial}")
    CASES[SECTION_9[-1]] = lambda trial=_trial: _one_look(trial)
for _trial in ("forbid every patch to read the colour word", "forbid it in the reading heads only",
               "knock out the colour word's look at the target (every head)"):
    SECTION_9.append(f"11: prefix, {_trial}")
    CASES[SECTION_9[-1]] = lambda trial=_trial: _prefix_trial(trial)
for _name in list(SECTION_9):
    for _k, _token in enumerate(("x", "y", "gripper")):
        CASES[f"{_name}, accuracy {_token}"] = lambda name=_name, k=_k: (
            *(part[:, k : k + 1] for part in CASES[name]()[:2]), "{:.2f}".format)
CASES["11.4: the exercise's knock-out"] = _exercise_11_4


@pytest.mark.parametrize("name", list(CASES))
def test_printed_metric_is_far_from_changing(name):
    case = CASES[name]()
    logits, targets, fmt = case  # (S, T, classes), (S, T) or None, str.format
    if targets is None:
        smallest = top1_margins(logits).min() / logits.abs().max()
        assert smallest > RELATIVE, f"{name}: a top-1 margin of {smallest:.1e} of the largest logit"
        return
    relative = RELATIVE_FLOAT64 if logits.dtype == torch.float64 else RELATIVE
    for label, select in _printed_subsets(name, targets):
        distance = margin_to_change(logits[select], targets[select], fmt)
        assert distance > relative, f"{name}{label}: a logit change of {distance:.1e} of the largest one changes the print"


def _printed_subsets(name, targets):
    """The subsets of samples whose accuracies are printed: notebook 10b prints the first pass and the repeats apart."""
    if not name.startswith("10b") or targets.shape[0] != 1000 * 31:
        return [("", slice(None))]
    from helpers.induction import held_out_set, load_model, repeat_mask

    x, periods = held_out_set(load_model(2).config)
    repeats = repeat_mask(periods, x.shape[1])[:, :-1].reshape(-1)
    return [(", first pass", ~repeats), (", repeats", repeats)]


def test_margins_and_the_distance_to_a_change_in_print():
    logits = torch.tensor([[1.0, 3.0, 2.5], [0.0, -1.0, 0.0], [5.0, 1.0, 4.99]])
    torch.testing.assert_close(top1_margins(logits), torch.tensor([0.5, 0.0, 0.01]), atol=1e-6, rtol=0)
    with pytest.raises(ValueError, match="at least 2 classes"):
        top1_margins(torch.zeros(3, 1))
    targets = torch.tensor([[1], [1], [0]])  # right by 0.5; wrong, a tie of two wrong answers (cannot count); right by 0.01
    assert margin_to_change(logits[:, None], targets, "{:.0%}".format) == pytest.approx(0.01 / 5, rel=1e-4)  # 67% -> 33%
    coarse = lambda accuracy: "most" if accuracy > 0.2 else "few"  # noqa: E731
    assert margin_to_change(logits[:, None], targets, coarse) == pytest.approx(0.5 / 5, rel=1e-4)  # the second flip shows
    assert margin_to_change(logits[:, None], targets, lambda accuracy: "any") == float("inf")
    with pytest.raises(ValueError, match="targets"):
        margin_to_change(logits[:, None], targets[:2], coarse)


def test_a_sequence_is_right_only_when_all_its_tokens_are():
    logits = torch.tensor([[[3.0, 0.0, 0.0], [1.0, 0.9, 0.0]], [[0.5, 2.0, 0.0], [2.0, 0.0, 0.0]]])  # (2 samples, 2 tokens, 3)
    targets = torch.zeros(2, 2, dtype=torch.long)  # sample 0 right (closest call 0.1), sample 1 wrong (by 1.5)
    assert margin_to_change(logits, targets, "{:.0%}".format) == pytest.approx(0.1 / 3, rel=1e-4)
    assert margin_to_change(logits, targets, lambda accuracy: "some" if 0 < accuracy < 1 else "none or all") == pytest.approx(0.1 / 3, rel=1e-4)
