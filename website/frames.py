"""An explorer's pictures for the static site, drawn by the explorer's own code.

For one explorer cell (an entry of ``helpers.explorers.registry``) in one language:

1. its ipywidgets controls become the site's controls (slider, dropdown, toggle buttons,
   checkbox) with the positions each offers; a long slider snaps to a few of them (``SNAP``,
   else ``DEFAULT_SLIDER_POSITIONS`` evenly spread);
2. every position reachable from the one the notebook shows is found by moving one control at
   a time in the real widgets, without drawing (``LiveFigure.held``): a control that follows
   another (a slider whose maximum is the sequence length, a dropdown whose options are the
   sentence's words) follows it here exactly as in JupyterLab, and where a move lands
   somewhere other than "the same, with that one control changed" the move is recorded;
3. each position is drawn once through the explorer's own update path and its picture (the
   PNG the kernel would show, re-encoded as lossless WebP: the same pixels) and readouts kept.

``manifest.json`` (controls, positions, moves, readouts) and the pictures are what
``website/static/explorer.js`` plays.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from PIL import Image

from helpers import i18n
from helpers.explorers.registry import build_explorer
from helpers.widgets import LiveFigure, format_readout

MAX_ALL_POSITIONS = 13  # a slider with at most this many positions keeps them all
DEFAULT_SLIDER_POSITIONS = 11  # a longer one without an entry in SNAP: this many, evenly spread

# Long sliders snap to these values (the value the notebook starts at is always added).
# Chosen per explorer to keep the whole site's pictures within budget (see README).
SNAP: dict[str, dict[str, Sequence[float]]] = {
    "01_dot_product/8ee1daed": {"angle": range(-180, 181, 15), "q_length": (0.5, 1.5, 3.0),
                                "k_length": (0.5, 2.0, 3.0)},
    "02_softmax/3928e1dc": {"temperature": [10 ** (e / 4) for e in range(-8, 9)], "seed": (0, 1, 2, 3, 4)},
    "03_scaling_sqrt_dk/1e5ebf0a": {"n": (2, 4, 8, 16, 32, 64), "seed": (0, 1)},
    "05_masking/6aa2e2e5": {"length": (2, 4, 6, 8, 10, 13)},
    "07_transformer_block/2e495b28": {"depth": (1, 2, 4, 8, 12, 16, 24, 32)},
    "10b_induction_heads/76ab2cbe": {"seed": (0, 1, 2), "period": (4, 6, 8, 10, 12, 14, 16)},
    "11_tiny_vla/ede0b579": {"seed": (0, 1)},
}
# Drawing order: the controls that cost a new layout (labels, curves) change slowest. Default:
# the explorer's own order, first control slowest.
SLOWEST_FIRST: dict[str, tuple[str, ...]] = {
    "03_scaling_sqrt_dk/1e5ebf0a": ("seed", "scale", "n", "d_k"),
    "09_attention_at_scale/0e44f937": ("bytes_per_value", "kv_heads", "context"),
}
WEBP = {"format": "WEBP", "lossless": True, "method": 1, "quality": 0}  # fast; within 10% of the smallest


def explorer_key(notebook: Path, cell_id: str) -> str:
    return f"{Path(notebook).stem}/{cell_id}"


def _close(a, b) -> bool:
    """Equal, or (for numbers) equal up to float rounding."""
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool) and not isinstance(b, bool):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    return a == b


def _same(a, b) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(a, (int, float)) and isinstance(b, (int, float)) and math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    return type(a) is type(b) and a == b


def _number_label(value: float, spec: str) -> str:
    """A slider's readout as ipywidgets shows it (d3-format; "g" keeps its zeros, as toPrecision)."""
    spec = spec or ".2f"
    if spec.endswith("d"):
        return str(int(round(value)))
    if spec.endswith("g"):
        return format(value, "#" + spec).rstrip(".")
    return format(value, spec)


def control_kind(control) -> str:
    """"slider", "dropdown", "toggles" or "checkbox": how the site draws this ipywidgets control."""
    name = type(control).__name__
    if name in ("Checkbox", "ToggleButton"):
        return "checkbox"
    if name in ("ToggleButtons", "RadioButtons"):
        return "toggles"
    if name in ("Dropdown", "Select"):
        return "dropdown"
    if name in ("IntSlider", "FloatSlider", "FloatLogSlider", "SelectionSlider"):
        return "slider"
    raise TypeError(f"the site cannot draw a {name} control yet (explorer controls are sliders, "
                    "dropdowns, toggle buttons and checkboxes)")


def positions(control) -> list[tuple[object, str]]:
    """Every (value, label) the control offers now, in its order."""
    name = type(control).__name__
    if name in ("Checkbox", "ToggleButton"):
        return [(False, "off"), (True, "on")]
    if hasattr(control, "_options_values"):
        return [(v, str(label)) for v, label in zip(control._options_values, control._options_labels, strict=True)]
    spec = getattr(control, "readout_format", "")
    if name == "FloatLogSlider":
        count = int(round((control.max - control.min) / control.step)) + 1
        exponents = [control.min + i * control.step for i in range(count)]
        return [(float(control.base**e), _number_label(control.base**e, spec)) for e in exponents]
    if name == "IntSlider":
        return [(v, str(v)) for v in range(control.min, control.max + 1, control.step)]
    count = int(round((control.max - control.min) / control.step)) + 1  # FloatSlider
    values = [round(control.min + i * control.step, 12) for i in range(count)]
    return [(v, _number_label(v, spec)) for v in values]


def snapped(offered: list[tuple[object, str]], current, wanted: Sequence[float] | None) -> list[tuple[object, str]]:
    """The positions of a slider the site keeps: all if few, else those in ``wanted`` (or an even
    spread), always with the current value."""
    if wanted is None and len(offered) <= MAX_ALL_POSITIONS:
        return offered
    if wanted is None:
        picks = set(np.linspace(0, len(offered) - 1, DEFAULT_SLIDER_POSITIONS).round().astype(int).tolist())
        wanted = [value for i, (value, _) in enumerate(offered) if i in picks]
    missing = [w for w in wanted if not any(_close(value, w) for value, _ in offered)]
    if missing:
        raise ValueError(f"snap values {missing} are not positions of this slider")
    return [(value, label) for value, label in offered
            if _close(value, current) or any(_close(value, w) for w in wanted)]


@dataclass
class SiteControl:
    """One control as the site shows it; ``values`` are every value met, in the order met."""

    name: str
    kind: str
    description: str
    values: list = field(default_factory=list)
    full_positions: int = 0  # how many positions the widget itself offers (the most seen)

    def index(self, value) -> int:
        for i, known in enumerate(self.values):
            if _same(known, value):
                return i
        self.values.append(value)
        return len(self.values) - 1


class Walk:
    """The positions of one explorer reachable on the site's grid, and the moves between them."""

    def __init__(self, explorer: LiveFigure, snap: dict[str, Sequence[float]] | None = None) -> None:
        self.explorer = explorer
        self.snap = snap or {}
        unknown = set(self.snap) - set(explorer.controls)
        if unknown:
            raise ValueError(f"SNAP names controls {sorted(unknown)}; the explorer has {list(explorer.controls)}")
        self.controls = [SiteControl(name, control_kind(c), str(c.description or name))
                         for name, c in explorer.controls.items()]
        self.widgets = list(explorer.controls.values())
        self.states: list[tuple[int, ...]] = []
        self.ui: list[tuple[tuple[tuple[int, str], ...], ...]] = []  # per state: per control (value index, label)
        self.moves: dict[tuple[int, int, int], int] = {}  # (state, control, value) -> state, where not the plain move

    def read(self) -> tuple[int, ...]:
        return tuple(c.index(w.value) for c, w in zip(self.controls, self.widgets, strict=True))

    def offered(self) -> tuple[tuple[tuple[int, str], ...], ...]:
        """Per control, the (value index, label) pairs the site offers at the current position."""
        rows = []
        for control, widget in zip(self.controls, self.widgets, strict=True):
            here = positions(widget)
            control.full_positions = max(control.full_positions, len(here))
            if control.kind == "slider":
                here = snapped(here, widget.value, self.snap.get(control.name))
            rows.append(tuple((control.index(v), label) for v, label in here))
        return tuple(rows)

    def goto(self, state: tuple[int, ...]) -> None:
        """Set every control to ``state`` (without drawing); a few passes, as one control may bound another."""
        for _ in range(4):
            for control, widget, i in zip(self.controls, self.widgets, state, strict=True):
                if not _same(widget.value, control.values[i]):
                    try:
                        widget.value = control.values[i]
                    except Exception:  # noqa: BLE001 - out of range until another control moves: next pass
                        pass
            if self.read() == state:
                return
        raise RuntimeError(f"cannot reach position {self.describe(state)}")

    def describe(self, state: tuple[int, ...]) -> str:
        return ", ".join(f"{c.name}={c.values[i]!r}" for c, i in zip(self.controls, state, strict=True))

    def run(self, limit: int = 5000) -> None:
        """Breadth-first from the current position over single-control moves on the grid."""
        ids = {}
        with self.explorer.held(redraw=False):
            start = self.read()
            self.states, ids[start] = [start], 0
            i = 0
            while i < len(self.states):
                here = self.states[i]
                self.goto(here)
                offered = self.offered()
                self.ui.append(offered)
                for c, (control, widget) in enumerate(zip(self.controls, self.widgets, strict=True)):
                    for v, _ in offered[c]:
                        if v == here[c]:
                            continue
                        widget.value = control.values[v]
                        there = self.read()
                        if there not in ids:
                            if len(self.states) >= limit:
                                raise RuntimeError(f"more than {limit} positions: snap a slider (website/frames.py SNAP)")
                            ids[there] = len(self.states)
                            self.states.append(there)
                        if there != here[:c] + (v,) + here[c + 1:]:
                            self.moves[i, c, v] = ids[there]
                        if there[:c] + there[c + 1:] == here[:c] + here[c + 1:]:
                            widget.value = control.values[here[c]]  # only this control moved: move it back
                        else:
                            self.goto(here)
                i += 1


def drawing_order(walk: Walk, slowest_first: Sequence[str] | None) -> list[int]:
    """The starting position first (its picture is checked), then the rest sorted so that
    consecutive pictures differ in the fast controls: fewer new layouts, faster drawing."""
    names = [c.name for c in walk.controls]
    order = [names.index(name) for name in slowest_first or ()]
    order += [c for c in range(len(names)) if c not in order]
    rest = sorted(range(1, len(walk.states)), key=lambda n: [walk.states[n][c] for c in order])
    return [0, *rest]


def encode(png: bytes) -> bytes:
    """The PNG's pixels as lossless WebP (identical pixels, about a third of the bytes)."""
    image = Image.open(io.BytesIO(png))
    out = io.BytesIO()
    image.convert("RGB").save(out, **WEBP)
    return out.getvalue()


def render(notebook: Path, cell_id: str, language: str, out: Path) -> dict:
    """Build the explorer of ``cell_id`` in ``language``, draw every grid position into ``out``
    (``frames/<hash>.webp`` and ``manifest.json``); returns the manifest."""
    i18n.set_language(language)
    start = time.perf_counter()
    explorer = build_explorer(notebook, cell_id)
    first_picture = explorer.image.value
    key = explorer_key(notebook, cell_id)
    walk = Walk(explorer, SNAP.get(key))
    walk.run()
    walked = time.perf_counter()
    (out / "frames").mkdir(parents=True, exist_ok=True)
    readout_names: list[str] = []
    frames: list[str] = [""] * len(walk.states)
    readouts: list[list] = [[]] * len(walk.states)
    for n in drawing_order(walk, SLOWEST_FIRST.get(key)):
        with explorer.held():
            walk.goto(walk.states[n])
        if n == 0 and explorer.image.value != first_picture:
            raise RuntimeError(f"{key}: drawing the starting position again gave another picture")
        webp = encode(explorer.image.value)
        name = hashlib.sha256(webp).hexdigest()[:20] + ".webp"
        path = out / "frames" / name
        if not path.exists():
            path.write_bytes(webp)
        frames[n] = name
        row = []
        for label, value in explorer.readouts.items():
            if label not in readout_names:
                readout_names.append(label)
            row.append([readout_names.index(label), format_readout(value)])
        readouts[n] = row
    width, height = Image.open(io.BytesIO(first_picture)).size
    ui_table: list = []
    ui_ids = []
    for offered in walk.ui:
        ids = []
        for row in offered:
            entry = [list(p) for p in row]
            if entry not in ui_table:
                ui_table.append(entry)
            ids.append(ui_table.index(entry))
        ui_ids.append(ids)
    manifest = {
        "key": key,
        "language": language,
        "size": [width, height],
        "controls": [{"name": c.name, "kind": c.kind, "description": c.description,
                      "full": c.full_positions, "values": [_json_value(v) for v in c.values]}
                     for c in walk.controls],
        "ui": ui_table,
        "states": [list(s) for s in walk.states],
        "state_ui": ui_ids,
        "moves": [[s, c, v, t] for (s, c, v), t in sorted(walk.moves.items())],
        "frames": frames,
        "readout_names": readout_names,
        "readouts": readouts,
        "seconds": {"walk": round(walked - start, 2), "draw": round(time.perf_counter() - walked, 2)},
    }
    (out / "manifest.json").write_text(json.dumps(manifest, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")
    i18n.set_language(None)
    return manifest


def _json_value(value):
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    if isinstance(value, np.generic):
        return value.item()
    return str(value)
