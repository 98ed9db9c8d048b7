"""Slider-to-picture latency in JupyterLab, timed in the page: every explorer, then notebook 03's.

``test_every_explorer`` moves every control of every explorer of notebooks 00-11 (keys and
slider drags, ``e2e/explorer_latency.py``) and prints a table per explorer and control: median,
p90 and the breakdown (send, server + kernel, widget manager, decode, frame), saved as
build/e2e/explorers.json. ``make bench`` runs it with more steps per control.

``test_saturation_latency``: one arrow-key step on notebook 03's d_k slider at sequence length 32,
timed with ``performance.now()``: keydown -> the widget's message leaves on the kernel websocket
-> the new picture's message arrives -> <img> src set -> image decoded -> next frame (the
picture is on screen). Median of 25 steps, printed at the end of ``make e2e`` and saved in
build/e2e/latency.json. The kernel-side part (compute, draw, PNG encode) is timed again in this
process for the same update, so the rest is message transport and the browser.

The target, a median of at most 40 ms on a quiet 2-core machine, is reported, not checked: the
figure depends on what else the machine runs (the load average is printed with it). The check is
a ratio within the run: 03's step at most BOUND_RATIO times the median key step of the fastest
of a few other explorers (REFERENCE), measured right after it in the same page, which a busy
machine slows alike. To split the kernel from the Jupyter server
without a browser, run ``.venv/bin/python -m e2e.kernel_roundtrip``. Until notebook 03 exists, a
stand-in LiveHeatmap at n = 32 is measured instead.
"""

from __future__ import annotations

import json
import os
import re
import statistics
import time
from pathlib import Path

import nbformat

from e2e import explorer_latency, lab_page
from e2e.conftest import RESULTS
from e2e.jupyter_server import widget_notebooks
from e2e.latency_probe import PROBE_SOURCE, breakdown

STEPS = 25
SEQUENCE_LENGTH = 32
STEP_PAUSE = 0.3  # seconds from one key press to the next (a learner tapping the arrow key)
TARGET_MS = 40  # the series' goal (reported): slider to picture within 40 ms on a quiet 2-core machine
# The bound (checked) is a ratio within the run: 03's step may take at most BOUND_RATIO times the
# median key step of the fastest of the REFERENCE explorers, measured right after it in the same
# page. A busy machine slows both alike; losing the in-place redraw (a full re-plot costs
# several times a step) crosses it.
BOUND_RATIO = 1.5
REFERENCE = ["01_dot_product", "02_softmax", "08_position", "10_trained_attention"]  # the explorers measured for it
LENGTH_LABEL = re.compile(r"^(n\b|seq|.*length|.*tokens)", re.IGNORECASE)
DK_LABEL = re.compile(r"d.?k", re.IGNORECASE)

# Per step: keydown; first websocket send after it; first big (picture) message received;
# <img> src set; image decoded; next animation frame after that.
INSTRUMENT_JS = """
(img) => {
  const lat = window.__latency = {events: [], current: null};
  document.addEventListener('keydown', () => {
    lat.current = {keydown: performance.now(), sent: null, received: null, bytes: null};
  }, true);
  const send = WebSocket.prototype.send;
  WebSocket.prototype.send = function (data) {
    if (!this.__latencyHooked) {
      this.__latencyHooked = true;
      // Wrap JupyterLab's own handler: it updates the <img> before later listeners run.
      const handler = this.onmessage;
      this.onmessage = (event) => {
        const size = event.data.byteLength ?? event.data.size ?? event.data.length;
        const rec = lat.current;
        if (rec && rec.sent !== null && rec.received === null && size > 4096) {
          rec.received = performance.now();
          rec.bytes = size;
        }
        return handler.call(this, event);
      };
    }
    if (lat.current && lat.current.sent === null) lat.current.sent = performance.now();
    return send.call(this, data);
  };
  new MutationObserver(() => {
    const rec = lat.current;
    if (!rec) return;
    lat.current = null;
    rec.src = performance.now();
    img.decode().catch(() => null).then(() => {
      rec.decoded = performance.now();
      requestAnimationFrame(() => { rec.frame = performance.now(); lat.events.push(rec); });
    });
  }).observe(img, {attributes: true, attributeFilter: ['src']});
}
"""


# Every control of every explorer (e2e/explorer_latency.py). `make bench` sets E2E_EXPLORER_STEPS
# to step each control further; E2E_EXPLORERS picks notebooks (e.g. "03_scaling_sqrt_dk 06_multi_head_attention");
# E2E_COMPARE=1 measures each explorer twice in the run, as shipped and with Agg drawing every
# artist (LiveFigure.paste = False), one after the other; E2E_BEFORE=<package> also measures each
# explorer as another copy of helpers builds it (an earlier commit's, imported under that name);
# E2E_ECHO=1 also measures each with its controls echoed back (ipywidgets 8's default). First comes
# the transport alone, a slider swapping two fixed pictures (E2E_FLOOR=0 leaves it out).
EXPLORER_STEPS = int(os.environ.get("E2E_EXPLORER_STEPS", "6"))


def test_every_explorer(page, lab, lab_root, out_dir):
    only = os.environ.get("E2E_EXPLORERS", "").split() or None
    compare = os.environ.get("E2E_COMPARE", "0") == "1"
    result = explorer_latency.measure(page, lab, lab_root, steps=EXPLORER_STEPS, only=only, compare=compare,
                                      before=os.environ.get("E2E_BEFORE") or None,
                                      echo=os.environ.get("E2E_ECHO", "0") == "1",
                                      floor=os.environ.get("E2E_FLOOR", "1") == "1",
                                      progress=lambda text: print(text, flush=True))
    lines = explorer_latency.table(result)
    print("\n" + "\n".join(lines))
    RESULTS["explorers"] = {**result, "steps": EXPLORER_STEPS, "lines": lines}
    (out_dir / "explorers.json").write_text(json.dumps({**result, "steps": EXPLORER_STEPS}, indent=1))


def saturation_notebook(lab_root: Path) -> tuple[str, str]:
    """Notebook 03 when it is there (its saturation explorer), else a stand-in notebook
    written into the served folder that shows a LiveHeatmap at n = 32."""
    found = [p for p in widget_notebooks(lab_root) if p.name.startswith("03_") and p.parent == Path(".")]
    if found:
        return str(found[0]), "notebook 03 saturation explorer"
    nb = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell(PROBE_SOURCE.strip() + "\nlive")],
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}},
    )
    nbformat.write(nb, lab_root / "e2e_latency_probe.ipynb")
    return "e2e_latency_probe.ipynb", "stand-in LiveHeatmap (notebook 03 not there yet)"


def find_saturation_explorer(explorers):
    """The explorer with a sequence-length slider, and the slider to step (d_k first)."""
    for explorer in explorers:
        sliders = [c for c in lab_page.controls(explorer) if c.kind == "slider"]
        length = [c for c in sliders if LENGTH_LABEL.match(c.label)]
        others = [c for c in sliders if c not in length]
        if length and others:
            stepped = next((c for c in others if DK_LABEL.search(c.label)), others[0])
            return explorer, length[0], stepped
    raise AssertionError("no explorer with a sequence-length slider; controls seen: "
                         + str([[str(c) for c in lab_page.controls(e)] for e in explorers]))


def set_slider(page, control, target: float, limit: int = 100) -> None:
    """Arrow keys until the slider's handle says ``target``; then wait for the kernel."""
    for _ in range(limit):
        value, _, _ = lab_page.slider_value(control)
        if value == target:
            lab_page.wait_kernel_idle(page, settle=0.3)
            return
        lab_page.step_slider(control, 1 if value < target else -1)
    raise AssertionError(f"{control} did not reach {target}")


def median_of(events, start: str, end: str) -> float:
    return statistics.median(e[end] - e[start] for e in events)


def test_saturation_latency(page, lab, lab_root, out_dir):
    notebook, what = saturation_notebook(lab_root)
    lab_page.open_notebook(page, lab, notebook)
    lab_page.run_all(page)
    assert not lab_page.problems(page), "\n".join(lab_page.problems(page))
    explorer, length, stepped = find_saturation_explorer(lab_page.explorers(page))
    explorer.evaluate("el => el.scrollIntoView({block: 'center'})")
    set_slider(page, length, SEQUENCE_LENGTH)

    load_before = os.getloadavg()[0]
    explorer.locator("img.widget-image").first.evaluate(INSTRUMENT_JS)
    handle = stepped.locator.locator(".noUi-handle").first
    handle.focus()
    value, _, high = lab_page.slider_value(stepped)
    direction = 1 if value < high else -1
    for step in range(STEPS):  # back and forth between two neighbouring positions
        handle.press("ArrowRight" if direction > 0 else "ArrowLeft")
        time.sleep(STEP_PAUSE)  # no polling of the page while a step is under way: it costs it time
        if page.evaluate("window.__latency.events.length") <= step:  # a slow step: wait for it
            page.wait_for_function("k => window.__latency.events.length > k", arg=step, timeout=15_000)
        lab_page.wait_kernel_idle(page, settle=0.05)
        direction = -direction
    events = page.evaluate("window.__latency.events")
    load = (load_before + os.getloadavg()[0]) / 2
    assert len(events) == STEPS, events
    assert lab_page.slider_value(length)[0] == SEQUENCE_LENGTH

    total = median_of(events, "keydown", "frame")
    complete = [e for e in events if e["sent"] is not None and e["received"] is not None]
    parts = {
        "keydown -> message sent": median_of(complete, "keydown", "sent"),
        "sent -> picture message back (server + kernel)": median_of(complete, "sent", "received"),
        "received -> <img> src set (widget manager)": median_of(complete, "received", "src"),
        "src set -> decoded": median_of(events, "src", "decoded"),
        "decoded -> next frame": median_of(events, "decoded", "frame"),
    } if len(complete) >= STEPS // 2 else {}
    try:
        kernel = breakdown(saturation=notebook.startswith("03_"), n=SEQUENCE_LENGTH)
    except Exception as error:  # a diagnostic only, never the test's verdict
        kernel = {"breakdown failed": repr(error)}
    verdict = "meets" if total <= TARGET_MS else "OVER"
    lines = [
        f"{what}: {stepped} stepped by arrow key at {length.label} = {SEQUENCE_LENGTH}, "
        f"median of {STEPS} steps = {total:.0f} ms keydown -> new picture on screen "
        f"(min {min(e['frame'] - e['keydown'] for e in events):.0f}, "
        f"max {max(e['frame'] - e['keydown'] for e in events):.0f}); {verdict} the {TARGET_MS} ms target",
        "  medians: " + "; ".join(f"{k} {v:.1f} ms" for k, v in parts.items()),
        "  kernel side, same update timed in the test process: " + ", ".join(f"{k} {v}" for k, v in kernel.items()),
        f"  machine: {os.cpu_count()} CPUs, load average {load:.1f} while measuring (this test alone: about 1)"
        + (" - other work was running: expect slower than on a quiet machine" if load > (os.cpu_count() or 1) else ""),
    ]
    RESULTS["latency"] = {
        "notebook": notebook, "explorer": what, "stepped": str(stepped), "n": SEQUENCE_LENGTH,
        "steps": STEPS, "median_ms": round(total, 1), "target_ms": TARGET_MS, "load_average": round(load, 2),
        "parts_ms": {k: round(v, 1) for k, v in parts.items()}, "kernel": kernel, "lines": lines,
    }
    (out_dir / "latency_events.json").write_text(json.dumps(events, indent=1))

    # The reference, measured right after in the same page, so that both see the same load.
    measured = explorer_latency.measure(page, lab, lab_root, steps=EXPLORER_STEPS, drag=False, only=REFERENCE,
                                        progress=lambda text: None)
    fastest, reference = explorer_latency.fastest(measured["rows"])
    bound = BOUND_RATIO * reference
    lines.append(f"  bound: at most {BOUND_RATIO} x the median key step of the fastest of {', '.join(REFERENCE)}, "
                 f"measured right after ({fastest}, {reference:.0f} ms; load average up to "
                 f"{measured['load_average']['max']}) = {bound:.0f} ms: {'met' if total <= bound else 'CROSSED'}")
    RESULTS["latency"].update(lines=lines, bound_ms=round(bound, 1), reference={fastest: round(reference, 1)})
    print("\n" + "\n".join(lines))
    assert total <= bound, f"slider-to-picture latency {total:.0f} ms: over {BOUND_RATIO} x the fastest explorer's {reference:.0f} ms"

