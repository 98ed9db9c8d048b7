"""helpers.stats (entropy, softmax Jacobian) against PyTorch's autograd and distributions; the Wilson interval against its definition."""

import math

import numpy as np
import pytest
import torch

from helpers.stats import entropy, jacobian_norm, softmax_jacobian, wilson_interval


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


@pytest.mark.parametrize("n", [1, 2, 5, 10, 37])
def test_wilson_interval_inverts_the_score_test(n):
    """Each bound inside (0, 1) is a root of (p̂ - p)² = z² p (1 - p) / n; p̂ lies between them; shares outside are rejected."""
    z = 1.959963984540054
    for k in range(n + 1):
        low, high = wilson_interval(k, n)
        share = k / n
        assert 0 <= low <= share <= high <= 1
        for bound in (low, high):
            if 0 < bound < 1:
                assert math.isclose((share - bound) ** 2, z * z * bound * (1 - bound) / n, rel_tol=1e-9, abs_tol=1e-15)
        for p in (low - 1e-6, high + 1e-6):
            if 0 < p < 1:
                assert (share - p) ** 2 > z * z * p * (1 - p) / n
    assert wilson_interval(0, n)[0] == 0.0 and wilson_interval(n, n)[1] == 1.0


def test_wilson_interval_known_values_and_bad_input():
    assert np.allclose(wilson_interval(5, 10), (0.2366, 0.7634), atol=1e-4)  # tables of the Wilson interval
    assert np.allclose(wilson_interval(1, 10), (0.0179, 0.4042), atol=1e-4)
    for bad in ((3, 2), (-1, 4), (1, 0), (0.5, 4)):
        with pytest.raises(ValueError, match="whole numbers"):
            wilson_interval(*bad)


def test_sign_flip_p_is_the_share_of_sign_assignments():
    from itertools import product

    from helpers.stats import sign_flip_p

    rng = np.random.default_rng(0)
    for _ in range(30):
        d = [int(x) for x in rng.integers(-50, 60, size=int(rng.integers(1, 9)))]
        brute = np.mean([abs(sum(s * x for s, x in zip(signs, d, strict=True))) >= abs(sum(d)) for signs in product((1, -1), repeat=len(d))])
        assert sign_flip_p(d) == brute
    assert sign_flip_p([3] * 10) == 2 / 2**10  # all one way: only itself and its mirror image
    assert sign_flip_p([0, 0]) == 1.0
    with pytest.raises(ValueError):
        sign_flip_p([0.5, 1])


def test_paired_plot_joins_each_units_two_values():
    """One line per unit from its first value (x = 0) to its second (x = 1), a box per condition, the bar dashed."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from helpers.stats import paired_plot

    rng = np.random.default_rng(int(np.random.SeedSequence().entropy % 2**32))
    n = int(rng.integers(2, 12))
    first, second = rng.random(n), rng.random(n)
    ax = paired_plot(first, second, ("a", "b"), "value", bar=0.5, bar_label="bar")
    joins = [line for line in ax.lines if line.get_marker() == "o"]
    assert len(joins) == n
    for line, a, b in zip(joins, first, second, strict=True):
        x = line.get_xdata()
        assert abs(x[0]) <= 0.1 and np.isclose(x[1] - x[0], 1) and np.allclose(line.get_ydata(), [a, b])
    assert len({line.get_xdata()[0] for line in joins}) == n  # units with equal values are drawn apart
    assert [t.get_text() for t in ax.get_xticklabels()] == ["a", "b"]
    assert any(line.get_linestyle() == "--" and np.allclose(line.get_ydata(), 0.5) for line in ax.lines)
    plt.close(ax.figure)
    with pytest.raises(ValueError, match=r"\(3,\) and \(2,\)"):
        paired_plot([1, 2, 3], [1, 2], ("a", "b"), "value")
