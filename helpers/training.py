"""What the training scripts share: train in float64, compare with the committed files, margins.

Why float64. CPUs round float32 arithmetic differently (the order of a long sum, a vectorised
exp or tanh): results differ by about 1e-7 relative. Training feeds every step's result into
the next, and over a few hundred to a few thousand steps such differences grow until two CPUs
hold different models (different held-out accuracies, a different step at which a probe passes
95 %). In float64 the differences start near 1e-16 and grow by a similar factor, so they stay far
below float32's resolution: the weights, stored in float32, come out the same on any CPU to
within a few units in their last place, as long as the training is not chaotic. The toy
reverser's and the induction decoders' are not (their ``--check`` passes under other CPU
kernels); the tiny VLA's is: there a difference of 1e-16 grows to different weights within a few
hundred steps (``scripts/train_tiny_vla.py`` measures it). The same holds for the random initial weights, which
PyTorch draws with CPU-specific float32 arithmetic: drawn in float64, they round to the same float32
numbers everywhere. ``scripts/train_*.py --check`` measures it.

- :func:`float64_by_default`: build a model inside it to draw its initial weights in float64.
- :func:`float64_training`: a model trains in float64 inside the ``with`` and is float32 after.
- :func:`one_thread`: PyTorch on one thread inside the ``with``.
- :func:`largest_difference`, :func:`within`: how far a fresh run is from the committed one.
- :func:`top1_margins`, :func:`margin_to_change`: how far an argmax, or an accuracy printed from
  many, is from flipping.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
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
def float64_by_default() -> Iterator[None]:
    """Inside the ``with`` new floating-point tensors are float64: build a model there to draw its initial weights in float64.

    PyTorch draws float32 random numbers with CPU-specific arithmetic (a fused multiply-add in
    ``uniform_``, a vectorised log and cos in ``normal_``): on a CPU without AVX2 the same seed gives
    initial weights up to 1e-6 apart. Drawn in float64 they are at most 1e-16 apart, and round to
    the same float32 numbers.
    """
    dtype = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        yield
    finally:
        torch.set_default_dtype(dtype)


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


def margin_to_change(logits: torch.Tensor, targets: torch.Tensor, printed: Callable[[float], str]) -> float:
    """How close a printed accuracy is to changing, as a top-1 margin relative to the largest |logit|.

    logits (S, T, classes), targets (S, T): sample s counts as right when all its T argmax
    predictions are right (T = 1 for a token accuracy, 3 for a VLA action). Only a flip of a
    prediction whose right answer is first or second can change the count. Flip samples in
    the order of their smallest such margin, each in the direction that moves the count most
    (right -> wrong for a lower bound, wrong -> right for an upper one), until
    ``printed(accuracy)`` changes: returns that sample's margin divided by the largest |logit|
    (inf when no flip can change what is printed). Float32 rounding on another CPU moves a logit
    by about 1e-7 to 1e-5 of the largest one, so the printed value is safe where this is far above.
    """
    if logits.ndim != 3 or targets.shape != logits.shape[:2]:
        raise ValueError(f"logits must be (S, T, classes) and targets (S, T), got {tuple(logits.shape)} and {tuple(targets.shape)}")
    right = (logits.argmax(-1) == targets).all(-1)  # (S,)
    decisive = (logits.topk(2, dim=-1).indices == targets[..., None]).any(-1)  # (S, T)
    margins = torch.where(decisive, top1_margins(logits), torch.inf).amin(-1) / logits.abs().max()  # (S,)
    order = margins.argsort()
    order = order[margins[order].isfinite()]
    count, n = int(right.sum()), len(right)
    lowest = count - right[order].cumsum(0)  # counts after the k + 1 closest samples flipped down ...
    highest = count + (~right[order]).cumsum(0)  # ... or up
    shown = printed(count / n)
    for k, (low, high) in enumerate(zip(lowest.tolist(), highest.tolist(), strict=True)):
        if printed(low / n) != shown or printed(high / n) != shown:
            return margins[order[k]].item()
    return float("inf")
