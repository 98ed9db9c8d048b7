"""Make docs/saturation.png, the README's picture: why attention divides by √d_k.

    .venv/bin/python scripts/readme_picture.py
"""

import matplotlib

matplotlib.use("Agg")
import torch

import helpers
from helpers.data import DATA_DIR

torch.manual_seed(0)
tokens = "the robot picks up the red cup".split()
n, d_k = len(tokens), 512
q, k, v = torch.randn(n, d_k), torch.randn(n, d_k), torch.randn(n, d_k)
_, unscaled = helpers.scaled_dot_product_attention(q, k, v, scale=1.0)
_, scaled = helpers.scaled_dot_product_attention(q, k, v)  # scale = 1/√d_k
fig = helpers.attention_grid(
    [unscaled, scaled], ["Q Kᵀ  (d_k = 512): one-hot rows", "Q Kᵀ / √d_k: soft rows"], tokens, tokens,
    ncols=2, panel_size=3.6, annotate=False,
)
fig.savefig(DATA_DIR.parent / "docs" / "saturation.png", dpi=110)
