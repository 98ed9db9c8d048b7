"""helpers.stats (entropy, softmax Jacobian) against PyTorch's autograd and distributions."""

import math

import numpy as np
import pytest
import torch

from helpers.stats import entropy, jacobian_norm, softmax_jacobian


def random_scores(seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    batch = tuple(int(torch.randint(1, 4, (1,), generator=g)) for _ in range(seed % 3))
    n = int(torch.randint(1, 10, (1,), generator=g))
    return torch.randn(*batch, n, generator=g, dtype=torch.float64) * (1 + seed % 7)


@pytest.mark.parametrize("seed", range(60))
def test_jacobian_matches_autograd(seed):
    scores = random_scores(seed)
    p = torch.softmax(scores, dim=-1)
    flat_scores = scores.reshape(-1, scores.shape[-1])
    want = torch.stack([torch.autograd.functional.jacobian(lambda s: torch.softmax(s, -1), row) for row in flat_scores])
    want = want.reshape(*scores.shape, scores.shape[-1])
    torch.testing.assert_close(softmax_jacobian(p), want)
    torch.testing.assert_close(torch.as_tensor(np.asarray(softmax_jacobian(p.numpy()))), want)
    torch.testing.assert_close(jacobian_norm(p), torch.linalg.matrix_norm(want))
    torch.testing.assert_close(torch.as_tensor(np.asarray(jacobian_norm(p.numpy()))), torch.linalg.matrix_norm(want))


@pytest.mark.parametrize("seed", range(60))
def test_entropy_matches_torch_distributions(seed):
    p = torch.softmax(random_scores(seed), dim=-1)
    want = torch.distributions.Categorical(probs=p).entropy()
    torch.testing.assert_close(entropy(p), want)
    torch.testing.assert_close(torch.as_tensor(np.asarray(entropy(p.numpy()))), want)


def test_edge_values():
    one_hot = np.array([0.0, 1.0, 0.0])
    assert entropy(one_hot) == 0 and jacobian_norm(one_hot) == 0
    uniform = np.full(8, 1 / 8)
    assert entropy(uniform) == pytest.approx(math.log(8))
    assert jacobian_norm(uniform) == pytest.approx(math.sqrt(7) / 8)
    assert float(entropy(torch.tensor([1.0, 0.0]))) == 0.0
    assert entropy([1, 0]).dtype == np.float64  # integers and lists are accepted


def test_bad_input_is_a_clear_error():
    with pytest.raises(ValueError, match="scalar"):
        entropy(np.float64(0.5))
    with pytest.raises(TypeError, match="numbers"):
        jacobian_norm(np.array(["a", "b"]))
