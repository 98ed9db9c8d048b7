"""Notebook 05's explorer: sequence length, pad tokens, causal on/off, pad side -> masked heatmap.

Wires four controls to what notebook 05 builds: ``helpers.padding_mask`` & ``helpers.causal_mask``
over the toy embeddings and notebook 04's hand-set self-attention. Blocked cells are hatched;
a query row that may see nothing (left padding under a causal mask) is all hatched and
all zero, as ``helpers.scaled_dot_product_attention`` documents.
"""

from __future__ import annotations

from functools import lru_cache

import ipywidgets as widgets
import torch
import torch.nn.functional as F

from helpers.i18n import N_
from helpers.i18n import translate as tr

from ..attention import scaled_dot_product_attention
from ..embeddings import load_toy_embeddings
from ..masks import causal_mask, padding_mask
from ..qkv import hand_set_projection
from ..widgets import HeatmapFrame, LiveHeatmap

WORDS = "the robot picks up the red cup and puts it in the bowl".split()
MAX_LENGTH = len(WORDS)


def masked_batch(length: int, pads: int, side: str) -> torch.Tensor:
    """Token ids (1, length): the first ``length - pads`` words of WORDS plus ``pads`` pad ids."""
    if not 1 <= length <= MAX_LENGTH:
        raise ValueError(tr(f"length must be in 1..{MAX_LENGTH}, got {length}"))
    pads = min(max(int(pads), 0), length - 1)  # keep at least one real token
    emb = load_toy_embeddings()
    return emb.pad_batch([WORDS[: length - pads]], side=side, length=length)


@lru_cache(maxsize=1024)
def masked_attention(length: int, pads: int, causal: bool, side: str) -> HeatmapFrame:
    """One position of the explorer: the weights, labels, mask and readouts it shows.

    Cached: the controls have a few hundred positions, each computed once (treat the
    returned frame as read-only).

    Padding & causal masks as notebook 05 builds them, notebook 04's hand-set projection,
    ``helpers.scaled_dot_product_attention``; PyTorch's ``F.scaled_dot_product_attention``
    is run on the same input for the readouts.
    """
    emb = load_toy_embeddings()
    proj = _projection()
    ids = masked_batch(length, pads, side)  # (1, n)
    labels = emb.words(ids[0])  # pads read "<pad>", as wide as the widest word: moving the pads keeps the margins
    mask = padding_mask(ids, emb.pad_id)  # (1, 1, 1, n): blocks pad keys (columns)
    if causal:
        mask = mask & causal_mask(length)  # (1, 1, n, n)
    with torch.no_grad():
        q, k, v = proj(emb(ids)[:, None])  # (1, 1, n, d): one head
        _, weights = scaled_dot_product_attention(q, k, v, mask=mask)
        theirs = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        ours = weights @ v
    full = mask.expand(1, 1, length, length)[0, 0]
    empty_rows = ~full.any(-1)
    nan_rows = torch.isnan(theirs[0, 0]).any(-1)
    agree = (ours - theirs)[0, 0][~nan_rows].abs()
    return HeatmapFrame(
        weights[0, 0].numpy(), labels, labels, full.numpy(),
        readouts={
            N_("pad tokens"): int((ids == emb.pad_id).sum()),
            N_("blocked cells"): int((~full).sum()),
            N_("fully-masked query rows"): int(empty_rows.sum()),
            N_("F.sdpa rows with NaN"): int(nan_rows.sum()),
            N_("max |helpers − F.sdpa|"): float(agree.max()) if agree.numel() else 0.0,
        },
    )


@lru_cache(maxsize=1)
def _projection():
    return hand_set_projection(load_toy_embeddings().axes)


def masking_explorer(length: int = 8, pads: int = 2, causal: bool = True, side: str = "left") -> LiveHeatmap:
    """Build the explorer (starting at left padding under a causal mask: the fully-masked rows)."""
    controls = {
        "length": widgets.IntSlider(value=length, min=2, max=MAX_LENGTH, description=tr("sequence length"),
                                    style={"description_width": "initial"}),
        "pads": widgets.IntSlider(value=min(pads, length - 1), min=0, max=length - 1, description=tr("pad tokens"),
                                  style={"description_width": "initial"}),
        "causal": widgets.Checkbox(value=causal, description=tr("causal mask")),
        "side": widgets.ToggleButtons(options=[(tr(s), s) for s in (N_("left"), N_("right"))], value=side, description=tr("pad side")),
    }

    return LiveHeatmap(masked_attention, controls, title=tr("self-attention weights (hatched = blocked)"),
                       figsize=(6.2, 5.2),
                       limits={"pads": ("length", lambda length: length - 1)})  # at least one real token
