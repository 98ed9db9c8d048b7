"""helpers.training: float64 initial weights and training, the --check comparisons."""

import pytest
import torch
from torch import nn

from helpers import induction, toy_model, vla
from helpers.training import (
    float64_by_default,
    float64_training,
    largest_difference,
    one_thread,
    within,
)


def test_float64_by_default_restores_the_default_dtype_even_after_an_error():
    with float64_by_default():
        assert torch.get_default_dtype() == torch.float64 and torch.zeros(1).dtype == torch.float64
    assert torch.get_default_dtype() == torch.float32
    with pytest.raises(RuntimeError, match="inside"), float64_by_default():
        raise RuntimeError("inside")
    assert torch.get_default_dtype() == torch.float32


@pytest.mark.parametrize(("module", "cls", "config"), [
    (toy_model, toy_model.ToyReverser, toy_model.ToyConfig(init_seed=3)),
    (induction, induction.TinyDecoder, induction.InductionConfig(init_seed=3)),
    (vla, vla.TinyVLA, vla.VLAConfig(init_seed=3)),
])
def test_models_draw_their_initial_weights_in_float64(module, cls, config):
    """What build_model returns is the float64 draw rounded to float32, not PyTorch's float32 draw."""
    torch.manual_seed(config.init_seed)
    with float64_by_default():
        drawn = cls(config)
    torch.manual_seed(config.init_seed)
    in_float32 = cls(config)
    built = module.build_model(config)
    assert {p.dtype for p in built.state_dict().values()} == {torch.float32}
    assert largest_difference(built.state_dict(), {k: v.float() for k, v in drawn.state_dict().items()}) == 0
    assert largest_difference(built.state_dict(), in_float32.state_dict()) > 0.01  # another stream of random numbers


def test_float64_training_rounds_once_at_the_end_and_survives_an_error():
    layer = nn.Linear(3, 2)
    before = layer.weight.detach().clone()
    with float64_training(layer):
        assert layer.weight.dtype == torch.float64
        layer.weight.data += 1e-12  # far below float32's resolution at these sizes: gone after rounding
    assert layer.weight.dtype == torch.float32 and torch.equal(layer.weight, before)
    with pytest.raises(ValueError, match="stop"), float64_training(layer):
        raise ValueError("stop")
    assert layer.weight.dtype == torch.float32


def test_one_thread_restores_the_thread_count():
    threads = torch.get_num_threads()
    with one_thread():
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == threads


def test_largest_difference_and_within(capsys):
    a = {"w": torch.tensor([1.0, 2.0]), "b": torch.tensor([0.5])}
    b = {"w": torch.tensor([1.0, 2.25]), "b": torch.tensor([0.5])}
    assert largest_difference(a, b) == 0.25 and largest_difference(a, a) == 0
    assert within("weights", 0.25, 1e-5) is False and within("weights", 1e-6, 1e-5) is True
    printed = capsys.readouterr().out
    assert "2.5e-01 (tolerance 1e-05): TOO LARGE" in printed and "1.0e-06 (tolerance 1e-05): ok" in printed
    with pytest.raises(ValueError, match="different tensors"):
        largest_difference(a, {"w": a["w"]})
    with pytest.raises(ValueError, match="shape"):
        largest_difference(a, {"w": torch.zeros(3), "b": a["b"]})
