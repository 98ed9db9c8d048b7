"""Where the time of one slider step goes, kernel side: compute, figure draw, PNG encode.

The browser test measures keydown -> picture on screen; this times the same kind of update
in-process so the two can be compared (the rest is message transfer and browser decode).
Run by hand: ``.venv/bin/python -m e2e.latency_probe``.
"""

from __future__ import annotations

import statistics
import time

# A LiveHeatmap at n = 32 standing in for notebook 03's saturation explorer until it lands.
PROBE_SOURCE = '''
import ipywidgets as widgets
import numpy as np

import helpers
from helpers.widgets import HeatmapFrame, LiveHeatmap


def compute(n, d_k, seed):
    rng = np.random.default_rng(seed)
    q, k = rng.standard_normal((2, n, d_k))
    _, weights = helpers.scaled_dot_product_attention(q, k, k, scale=1.0)
    entropy = float(-(weights * np.log(weights + 1e-12)).sum(-1).mean())
    return HeatmapFrame(weights, readouts={"entropy": entropy, "max weight": float(weights.max())})


live = LiveHeatmap(compute, {
    "n": widgets.IntSlider(value=32, min=2, max=64, description="n"),
    "d_k": widgets.IntSlider(value=16, min=1, max=64, description="d_k"),
    "seed": widgets.IntSlider(value=0, min=0, max=9, description="seed"),
}, title="latency probe (stand-in for notebook 03)")
'''


def probe_explorer():
    namespace: dict = {}
    exec(compile(PROBE_SOURCE, "<latency probe>", "exec"), namespace)
    return namespace["live"], "d_k"


def saturation_explorer(n: int):
    """Notebook 03's explorer at sequence length n, and the name of the control to step."""
    from helpers.explorers import saturation

    live = saturation.saturation_explorer()
    names = list(live.controls)
    length = next(name for name in names if name in ("n", "seq_len", "length", "n_tokens"))
    live.set(**{length: n})
    stepped = next((name for name in names if "d_k" in name or name == "dk"), next(x for x in names if x != length))
    return live, stepped


def breakdown(saturation: bool, n: int = 32, steps: int = 25) -> dict:
    """Median ms per step of: the whole kernel-side update, the draw, the PNG encode, and
    the PNG size; 'compute' is update minus draw minus encode."""
    from helpers.widgets import png_bytes

    live, name = saturation_explorer(n) if saturation else probe_explorer()
    control = live.controls[name]
    start = control.value
    values = [start, _neighbour(control)]
    total, render, encode = [], [], []
    for step in range(steps):
        live.set(**{name: values[(step + 1) % 2]})
        total.append(live.last_update_ms)
        t0 = time.perf_counter()
        live.render()
        t1 = time.perf_counter()
        png = png_bytes(live.fig)
        t2 = time.perf_counter()
        render.append((t1 - t0) * 1e3)
        encode.append((t2 - t1) * 1e3)
    draw = [r - e for r, e in zip(render, encode, strict=True)]
    med = statistics.median
    return {
        "update": f"{med(total):.1f} ms",
        "compute": f"{med(total) - med(render):.1f} ms",
        "draw": f"{med(draw):.1f} ms",
        "png encode": f"{med(encode):.1f} ms",
        "png size": f"{len(png) / 1024:.0f} KiB",
    }


def _neighbour(control):
    """The value one arrow-key step away (towards the far end)."""
    options = getattr(control, "options", None)
    if options:
        values = [o[1] if isinstance(o, tuple) else o for o in options]
        i = values.index(control.value)
        return values[i + 1] if i + 1 < len(values) else values[i - 1]
    if hasattr(control, "base"):  # FloatLogSlider: the step is in the exponent
        import math

        exponent = math.log(control.value, control.base)
        exponent += control.step if exponent + control.step <= control.max else -control.step
        return control.base**exponent
    return control.value + control.step if control.value + control.step <= control.max else control.value - control.step


if __name__ == "__main__":
    import pathlib
    import sys

    has_03 = any(pathlib.Path("helpers/explorers").glob("saturation.py"))
    print(breakdown(saturation=has_03 and "--probe" not in sys.argv))
