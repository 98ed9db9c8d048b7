"""The one heatmap look: labels, masks, annotations, bad input."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch

from helpers import attention_grid, attention_heatmap, causal_mask, softmax


def teardown_function():
    plt.close("all")


def test_heatmap_labels_and_annotations():
    w = softmax(np.random.default_rng(0).standard_normal((3, 4)))
    ax = attention_heatmap(w, ["a", "b", "c"], ["w", "x", "y", "z"], title="t")
    assert [t.get_text() for t in ax.get_yticklabels()] == ["a", "b", "c"]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["w", "x", "y", "z"]
    assert ax.get_ylabel().startswith("query") and ax.get_xlabel().startswith("key")
    assert len(ax.texts) == 12  # every cell annotated at this size
    assert len(ax.figure.axes) == 2  # heatmap + colour bar


def test_heatmap_big_matrix_not_annotated_and_ticks_thinned():
    ax = attention_heatmap(torch.rand(1, 1, 64, 64))  # leading singleton dims squeezed
    assert len(ax.texts) == 0
    assert len(ax.get_xticks()) <= 32


def test_heatmap_marks_masked_cells_and_skips_their_annotation():
    w = softmax(np.zeros((4, 4)))
    ax = attention_heatmap(w, mask=causal_mask(4))
    assert len(ax.images) == 2  # weights + hatch overlay
    overlay = ax.images[1].get_array()
    assert overlay[..., 3].max() == 1.0 and overlay.shape == (32, 32, 4)
    assert len(ax.texts) == 10  # only the 10 allowed cells


def test_grid_shares_one_colour_bar():
    fig = attention_grid(torch.rand(3, 5, 5), titles=["h1", "h2", "h3"], ncols=2)
    heatmaps = [ax for ax in fig.axes if ax.images]
    assert len(heatmaps) == 3 and len(fig.axes) == 5  # 3 panels + hidden panel + colour bar


def test_heatmap_bad_input():
    with pytest.raises(ValueError, match=r"2-D.*\(2, 3, 4\)"):
        attention_heatmap(np.ones((2, 3, 4)))
    with pytest.raises(ValueError, match="2 q-labels given for 3"):
        attention_heatmap(np.ones((3, 3)), query_labels=["a", "b"])
    with pytest.raises(ValueError, match="3 titles for 2 matrices"):
        attention_grid([np.ones((2, 2))] * 2, titles=["a", "b", "c"])
