"""Every explorer of notebooks 00-11 in JupyterLab: each control moved, timed in the page from the
input event to the first frame painted with the new picture.

One generated notebook (``e2e_explorers.ipynb``, written into the served copy) builds every
explorer of ``helpers.explorers.registry`` the way its cell does, one cell each, so the page holds
them all without running the chapters. Then, for each explorer and each control:

- **step**: one key press (an arrow key on a slider's handle, Space on a checkbox or a toggle
  button, the next option of a dropdown), a pause, the next, towards the far end and back.
  Per step: input event -> the widget's message leaves on the kernel websocket ("send") -> the
  picture's message arrives ("server + kernel") -> <img> src set ("widget manager") -> image
  decoded ("decode") -> next animation frame ("frame"). The latency is input -> that frame.
  A press that leaves the picture as it was (no message goes out for an unchanged picture, say
  the pad side when there are no pad tokens) is counted as unchanged, not timed.
- **drag** (sliders): the mouse holds the handle and moves it ``DRAG_POSITIONS`` times, one move
  every ``DRAG_PAUSE_MS``, as a hand does. Per position the handle reached: the time from the
  pointer move that brought it there to the first frame painted with a picture whose message left at or after it (a
  picture of that position or a later one). ipywidgets keeps one message per control in flight
  and sends the latest value when the kernel is idle again, so a drag is coalesced to the
  latest position: "pictures" says how many of the positions were drawn.

First comes the transport alone (:data:`FLOOR`): a slider that swaps two fixed pictures,
with no compute, drawing, readout or echo, the floor under every explorer in the same page.

``make bench`` runs the whole table (``e2e/test_latency.py::test_every_explorer``, saved as
build/e2e/explorers.json); ``make e2e`` runs it with fewer steps.
"""

from __future__ import annotations

import os
import statistics
import time
from pathlib import Path

import nbformat
import numpy as np
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from e2e import lab_page
from helpers.explorers.registry import EXPLORER_CELLS

NOTEBOOK = "e2e_explorers.ipynb"
STEP_PAUSE = 0.3  # seconds from one key press to the next (a learner tapping a key)
# A key press whose picture has not been painted this long after the kernel went idle left the
# picture as it was (no message is sent for an unchanged picture): counted as "unchanged", not timed.
UNCHANGED_AFTER_MS = 3000
DRAG_POSITIONS = 12
DRAG_PAUSE_MS = 40  # the hand reaches a new position every 40 ms (25 positions a second)
PARTS = ("send", "server + kernel", "widget manager", "decode", "frame")

# Hooks installed once per page. A record starts at the first input event (keydown or input)
# while none is open, and ends when the target <img> is painted with a new picture.
INSTRUMENT_JS = """
() => {
  if (window.__lat) return;
  const lat = window.__lat = {records: [], current: null, target: null, sends: [], bigs: [],
                              frames: [], values: [], handle: null, lastMove: null};
  const start = (event) => {
    // a key press's own input event (Space on a checkbox) belongs to the record the key press opened
    if (event.type === 'input' && performance.now() - (lat.keydown ?? -1e9) < 100) return;
    if (event.type === 'keydown') lat.keydown = performance.now();
    if (lat.target && lat.current === null) lat.current = {input: performance.now(), sent: null, received: null, bytes: null};
  };
  document.addEventListener('keydown', start, true);
  document.addEventListener('input', start, true);
  // A drag: the handle moves (and the widget may send) inside the pointermove's own handlers,
  // before a MutationObserver hears of it, so a position is timed from its pointermove.
  document.addEventListener('pointermove', () => { lat.lastMove = performance.now(); }, true);
  const send = WebSocket.prototype.send;
  WebSocket.prototype.send = function (data) {
    if (!this.__latHooked) {
      this.__latHooked = true;
      const handler = this.onmessage;  // JupyterLab's own: it updates the <img> before later listeners
      this.onmessage = (event) => {
        const size = event.data.byteLength ?? event.data.size ?? event.data.length;
        if (size > 4096) {
          const now = performance.now();
          lat.bigs.push(now);
          const rec = lat.current;
          if (rec && rec.sent !== null && rec.received === null) { rec.received = now; rec.bytes = size; }
        }
        return handler.call(this, event);
      };
    }
    const now = performance.now();
    lat.sends.push(now);
    if (lat.current && lat.current.sent === null) lat.current.sent = now;
    return send.call(this, data);
  };
  new MutationObserver((mutations) => {
    for (const m of mutations) {
      const el = m.target;
      if (m.attributeName === 'aria-valuenow' && el === lat.handle) {
        lat.values.push({t: lat.lastMove ?? performance.now(), value: el.getAttribute('aria-valuenow')});
      }
      if (!['src', 'data-paint'].includes(m.attributeName) || el !== lat.target) continue;
      const rec = lat.current || {};
      lat.current = null;
      rec.src = performance.now();
      // a canvas is painted already decoded; a picture painted before any message came back was sent ahead
      rec.ahead = el.dataset.source === 'ahead';
      const frame = {received: lat.bigs.length ? lat.bigs[lat.bigs.length - 1] : null, src: rec.src, ahead: rec.ahead};
      (el.tagName === 'CANVAS' ? Promise.resolve() : el.decode().catch(() => null)).then(() => {
        rec.decoded = frame.decoded = performance.now();
        requestAnimationFrame(() => {
          rec.frame = frame.frame = performance.now();
          if (rec.input !== undefined) lat.records.push(rec);
          lat.frames.push(frame);
        });
      });
    }
  }).observe(document.body, {attributes: true, subtree: true, attributeFilter: ['src', 'data-paint', 'aria-valuenow']});
}
"""


# The transport alone: a slider that swaps two fixed pictures (notebook 03's explorer at two
# positions) and does nothing else: no compute, no drawing, no readout, no echo. What it takes
# is the floor under every explorer in the same page: kernel, server and browser.
FLOOR = "fixed pictures"
FLOOR_SOURCE = """
import ipywidgets as widgets
from helpers.explorers.registry import build_explorer
from helpers.widgets import without_echo

live = build_explorer("03_scaling_sqrt_dk.ipynb", "1e5ebf0a")
pictures = [live.image.value]
with live.held():
    for control in live.controls.values():
        if hasattr(control, "max") and control.value != control.max:
            control.value = control.max
            break
pictures.append(live.image.value)
assert pictures[0] != pictures[1]
slider = widgets.IntSlider(value=0, min=0, max=40, description="picture")
image = widgets.Image(value=pictures[0], format="png")
slider.observe(lambda change: setattr(image, "value", pictures[change["new"] % 2]), names="value")
without_echo(slider)
widgets.VBox([widgets.HBox([slider]), widgets.HBox([image])])
"""


def write_notebook(lab_root: Path, only: list[str] | None = None, compare: bool = False,
                   before: str | None = None, echo: bool = False, floor: bool = False,
                   setup: dict[str, str] | None = None) -> list[tuple[str, str]]:
    """The notebook that builds every registered explorer (those of ``only``'s notebooks), one
    cell each, in the served folder; returns (notebook, variant) per explorer cell, in order.
    ``compare``: each explorer also with Agg drawing every artist ("agg", ``LiveFigure.paste =
    False``), measured right after the one as shipped ("paste"), in the same run. ``before``: the
    name of another copy of the helpers package importable in the kernel (say an earlier commit's,
    its imports renamed): each explorer also as that copy builds it ("before"), in the same run.
    ``echo``: each explorer also with its controls echoed back as ipywidgets 8 does by default
    ("echo"). ``floor``: first, the fixed-picture slider (:data:`FLOOR`, variant "floor").
    ``setup``: notebook -> a line run on its explorer before it is shown (say ``explorer.set(n=32)``).
    Variants alternate their order from one explorer to the next."""
    keys, cells = [], [nbformat.v4.new_code_cell("import helpers\nprint(helpers.__file__)")]
    if floor:
        cells.append(nbformat.v4.new_code_cell(FLOOR_SOURCE.strip()))
        keys.append((FLOOR, "floor"))
    variants = ["paste", *(["agg"] if compare else []), *(["echo"] if echo else []), *(["before"] if before else [])]
    built = 0
    for stem, cell_id in EXPLORER_CELLS:
        if only and stem not in only:
            continue
        # Every other explorer measures its variants in the reverse order: the one measured second
        # finds the kernel's shared caches (matplotlib's text layouts, fonts) warmed by the first.
        built += 1
        for variant in variants if built % 2 else variants[::-1]:
            package = before if variant == "before" else "helpers"
            source = (f"from {package}.explorers.registry import build_explorer\n"
                      f"explorer = build_explorer({stem + '.ipynb'!r}, {cell_id!r})\n")
            source += "explorer.paste = False\nexplorer.refresh()\n" if variant == "agg" else ""
            source += ("for control in explorer.controls.values():\n"
                       "    control._value_metadata.pop('echo_update', None)\n") if variant == "echo" else ""
            source += (setup or {}).get(stem, "") + "\n"
            cells.append(nbformat.v4.new_code_cell(source + "explorer"))
            keys.append((stem, variant))
    nb = nbformat.v4.new_notebook(cells=cells, metadata={
        "kernelspec": {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}})
    nbformat.write(nb, lab_root / NOTEBOOK)
    return keys


def stats(values: list[float]) -> dict:
    return {"n": len(values), "median_ms": round(statistics.median(values), 1),
            "p90_ms": round(float(np.percentile(values, 90)), 1), "max_ms": round(max(values), 1)}


def breakdown(records: list[dict]) -> dict:
    """Median ms of each part of a step, over the steps where every mark was seen."""
    complete = [r for r in records if r.get("sent") is not None and r.get("received") is not None]
    if len(complete) < max(1, len(records) // 2):
        return {}
    marks = ["input", "sent", "received", "src", "decoded", "frame"]
    return {part: round(statistics.median(r[b] - r[a] for r in complete), 1)
            for part, a, b in zip(PARTS, marks[:-1], marks[1:], strict=True)}


def _reset(page, target=None, handle=None) -> None:
    page.evaluate("([img, handle]) => Object.assign(window.__lat, {records: [], current: null, target: img,"
                  " sends: [], bigs: [], frames: [], values: [], handle, lastMove: null})", [target, handle])


def step_control(page, explorer, control: lab_page.Control, steps: int) -> dict:
    """``steps`` key presses on one control, each timed to its picture; the stats and breakdown."""
    img = explorer.locator(lab_page.PICTURE).first.element_handle()
    _reset(page, img)
    direction = None
    unchanged = 0
    for step in range(steps):
        if control.kind == "slider":
            value, low, high = lab_page.slider_value(control)
            if direction is None or not low < value < high:  # towards the far end; turn at either end
                direction = 1 if value < high and (direction is None or value <= low) else -1
            lab_page.step_slider(control, direction)
        else:
            lab_page.change(control)
        time.sleep(STEP_PAUSE)  # no polling while a step is under way: it costs the page time
        if page.evaluate("window.__lat.current") is not None:  # input seen, picture not yet painted
            lab_page.wait_kernel_idle(page, settle=0.05)
            try:  # the kernel is done: the picture is on its way, unless it did not change
                page.wait_for_function("() => window.__lat.current === null", timeout=UNCHANGED_AFTER_MS)
            except PlaywrightTimeout:  # the same picture (say the pad side with no pad tokens): not a step
                page.evaluate("window.__lat.current = null")
                unchanged += 1
        painted = step + 1 - unchanged  # each of them recorded once its frame is painted
        if page.evaluate("window.__lat.records.length") < painted:
            page.wait_for_function("k => window.__lat.records.length >= k", arg=painted, timeout=15_000)
        lab_page.wait_kernel_idle(page, settle=0.05)
    records = page.evaluate("window.__lat.records")
    _reset(page)
    latencies = [r["frame"] - r["input"] for r in records]
    if not latencies:
        return None
    return {"how": "arrow key" if control.kind == "slider" else "key", **stats(latencies), "parts_ms": breakdown(records),
            "ahead": sum(bool(r.get("ahead")) for r in records), **({"unchanged": unchanged} if unchanged else {})}


def drag_control(page, explorer, control: lab_page.Control) -> dict | None:
    """Hold the slider's handle and move it across DRAG_POSITIONS positions, one every DRAG_PAUSE_MS."""
    img = explorer.locator(lab_page.PICTURE).first.element_handle()
    handle = control.locator.locator(".noUi-handle").first
    track = control.locator.locator(".noUi-target, .noUi-base").first
    value, low, high = lab_page.slider_value(control)
    if high <= low:
        return None
    box, bar = handle.bounding_box(), track.bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    room = {1: bar["x"] + bar["width"] - x, -1: x - bar["x"]}
    towards = 1 if room[1] >= room[-1] else -1  # across most of the track, towards the far end
    stride = min(room[towards], 0.8 * bar["width"]) / DRAG_POSITIONS
    _reset(page, img, handle.element_handle())
    page.mouse.move(x, y)
    page.mouse.down()
    for _ in range(DRAG_POSITIONS):
        x += towards * stride
        page.mouse.move(x, y, steps=2)
        page.wait_for_timeout(DRAG_PAUSE_MS)
    page.mouse.up()
    lab_page.wait_kernel_idle(page, settle=0.3)
    data = page.evaluate("({values: window.__lat.values, sends: window.__lat.sends, frames: window.__lat.frames})")
    _reset(page)
    moves = data["values"]
    frames = [f for f in data["frames"] if f.get("frame") is not None and (f.get("ahead") or f.get("received") is not None)]
    sends = sorted(data["sends"])
    # each picture from the kernel answers the last message sent before it arrived; one sent
    # ahead is painted by the move itself
    answered = [f["src"] if f.get("ahead") else max((s for s in sends if s <= f["received"]), default=None) for f in frames]
    latencies = []
    for move in moves:
        first = next((f["frame"] for f, s in zip(frames, answered, strict=True) if s is not None and s >= move["t"]), None)
        if first is not None:
            latencies.append(first - move["t"])
    if not latencies:
        return None
    return {"how": "drag", **stats(latencies), "positions": len(moves), "pictures": len(frames),
            "ahead": sum(bool(f.get("ahead")) for f in frames), "end_ms": round(latencies[-1], 1)}


def wait_drawn_ahead(view, timeout: float = 180_000) -> None:
    """Wait until the kernel has drawn ahead what it plans for this explorer (a FrameView says so on
    its canvas), as a learner reading the page gives it time to; an Image view draws nothing ahead."""
    canvas = view.locator("canvas.al-frame")
    if canvas.count():
        canvas.first.evaluate("(c, timeout) => new Promise((done, fail) => { const t0 = performance.now();"
                              " const poll = () => c.dataset.drawingAhead === '0' ? done()"
                              " : performance.now() - t0 > timeout ? fail(new Error('still drawing ahead'))"
                              " : setTimeout(poll, 100); poll(); })", timeout)


def measure(page, lab, lab_root: Path, steps: int, drag: bool = True, only: list[str] | None = None,
            compare: bool = False, before: str | None = None, echo: bool = False, floor: bool = False,
            setup: dict[str, str] | None = None, progress=print) -> dict:
    """Every control of every explorer: {"rows": [...], "load": ...}; each row one control and one
    way of moving it."""
    keys = write_notebook(lab_root, only, compare, before, echo, floor, setup)
    lab_page.open_notebook(page, lab, NOTEBOOK)
    lab_page.run_all(page, timeout=600)
    problems = lab_page.problems(page)
    assert not problems, "\n".join(problems)
    page.evaluate(INSTRUMENT_JS)
    views = lab_page.explorers(page)
    assert len(views) == len(keys), f"{len(views)} explorers shown, {len(keys)} built"
    for view in views:  # the kernel is idle again: the transport alone waits behind nothing
        wait_drawn_ahead(view)
    rows, loads = [], [os.getloadavg()[0]]
    for (stem, variant), view in zip(keys, views, strict=True):
        view.evaluate("el => el.scrollIntoView({block: 'center'})")
        page.wait_for_timeout(300)
        for control in lab_page.controls(view):
            wait_drawn_ahead(view)  # a learner looks at the picture before moving the next control
            found = [step_control(page, view, control, steps)]  # None: no step changed the picture
            if drag and control.kind == "slider":
                wait_drawn_ahead(view)
                found.append(drag_control(page, view, control))
            for row in filter(None, found):
                rows.append({"explorer": stem, "variant": variant, "control": control.label, **row})
                progress(line(rows[-1]))
        loads.append(os.getloadavg()[0])
    return {"rows": rows, "load_average": {"start": round(loads[0], 2), "max": round(max(loads), 2),
                                           "end": round(loads[-1], 2)}, "cpus": os.cpu_count()}


def line(row: dict) -> str:
    parts = row.get("parts_ms") or {}
    extra = (f"pictures {row['pictures']}/{row['positions']} positions, end {row['end_ms']:.0f}"
             if row["how"] == "drag" else " ".join(f"{k} {v:.1f}" for k, v in parts.items()))
    extra += f"; {row['ahead']} painted from pictures sent ahead" if row.get("ahead") else ""
    extra += f" ({row['unchanged']} presses left the picture as it was)" if row.get("unchanged") else ""
    name = row["explorer"] + ("" if row.get("variant", "paste") == "paste" else f" ({row['variant']})")
    return (f"{name:<30} {row['control'][:18]:<18} {row['how']:<9} {row['n']:>3} "
            f"{row['median_ms']:>7.1f} {row['p90_ms']:>7.1f}  {extra}")


def table(result: dict) -> list[str]:
    header = (f"{'explorer':<30} {'control':<18} {'how':<9} {'n':>3} {'median':>7} {'p90':>7}  "
              f"breakdown (median ms: {', '.join(PARTS)}) / drag")
    load = result["load_average"]
    out = [header, *map(line, result["rows"])]
    names = {"paste": "as shipped", "agg": "Agg drawing every artist", "before": "before (E2E_BEFORE)",
             "echo": "as shipped, controls echoed back", "floor": f"{FLOOR} (transport alone)"}
    for variant, summary in summarise(result["rows"]).items():
        out.append(f"{names.get(variant, variant)}: median over explorers {summary['median_over_explorers_ms']:.1f} ms (each explorer's "
                   f"median over its controls, key steps and drags); slowest control {summary['slowest_median_ms']:.1f} ms, "
                   f"largest p90 {summary['largest_p90_ms']:.1f} ms")
    out.append(f"load average (1 min) at start {load['start']}, highest {load['max']}, end {load['end']} on {result['cpus']} CPUs")
    return out


def summarise(rows: list[dict]) -> dict[str, dict]:
    """Per variant: the median over explorers of each explorer's median over its rows, the
    slowest row's median, the largest p90, and each explorer's median."""
    found = {}
    for variant in dict.fromkeys(r.get("variant", "paste") for r in rows):
        mine = [r for r in rows if r.get("variant", "paste") == variant]
        per_explorer = {}
        for row in mine:
            per_explorer.setdefault(row["explorer"], []).append(row["median_ms"])
        medians = {stem: statistics.median(v) for stem, v in per_explorer.items()}
        found[variant] = {"median_over_explorers_ms": round(statistics.median(medians.values()), 1),
                          "slowest_median_ms": max(r["median_ms"] for r in mine),
                          "largest_p90_ms": max(r["p90_ms"] for r in mine), "explorers_ms": medians}
    return found
