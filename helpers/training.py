"""What the training scripts share: train in float64, compare with the committed files, margins.

Why float64. CPUs round float32 arithmetic differently (the order of a long sum, a vectorised
exp or tanh): results differ by about 1e-7 relative. Training feeds every step's result into
the next, and over a few hundred to a few thousand steps such differences grow until two CPUs
hold different models (different held-out accuracies, a different step at which a probe passes
95 %). In float64 the differences start near 1e-16 and grow by a similar factor, so they stay far
below float32's resolution: the weights, stored in float32, come out the same on any CPU to
within a few units in their last place. ``scripts/train_*.py --check`` measures it.

- :func:`float64_training`: a model trains in float64 inside the ``with`` and is float32 after.
- :func:`one_thread`: PyTorch on one thread inside the ``with``.
- :func:`largest_difference`, :func:`within`: how far a fresh run is from the committed one.
- :func:`top1_margins`, :func:`near_ties`: how far each argmax is from flipping.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager

import torch
from torch import nn


@contextmanager
def float64_training(model: nn.Module) -> Iterator[nn.Module]:
    """Inside the ``with`` the model's parameters and buffers are float64; afterwards float32, rounded once."""
    model.double()
    try:
        yield model
    finally:
        model.float()


@contextmanager
def one_thread() -> Iterator[None]:
    """PyTorch on one thread inside the ``with`` (tiny matrices: as fast, and the same from run to run)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def largest_difference(fresh: Mapping[str, torch.Tensor], saved: Mapping[str, torch.Tensor]) -> float:
    """Largest |fresh - saved| over every tensor of two dicts with the same keys and shapes."""
    if fresh.keys() != saved.keys():
        raise ValueError(f"different tensors: {sorted(fresh.keys() ^ saved.keys())}")
    for key in fresh:
        if fresh[key].shape != saved[key].shape:
            raise ValueError(f"{key}: shape {tuple(fresh[key].shape)} vs {tuple(saved[key].shape)}")
    return max(((fresh[k].double() - saved[k].double()).abs().max().item() for k in fresh), default=0.0)


def within(name: str, difference: float, tolerance: float) -> bool:
    """Print one comparison with its tolerance; True when the difference is at most the tolerance."""
    ok = difference <= tolerance
    print(f"  {name}: largest |difference| {difference:.1e} (tolerance {tolerance:.0e}): {'ok' if ok else 'TOO LARGE'}")
    return ok


def top1_margins(logits: torch.Tensor) -> torch.Tensor:
    """(..., classes) -> (...): the top logit minus the runner-up, i.e. how far each argmax is from flipping."""
    if not isinstance(logits, torch.Tensor) or logits.ndim < 1 or logits.shape[-1] < 2:
        raise ValueError(f"logits must be (..., classes) with at least 2 classes, got {getattr(logits, 'shape', logits)}")
    top2 = logits.topk(2, dim=-1).values
    return top2[..., 0] - top2[..., 1]


def near_ties(logits: torch.Tensor, targets: torch.Tensor | None = None, relative: float = 1e-3) -> torch.Tensor:
    """(..., classes) -> (...) bool: the argmax predictions another CPU could conceivably flip.

    A prediction is a near-tie when its top-1 margin is at most ``relative`` × the largest |logit|
    (float32 rounding moves a logit by about 1e-7 of that, so 1e-3 leaves a factor 10⁴). With
    ``targets`` (...), only near-ties whose right answer is first or second count: a flip between
    two wrong answers cannot change an accuracy.
    """
    if targets is not None and targets.shape != logits.shape[:-1]:
        raise ValueError(f"targets must have shape {tuple(logits.shape[:-1])} for logits {tuple(logits.shape)}, got {tuple(targets.shape)}")
    near = top1_margins(logits) <= relative * logits.abs().max()
    if targets is None:
        return near
    return near & (logits.topk(2, dim=-1).indices == targets[..., None]).any(dim=-1)
