"""The explorers of notebooks 01-03: every control swept, the numbers they show are right,
and the saturation explorer does what notebook 03 promises, fast."""

import math

import numpy as np
import pytest
import torch

import helpers
from helpers.explorers.saturation import query_key_pool, saturation_explorer, saturation_frame
from helpers.explorers.temperature import score_row, temperature_explorer
from helpers.explorers.vectors import vector_pair, vectors_explorer
from helpers.stats import entropy, jacobian_norm
from tests.widget_sweep import sweep

EXPLORERS = {"vectors": vectors_explorer, "temperature": temperature_explorer, "saturation": saturation_explorer}


@pytest.mark.parametrize("name", sorted(EXPLORERS))
def test_sweep_every_control(name):
    """Each control over its range: no exception, no warning, no NaN, the picture changes."""
    live = EXPLORERS[name]()
    sweep(live)
    for control in live.controls.values():
        assert control.description, "the browser tests find controls by their description"


@pytest.mark.parametrize("name", sorted(EXPLORERS))
def test_static_png_and_figure_reused(name):
    live = EXPLORERS[name]()
    fig, first = live.fig, bytes(live.image.value)
    assert first.startswith(b"\x89PNG") and "image/png" in live._repr_mimebundle_()
    name0, control = next(iter(live.controls.items()))
    live.set(**{name0: control.max if not isinstance(control.value, bool) else not control.value})
    assert live.fig is fig and bytes(live.image.value) != first


# --- 01: vectors ------------------------------------------------------------------


@pytest.mark.parametrize("angle", [-180, -95, 0, 30, 90, 135, 180])
@pytest.mark.parametrize("lengths", [(0.25, 3.0), (1.5, 2.0), (3.0, 3.0)])
def test_vectors_score_is_the_dot_product(angle, lengths):
    live = vectors_explorer()
    live.set(angle=angle, q_length=lengths[0], k_length=lengths[1])
    q, k = vector_pair(angle, *lengths)
    assert np.linalg.norm(q) == pytest.approx(lengths[0]) and np.linalg.norm(k) == pytest.approx(lengths[1])
    want = lengths[0] * lengths[1] * math.cos(math.radians(angle))
    assert live.readouts["q · k"] == pytest.approx(want, abs=1e-3)
    assert live.readouts["cos θ"] == pytest.approx(math.cos(math.radians(angle)), abs=1e-3)


# --- 02: temperature --------------------------------------------------------------


def test_temperature_extremes():
    live = temperature_explorer()
    live.set(temperature=0.01)
    assert live.readouts["max weight"] > 0.999 and live.readouts["Jacobian norm"] < 1e-3
    live.set(temperature=100.0)
    n = len(score_row(0))
    assert live.readouts["entropy (nats)"] == pytest.approx(math.log(n), abs=1e-2)
    assert live.readouts["Jacobian norm"] == pytest.approx(math.sqrt(n - 1) / n, abs=1e-2)


def test_temperature_readouts_match_torch():
    live = temperature_explorer()
    live.set(temperature=0.7, seed=4)
    scores = torch.tensor(score_row(4)) / 0.7
    weights = torch.softmax(scores, dim=-1)
    jac = torch.autograd.functional.jacobian(lambda s: torch.softmax(s, dim=-1), scores)
    assert live.readouts["max weight"] == pytest.approx(float(weights.max()))
    assert live.readouts["Jacobian norm"] == pytest.approx(float(torch.linalg.matrix_norm(jac)))
    assert live.readouts["entropy (nats)"] == pytest.approx(float(torch.distributions.Categorical(weights).entropy()))


# --- 03: saturation ---------------------------------------------------------------


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("n", [2, 5, 32, 64])
@pytest.mark.parametrize("d_k", [1, 3, 64, 1024])
@pytest.mark.parametrize("scale", [False, True])
def test_saturation_weights_match_pytorch(seed, n, d_k, scale):
    frame = saturation_frame(d_k, n, scale, seed)
    queries, keys = query_key_pool(seed)
    q, k = torch.tensor(queries[:n, :d_k]), torch.tensor(keys[:n, :d_k])
    scores = q @ k.T * (1 / math.sqrt(d_k) if scale else 1.0)
    want = torch.softmax(scores, dim=-1)
    torch.testing.assert_close(torch.tensor(frame.weights), want)
    _, weights = helpers.scaled_dot_product_attention(q, k, k, scale=None if scale else 1.0)
    torch.testing.assert_close(weights, want)
    assert frame.readouts["d_k"] == d_k
    assert frame.readouts["mean max weight"] == pytest.approx(float(want.max(dim=-1).values.mean()))
    assert frame.readouts["mean row entropy (nats)"] == pytest.approx(float(entropy(want).mean()), abs=1e-9)


def test_saturation_rows_turn_one_hot_without_scaling_and_stay_soft_with_it():
    """The promise of notebook 03, over all seeds at n = 32."""
    for seed in range(10):
        small, big = saturation_frame(4, 32, False, seed), saturation_frame(1024, 32, False, seed)
        assert big.readouts["mean max weight"] > 0.85 > small.readouts["mean max weight"]
        assert big.readouts["mean row entropy (nats)"] < 0.3
        assert big.readouts["softmax-Jacobian norm"] < 0.5 * small.readouts["softmax-Jacobian norm"]
        for d_k in (4, 64, 1024):
            soft = saturation_frame(d_k, 32, True, seed)
            assert soft.readouts["mean max weight"] < 0.5
            assert soft.readouts["mean row entropy (nats)"] > 0.6 * math.log(32)


def test_saturation_slider_values_are_clean_integers():
    live = saturation_explorer()
    live.set(d_k=127.6)
    assert live.readouts["d_k"] == 128
    live.set(d_k=1.2)
    assert live.readouts["d_k"] == 1
    assert not query_key_pool(0)[0].flags.writeable


def test_jacobian_norm_readout_is_the_mean_of_each_rows():
    frame = saturation_frame(16, 6, True, 1)
    rows = torch.tensor(frame.weights)
    norms = [torch.linalg.matrix_norm(torch.diag(p) - torch.outer(p, p)) for p in rows]
    assert frame.readouts["softmax-Jacobian norm"] == pytest.approx(float(torch.stack(norms).mean()))
    assert float(jacobian_norm(frame.weights).mean()) == pytest.approx(frame.readouts["softmax-Jacobian norm"])
