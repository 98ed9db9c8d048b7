"""Drive every control of a live explorer over its whole range, as a learner would."""

from __future__ import annotations

import warnings

import ipywidgets as widgets
import numpy as np

from helpers.widgets import LiveFigure


def control_positions(control: widgets.ValueWidget, max_steps: int = 12) -> list:
    """Every position of a control, or an even sample of at most ``max_steps`` for long sliders."""
    if isinstance(control, (widgets.Checkbox, widgets.ToggleButton)):
        return [not control.value, control.value]
    if hasattr(control, "options") and control.options:
        options = list(control.options)
        return [opt[1] if isinstance(opt, tuple) else opt for opt in options]
    if isinstance(control, (widgets.FloatLogSlider,)):
        exps = np.linspace(control.min, control.max, max_steps)
        return [float(control.base**e) for e in exps]
    if isinstance(control, (widgets.IntSlider, widgets.FloatSlider, widgets.BoundedIntText, widgets.BoundedFloatText)):
        values = np.linspace(control.min, control.max, max_steps)
        return sorted({int(round(v)) for v in values} if isinstance(control.value, int) else set(values.tolist()))
    raise TypeError(f"do not know how to sweep a {type(control).__name__}")


def sweep(live: LiveFigure, max_steps: int = 12) -> list[float]:
    """Move each control over its range; assert each move changes the picture, warns nothing,
    and leaves no NaN in the readouts. Returns the update times (ms)."""
    times = []
    for name, control in live.controls.items():
        start_value = control.value
        for value in control_positions(control, max_steps):
            before = live.image.value
            moved = control.value != value
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                live.set(**{name: value})
            times.append(live.last_update_ms)
            for key, reading in live.readouts.items():
                if isinstance(reading, float):
                    assert np.isfinite(reading), f"{key} is {reading} at {name}={value!r}"
            if moved:
                assert live.image.value != before, f"the picture did not change when {name} moved to {value!r}"
        live.set(**{name: start_value})
    return times
