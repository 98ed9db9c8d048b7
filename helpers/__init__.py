"""Attention Lab's helpers: what the notebooks build, once built, plus plotting and widget plumbing.

Every array function takes numpy arrays or torch tensors and returns the same kind.
Masks are boolean with True = may attend.
"""

from . import fonts
from .attention import scaled_dot_product_attention, softmax
from .checks import check
from .i18n import set_language
from .layers import DecoderBlock, EncoderBlock, FeedForward, LayerNorm, MultiHeadAttention, RMSNorm
from .masks import causal_mask, padding_mask
from .plots import attention_grid, attention_heatmap
from .widgets import HeatmapFrame, LiveFigure, LiveHeatmap

__all__ = [
    "DecoderBlock",
    "EncoderBlock",
    "FeedForward",
    "HeatmapFrame",
    "LayerNorm",
    "LiveFigure",
    "LiveHeatmap",
    "MultiHeadAttention",
    "RMSNorm",
    "attention_grid",
    "attention_heatmap",
    "causal_mask",
    "check",
    "padding_mask",
    "scaled_dot_product_attention",
    "set_language",
    "softmax",
]

fonts.register()  # Hangul in every figure (the Korean edition), Latin glyphs unchanged
