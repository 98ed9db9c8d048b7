"""Compare layers that use dropout in training mode: record the masks one layer draws, replay them in another.

Two layers with dropout agree in training mode only under the same random masks. PyTorch draws
each mask from the global generator in memory order, so seeding both sides gives the same masks
only where both call dropout in the same order on tensors laid out the same way.
``nn.TransformerEncoderLayer`` computes its attention sublayer in (n, B, d_model) memory order
(``batch_first=True`` only transposes views), so its mask after the attention falls on other
entries than a batch-first block's. These two context managers sidestep the layout: record the
keep-masks of every ``nn.Dropout`` module of one layer, in call order, and make the ``nn.Dropout``
modules of the other use them.

    with recorded_dropout_masks(torch_layer) as masks:
        want = torch_layer(x)
    with replayed_dropout_masks(our_block, masks):
        got = our_block(x)

Dropout written as a function call (``F.dropout``, the attention-weight dropout of
``nn.MultiheadAttention``) is not a module and is neither recorded nor replayed: seed the
generator before each side for it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch
from torch import nn


def _dropout_modules(module: nn.Module) -> list[nn.Dropout]:
    modules = [m for m in module.modules() if isinstance(m, nn.Dropout)]
    if not modules:
        raise ValueError(f"{type(module).__name__} has no nn.Dropout module to record or replay")
    return modules


@contextmanager
def recorded_dropout_masks(module: nn.Module) -> Iterator[list[torch.Tensor]]:
    """Inside the block, every ``nn.Dropout`` call in ``module`` appends its keep-mask (bool, the
    shape of its input; True = kept) to the yielded list, in call order.

    An entry whose input is exactly 0 reads as dropped; replaying gives 0 there either way.
    """
    masks: list[torch.Tensor] = []

    def record(dropout, _inputs, output):
        if dropout.training and dropout.p > 0:  # in eval mode (or p = 0) dropout draws nothing
            masks.append(output != 0)

    handles = [m.register_forward_hook(record) for m in _dropout_modules(module)]
    try:
        yield masks
    finally:
        for handle in handles:
            handle.remove()


@contextmanager
def replayed_dropout_masks(module: nn.Module, masks: list[torch.Tensor]) -> Iterator[None]:
    """Inside the block, the ``nn.Dropout`` calls of ``module`` (while training) use ``masks`` in
    order: output = input · mask / (1 − p), instead of a fresh random mask.

    Raises:
        ValueError: a mask's shape differs from its call's input, a call finds no mask left, or
            masks are left over when the block ends.
    """
    queue = list(masks)

    def replay(dropout, inputs, output):
        if not dropout.training or dropout.p == 0:
            return output
        if not queue:
            raise ValueError(f"more nn.Dropout calls than the {len(masks)} recorded masks")
        mask, (x,) = queue.pop(0), inputs
        if mask.shape != x.shape:
            raise ValueError(f"recorded mask of shape {tuple(mask.shape)} for a dropout input of shape {tuple(x.shape)}")
        return x * mask / (1 - dropout.p)

    handles = [m.register_forward_hook(replay) for m in _dropout_modules(module)]
    try:
        yield
    finally:
        for handle in handles:
            handle.remove()
    if queue:
        raise ValueError(f"{len(queue)} of the {len(masks)} recorded masks were not used")
