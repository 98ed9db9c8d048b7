"""Another CPU, emulated: with ATTENTION_LAB_NUDGE=<seed> set, every Python process that has this
folder on its path (``make test-portable`` puts it there, so each notebook kernel gets it) nudges
the floating-point results of PyTorch's arithmetic by a few units in the last place.

A learner's CPU runs other kernels than ours (other SIMD widths, other summation orders, other
vectorised exp and tanh), so its results differ from ours by a few ulps. Rather than collect every
CPU, this moves every inexact result of every arithmetic operation by up to ``ULPS`` ulps, in a
direction drawn from the result's own bits (the same result is always moved the same way, as a
real kernel would give the same answer twice). A stored output that still reads the same under
several seeds does not depend on which kernels computed it. Results that are whole numbers (counts,
0 and 1, exact sums of integers) are left alone: every CPU computes those exactly.
"""

import os

SEED = os.environ.get("ATTENTION_LAB_NUDGE", "").strip()
ULPS = 4

if SEED:
    import torch
    from torch.nn.attention import bias
    from torch.utils._python_dispatch import TorchDispatchMode, _disable_current_modes
    from torch.utils._pytree import tree_map

    aten = torch.ops.aten
    NUDGED = {  # operations whose result depends on the kernel: reductions, matrix products, libm
        aten.mm, aten.addmm, aten.bmm, aten.baddbmm, aten.dot, aten.mv, aten.addmv, aten.convolution,
        aten.convolution_backward, aten.sum, aten.mean, aten.prod, aten.var, aten.std, aten.var_mean,
        aten.std_mean, aten.norm, aten.linalg_vector_norm, aten.cumsum, aten._softmax, aten._log_softmax,
        aten._softmax_backward_data, aten._log_softmax_backward_data, aten.logsumexp,
        aten.native_layer_norm, aten.native_layer_norm_backward, aten._fused_rms_norm, aten.exp,
        aten.expm1, aten.log, aten.log1p, aten.log2, aten.tanh, aten.tanh_backward, aten.sigmoid,
        aten.sigmoid_backward, aten.sin, aten.cos, aten.pow, aten.sqrt, aten.rsqrt, aten.erf,
        aten.gelu, aten.gelu_backward, aten.silu, aten.silu_backward, aten.addcmul, aten.addcdiv,
        aten.lerp, aten._scaled_dot_product_flash_attention_for_cpu,
        aten._scaled_dot_product_flash_attention_for_cpu_backward,
    }
    INTS = {torch.float32: torch.int32, torch.float64: torch.int64}
    EPS = {torch.float32: ULPS * 2.0**-24, torch.float64: ULPS * 2.0**-53}
    SALT = int(SEED) * 0x9E3779B1 + 0x7F4A7C15

    def nudge(value):
        """``value`` moved by up to ULPS ulps where it is not a whole number; other values as they are.

        A NaN or an infinity multiplied by the factor stays what it was, so only whole numbers
        need a mask; the work is done in place where it can be (this runs on every result)."""
        if not isinstance(value, torch.Tensor) or value.dtype not in INTS or value.numel() == 0:
            return value
        if value.is_sparse or value.layout != torch.strided:
            return value
        with torch.no_grad():
            value = value.detach().contiguous()
            draw = value.view(INTS[value.dtype]).mul(0x2545F491).add_(SALT).bitwise_and_(0xFFFFFF)
            factor = draw.to(value.dtype).mul_(EPS[value.dtype] / 2**23).add_(1 - EPS[value.dtype])
            factor.masked_fill_(value.round() == value, 1)  # whole numbers (and infinities) stay
            return value * factor

    class Nudge(TorchDispatchMode):
        """Nudge the floating-point result of every operation in NUDGED."""

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            result = func(*args, **(kwargs or {}))
            if func.overloadpacket not in NUDGED:
                return result
            if func._schema.is_mutable:
                return result  # out= variants: leave the caller's buffer alone
            return tree_map(nudge, result)

    def outside_the_mode(make):
        """``make`` run with the mode off: PyTorch's CausalBias tensors cannot be built under it."""

        def made(*args, **kwargs):
            with _disable_current_modes():
                return make(*args, **kwargs)

        return made

    bias.causal_lower_right = outside_the_mode(bias.causal_lower_right)
    bias.causal_upper_left = outside_the_mode(bias.causal_upper_left)
    Nudge().__enter__()  # on for the life of the process
