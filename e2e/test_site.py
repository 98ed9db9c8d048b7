"""The static site (``make site``) in headless Chromium, as a reader meets it, with no network.

build/site/ is served from 127.0.0.1 by a thread of this process. Each page of both editions
opens in a fresh browser context (nothing cached), so its first load is what a new reader
downloads. Every page: no console error, no failed request, no request leaving the site's
origin, maths typeset, a link to its twin in the other language, a first load within
budget, and no axe-core (WCAG 2.1 A/AA) violation. Under every Predict the output waits for a guess;
an exercise whose answer is a value is checked on its page, by keyboard, with the Python checker's reply;
every internal link and anchor resolves. Every explorer: every control moved from the keyboard or the mouse, each move showing
the picture and readouts of the new position; a few positions checked pixel for pixel
against the kernel's own picture; the input-to-picture latency measured and printed, with the focus
first (the picture decoded ahead, as when the pointer arrives) and cold (a keyboard jump to a picture never fetched).
Results and screenshots: build/site-e2e/.
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import os
import re
import statistics
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from e2e.conftest import VIEWPORT
from e2e.jupyter_server import REPO

SITE = REPO / "build" / "site"
OUT = REPO / "build" / "site-e2e"
FIRST_LOAD_BUDGET = 3_000_000  # bytes a page may load before the reader touches a control
LATENCY_FRAMES = 1.5  # median latency, a control change to the new picture painted, in display frames measured
# in the same page (16.7 ms at 60 Hz): a picture decoded ahead shows at the next frame (5.3 ms median on an idle
# machine, 16 ms under a CI run beside it); only one not decoded ahead
# (a real regression) crosses it, and a busy machine stretches the frame and the latency alike
PAGES = sorted(p.relative_to(SITE).as_posix() for p in SITE.glob("*/**/*.html")
               if "/_static/" not in p.as_posix()) if SITE.exists() else []  # _static: the theme's template files
EXPLORER_PAGES = sorted({(lang, m.parent.name.rsplit("-", 1)[0])  # (language, notebook)
                         for lang in ("en", "ko") for m in (SITE / lang / "_explorers").glob("*/manifest.json")}) \
    if SITE.exists() else []
RESULTS: dict = {"first_load": {}, "latency": {}, "explorers": {}, "axe": {}}
AXE = REPO / "build" / "axe" / "axe.min.js"  # axe-core, pinned in the Makefile (make test-site fetches it)
AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
SCREENSHOTS = {"en/index.html", "ko/index.html", "en/03_scaling_sqrt_dk.html", "ko/05_masking.html",
               "en/11_tiny_vla.html"}


class QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


@pytest.fixture(scope="session")
def site_url():
    if not (SITE / "en" / "index.html").exists():
        pytest.fail("build/site/ is missing: run `make site` first (`make test-site` does)")
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(QuietHandler, directory=str(SITE)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def summary(results: dict) -> list[str]:
    """The lines the site test prints at the end: first loads, axe-core, latency."""
    lines = []
    loads = results.get("first_load", {})
    if loads:
        page, size = max(loads.items(), key=lambda kv: kv[1])
        lines.append(f"site: {len(loads)} pages; largest first load {size / 1e6:.2f} MB ({page})")
    for lang in ("en", "ko"):
        axe = {p: n for p, n in results.get("axe", {}).items() if p.startswith(lang + "/")}
        if axe:
            lines.append(f"site axe-core (WCAG 2.1 A/AA), {lang}: {sum(axe.values())} violating elements "
                         f"on {sum(n > 0 for n in axe.values())} of {len(axe)} pages")
    for name, result in results.get("latency", {}).items():
        lines.append(f"site latency, {name}: median {result['median_ms']:.1f} ms "
                     f"({result['median_ms'] / result['frame_ms']:.2f} display frames of {result['frame_ms']:.1f} ms) "
                     f"over {result['changes']} changes, {result['preloaded']} decoded ahead; p90 {result['p90_ms']:.1f} ms, "
                     f"max {result['max_ms']:.1f} ms; waiting for the picture, median {result['waited_median_ms']:.1f} ms"
                     + (f" (its fetch {result['fetch_median_ms']:.1f} ms)" if "fetch_median_ms" in result else "") + "; "
                     "load average " + ", ".join(f"{x:.2f}" for x in result["load_average"]))
    return lines


@pytest.fixture(scope="session", autouse=True)
def report(request):
    """Each process saves what it measured (results-<xdist worker>.json); a run without workers
    prints it, and e2e/conftest.py merges the workers' files when the run used several."""
    yield
    OUT.mkdir(parents=True, exist_ok=True)
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    (OUT / f"results-{worker or 'main'}.json").write_text(json.dumps(RESULTS, indent=1, ensure_ascii=False))
    if worker is None:
        capture = request.config.pluginmanager.getplugin("capturemanager")
        with capture.global_and_fixture_disabled():
            print("\n" + "\n".join(summary(RESULTS)))


class Watch:
    """What a page did: console errors, failed requests, requests to another origin."""

    def __init__(self, page, origin: str) -> None:
        self.errors: list[str] = []
        self.outside: list[str] = []
        page.on("console", lambda m: self.errors.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
        page.on("pageerror", lambda e: self.errors.append(f"page error: {e}"))
        self.leaving = False  # a reload in progress aborts the pictures being fetched ahead: not a failure
        page.on("requestfailed", self._failed)
        page.on("response", lambda r: self.errors.append(f"HTTP {r.status}: {r.url}") if r.status >= 400 else None)
        page.on("request", lambda r: None if r.url.startswith((origin, "data:", "blob:")) else self.outside.append(r.url))

    def _failed(self, request) -> None:
        if not (self.leaving and "ERR_ABORTED" in (request.failure or "")):
            self.errors.append(f"failed: {request.url} {request.failure}")

    def reload(self, page) -> None:
        self.leaving = True
        try:
            page.reload()
            page.wait_for_load_state("networkidle")
        finally:
            self.leaving = False


def bytes_loaded(page) -> int:
    """Bytes the page has downloaded so far: its HTML and every resource (Resource Timing)."""
    return page.evaluate("""() => performance.getEntriesByType('navigation').concat(performance.getEntriesByType('resource'))
      .reduce((sum, e) => sum + (e.encodedBodySize || 0), 0)""")


def open_page(browser, url: str, path: str):
    context = browser.new_context(viewport=VIEWPORT)
    context.set_default_timeout(30_000)
    page = context.new_page()
    watch = Watch(page, url)
    page.goto(url + path)
    page.wait_for_load_state("networkidle")
    return context, page, watch


def axe_violations(page) -> list[dict]:
    """axe-core's WCAG 2.1 A and AA violations on the page as it stands: rule, impact, elements."""
    if not AXE.exists():
        pytest.fail(f"{AXE.relative_to(REPO)} is missing: `make test-site` fetches it (npm pack axe-core)")
    page.add_script_tag(path=str(AXE))
    return page.evaluate("""async (tags) => {
      const r = await axe.run(document, {runOnly: {type: 'tag', values: tags}, resultTypes: ['violations']});
      return r.violations.map(v => ({rule: v.id, impact: v.impact, nodes: v.nodes.length,
                                     where: v.nodes.slice(0, 3).map(n => n.target.join(' '))}));
    }""", AXE_TAGS)


def visible_text_outside_code(page) -> str:
    return page.evaluate("""() => {
      const clone = document.querySelector('main, article, body').cloneNode(true);
      clone.querySelectorAll('pre, code, script, style, .highlight, mjx-container, .MathJax').forEach(e => e.remove());
      return clone.textContent;
    }""")


@pytest.mark.parametrize("path", PAGES)
def test_page_loads_clean_offline_typeset_and_linked(browser, site_url, path):
    context, page, watch = open_page(browser, site_url, path)
    try:
        if page.locator(".math").count():
            page.wait_for_function("() => window.MathJax && MathJax.startup && MathJax.startup.promise")
            page.evaluate("() => MathJax.startup.promise")
            assert page.locator("mjx-container").count() > 0, "maths on the page but nothing typeset"
        text = visible_text_outside_code(page)
        raw = re.findall(r"\$\$|\\\(|\\\[|(?<![\w$])\$[^$\s][^$]*\$(?![\w$])", text)
        assert not raw, f"untypeset maths: {raw[:5]}"
        lang = path.split("/")[0]
        other = "ko" if lang == "en" else "en"
        twin = page.locator(f"a.al-lang-switch[hreflang='{other}']")
        assert twin.count() == 1, "no link to the page in the other language"
        target = (SITE / lang / Path(path).relative_to(lang).parent / twin.get_attribute("href")).resolve()
        assert target.exists(), f"the twin link points to a missing page: {target}"
        assert page.locator("html").get_attribute("lang") == lang
        page.evaluate("async () => { for (let y = 0; y < document.body.scrollHeight; y += 700) {"
                      " window.scrollTo(0, y); await new Promise(r => setTimeout(r, 30)); } }")
        page.wait_for_load_state("networkidle")
        loaded = bytes_loaded(page)
        RESULTS["first_load"][path] = loaded
        violations = axe_violations(page)
        RESULTS["axe"][path] = sum(v["nodes"] for v in violations)
        if path in SCREENSHOTS:
            OUT.mkdir(parents=True, exist_ok=True)
            page.evaluate("() => window.scrollTo(0, 0)")
            page.screenshot(path=str(OUT / (path.replace("/", "_").replace(".html", ".png"))))
        assert not watch.outside, f"requests left the site: {watch.outside[:5]}"
        assert not watch.errors, "\n".join(watch.errors[:10])
        assert loaded <= FIRST_LOAD_BUDGET, f"first load {loaded / 1e6:.2f} MB > 3 MB"
        assert not violations, f"axe-core (WCAG 2.1 A/AA): {violations}"
    finally:
        context.close()


@pytest.mark.parametrize("locale, lang", [("en-US", "en"), ("ko-KR", "ko")])
def test_landing_page_opens_the_readers_edition(browser, site_url, locale, lang):
    context = browser.new_context(viewport=VIEWPORT, locale=locale)
    try:
        page = context.new_page()
        watch = Watch(page, site_url)
        page.goto(site_url)
        page.wait_for_url(f"**/{lang}/index.html")
        page.wait_for_load_state("networkidle")
        # The landing page sends the reader on at once: the redirect may abort the landing page's own load.
        redirected = [e for e in watch.errors
                      if e.startswith("failed: ") and e.split()[1].rstrip("/") == site_url.rstrip("/") and "ERR_ABORTED" in e]
        assert not [e for e in watch.errors if e not in redirected] and not watch.outside
    finally:
        context.close()


def test_korean_interface_is_korean(browser, site_url):
    context, page, watch = open_page(browser, site_url, "ko/03_scaling_sqrt_dk.html")
    try:
        chrome = page.evaluate("""() => {
          const parts = [];
          document.querySelectorAll('.bd-header-article, .bd-sidebar-primary, .bd-sidebar-secondary, footer, .prev-next-area')
            .forEach(e => parts.push(e.innerText));
          document.querySelectorAll('[aria-label], [title], [placeholder]').forEach(e => {
            if (!e.closest('article')) parts.push(e.getAttribute('aria-label') || '', e.getAttribute('title') || '',
                                                  e.getAttribute('placeholder') || '');
          });
          return parts.join('\\n');
        }""")
        english = [w for w in ("Search", "Contents", "Skip to main content", "Back to top", "Toggle primary sidebar",
                               "previous", "next", "On this page", "Light", "Dark", "Download") if w in chrome]
        assert not english, f"English interface text on a Korean page: {english}"
        assert "검색" in chrome and "English" in chrome
    finally:
        context.close()


@pytest.mark.parametrize("lang, word", [("en", "softmax"), ("ko", "어텐션"), ("ko", "소프트맥스")])
def test_search_finds_pages(browser, site_url, lang, word):
    context, page, watch = open_page(browser, site_url, f"{lang}/search.html?q={word}")
    try:
        page.wait_for_function("() => document.querySelectorAll('#search-results li').length > 0", timeout=30_000)
        assert page.locator("#search-results li").count() >= 3
        assert not watch.errors and not watch.outside
    finally:
        context.close()


def _explorer_state(page) -> dict:
    return page.evaluate("""() => {
      const ex = document.querySelector('.al-explorer').alExplorer;
      const img = document.querySelector('.al-explorer .al-picture img');
      return {state: ex.state, src: img.getAttribute('src'), readouts: document.querySelector('.al-explorer .al-readouts').innerText,
              frame: ex.m.frames[ex.state], complete: img.complete && img.naturalWidth > 0};
    }""")


def _wait_shown(page, state_before: int):
    page.wait_for_function("""(before) => {
      const ex = document.querySelector('.al-explorer').alExplorer;
      const img = document.querySelector('.al-explorer .al-picture img');
      return ex.state !== before && img.getAttribute('src').endsWith(ex.m.frames[ex.state]) && img.complete;
    }""", arg=state_before)


def _moves(page) -> list[tuple[int, str, list]]:
    """Per control: its index, kind and the positions to visit from the start (every option)."""
    return page.evaluate("""() => {
      const ex = document.querySelector('.al-explorer').alExplorer;
      return ex.m.controls.map((c, i) => [i, c.kind, ex.ui(ex.state, i).map(p => p[0])]);
    }""")


def move(page, control: int, kind: str, value: int, position: int) -> None:
    """Move one control the way a reader does: keys for a slider, a click, a choice in a list."""
    root = page.locator(".al-explorer").first
    element = root.locator(f"[data-control='{control}']")
    if kind == "slider":
        element.focus()
        now = int(element.input_value())
        key = "ArrowRight" if position > now else "ArrowLeft"
        for _ in range(abs(position - now)):
            page.keyboard.press(key)
    elif kind == "dropdown":
        element.select_option(str(value))
    elif kind == "checkbox":
        element.click()
    else:
        element.locator(f"button[data-value='{value}']").click()


def _ready_explorer(page):
    root = page.locator(".al-explorer").first
    root.scroll_into_view_if_needed()
    root.hover()
    page.wait_for_function("() => document.querySelector('.al-explorer').alExplorer.m !== undefined")


def _current(page, control: int) -> int:
    return page.evaluate("(c) => { const ex = document.querySelector('.al-explorer').alExplorer;"
                         " return ex.m.states[ex.state][c]; }", control)


def _sweep(page, control: int, kind: str) -> tuple[set, set, int]:
    """Move one control over every position it offers here; the pictures and readouts seen."""
    start = _explorer_state(page)
    frames, readouts, moved = {start["frame"]}, {start["readouts"]}, 0
    values = next(v for c, _, v in _moves(page) if c == control)
    for position, value in enumerate(values):
        if value == _current(page, control):
            continue
        before = _explorer_state(page)
        move(page, control, kind, value, position)
        _wait_shown(page, before["state"])
        after = _explorer_state(page)
        assert after["complete"], "the new picture did not load"
        frames.add(after["frame"])
        readouts.add(after["readouts"])
        moved += 1
    return frames, readouts, moved


@pytest.mark.parametrize("lang, stem", EXPLORER_PAGES)
def test_every_control_moves_the_picture(browser, site_url, lang, stem):
    """From the notebook's starting position, each control over every position it offers."""
    context, page, watch = open_page(browser, site_url, f"{lang}/{stem}.html")
    try:
        _ready_explorer(page)
        steps = 0
        for control, kind, _ in _moves(page):
            name = page.evaluate("(c) => document.querySelector('.al-explorer').alExplorer.m.controls[c].name", control)
            frames, readouts, moved = _sweep(page, control, kind)
            steps += moved
            assert len(frames) > 1, f"{name} ({kind}) never changed the picture"
            if len(readouts) == 1:  # e.g. the order of the tokens, without positions: equivariant by design
                for other, other_kind, other_values in _moves(page):  # so sweep it again one move away
                    if other == control or len(other_values) < 2:
                        continue
                    before = _explorer_state(page)
                    value = next(v for v in other_values if v != _current(page, other))
                    move(page, other, other_kind, value, other_values.index(value))
                    _wait_shown(page, before["state"])
                    readouts |= _sweep(page, control, kind)[1]
                    if len(readouts) > 1:
                        break
            assert len(readouts) > 1, f"{name} ({kind}) never changed the readouts"
            watch.reload(page)  # back to the notebook's position for the next control
            _ready_explorer(page)
        RESULTS["explorers"][f"{lang}/{stem}"] = {"moves": steps}
        assert not watch.errors, "\n".join(watch.errors[:10])
        assert not watch.outside, watch.outside[:5]
    finally:
        context.close()


def _kernel_picture(stem: str, lang: str, values: dict) -> np.ndarray:
    """The picture the notebook's explorer draws at these control values, in this process."""
    from helpers import i18n
    from helpers.explorers.registry import EXPLORER_CELLS, build_explorer

    cell_id = next(c for s, c in EXPLORER_CELLS if s == stem)
    folder = REPO / "notebooks" / ("ko" if lang == "ko" else "")
    i18n.set_language(lang)
    try:
        explorer = build_explorer(folder / f"{stem}.ipynb", cell_id)
        with explorer.held():
            for _ in range(3):  # a control may bound another: repeat until all are set
                for name, value in values.items():
                    try:
                        explorer.controls[name].value = value
                    except Exception:  # noqa: BLE001
                        pass
        return np.asarray(Image.open(io.BytesIO(explorer.image.value)).convert("RGB"))
    finally:
        i18n.set_language(None)


@pytest.mark.parametrize("lang, stem", [("en", "03_scaling_sqrt_dk"), ("en", "05_masking"), ("ko", "04_self_attention_qkv"),
                                        ("en", "11_tiny_vla")])
def test_site_picture_is_the_kernels(browser, site_url, lang, stem):
    """After a few moves, the picture the page shows is, pixel for pixel, the one the kernel draws."""
    context, page, watch = open_page(browser, site_url, f"{lang}/{stem}.html")
    try:
        _ready_explorer(page)
        rng = np.random.default_rng(len(stem))
        for _ in range(3):
            moves = _moves(page)
            control, kind, values = moves[int(rng.integers(len(moves)))]
            before = _explorer_state(page)
            choices = [(i, v) for i, v in enumerate(values) if v != _current(page, control)]
            position, value = choices[int(rng.integers(len(choices)))]
            move(page, control, kind, value, position)
            _wait_shown(page, before["state"])
        shown = page.evaluate("""async () => {
          const ex = document.querySelector('.al-explorer').alExplorer;
          const values = {};
          ex.m.controls.forEach((c, i) => { values[c.name] = c.values[ex.m.states[ex.state][i]]; });
          return {values, src: new URL(document.querySelector('.al-explorer .al-picture img').getAttribute('src'), location.href).href};
        }""")
        webp = page.request.get(shown["src"]).body()
        site = np.asarray(Image.open(io.BytesIO(webp)).convert("RGB"))
        kernel = _kernel_picture(stem, lang, shown["values"])
        assert site.shape == kernel.shape and np.array_equal(site, kernel), f"site and kernel differ at {shown['values']}"
    finally:
        context.close()


def display_frame_ms(page) -> float:
    """The page's display frame: the median interval between 60 requestAnimationFrame callbacks."""
    return page.evaluate("""() => new Promise(done => { const t = [];
      const tick = (now) => { t.push(now); if (t.length < 61) requestAnimationFrame(tick);
        else { const d = t.slice(1).map((x, i) => x - t[i]).sort((a, b) => a - b); done(d[30]); } };
      requestAnimationFrame(tick); })""")


def latency_result(samples: list[dict], frame_ms: float) -> dict:
    ms = [s["ms"] for s in samples]
    return {"median_ms": statistics.median(ms), "p90_ms": float(np.percentile(ms, 90)), "max_ms": max(ms),
            "changes": len(ms), "preloaded": sum(s["preloaded"] for s in samples), "frame_ms": frame_ms,
            "waited_median_ms": statistics.median(s["decoded_ms"] for s in samples),
            "load_average": [round(x, 2) for x in os.getloadavg()]}


def test_latency_one_display_frame(browser, site_url):
    """Notebook 03's d_k slider, one arrow key at a time: input event to the new picture painted."""
    context, page, watch = open_page(browser, site_url, "en/03_scaling_sqrt_dk.html")
    try:
        root = page.locator(".al-explorer").first
        root.scroll_into_view_if_needed()
        slider = root.locator("input[type=range][data-control='0']")
        slider.focus()
        page.wait_for_function("() => document.querySelector('.al-explorer').alExplorer.m !== undefined")
        page.keyboard.press("Home")
        page.wait_for_timeout(300)
        frame_ms = display_frame_ms(page)
        page.evaluate("() => { window.alLatency.length = 0; }")
        for step in range(40):
            page.wait_for_function("""() => { const ex = document.querySelector('.al-explorer').alExplorer;
              return [...ex.neighbours(ex.state)].every(n => ex.image(n).decoded); }""")
            page.keyboard.press("ArrowRight" if (step // 10) % 2 == 0 else "ArrowLeft")
            page.wait_for_timeout(60)
        page.wait_for_function("() => window.alLatency.length >= 40")
        samples = page.evaluate("() => window.alLatency.slice()")
        result = latency_result(samples, frame_ms)
        RESULTS["latency"]["focus first (as the pointer arriving), decoded ahead: 03's d_k slider, one step at a time (en)"] = result
        OUT.mkdir(parents=True, exist_ok=True)
        (OUT / "latency.json").write_text(json.dumps(result, indent=1))
        assert result["preloaded"] == len(samples), "a step's picture was not decoded ahead"
        frames = result["median_ms"] / frame_ms  # a ratio of two times measured in this page, this run
        assert frames <= LATENCY_FRAMES, f"median {frames:.2f} display frames ({frame_ms:.1f} ms each) > {LATENCY_FRAMES}"
        assert not watch.errors
    finally:
        context.close()


COLD_PAGES = ["00_start_here", "01_dot_product", "02_softmax", "03_scaling_sqrt_dk", "05_masking", "06_multi_head_attention",
              "07_transformer_block", "09_attention_at_scale", "10b_induction_heads"]  # each explorer with a slider of 7+ positions
COLD_PER_PAGE = 4  # cold changes at most per page (a fresh browser context each: nothing cached)
COLD_FRAMES = 6  # median of a change whose picture was not decoded ahead, in display frames measured in the page
# (issue 26's 100 ms target at 60 Hz); a ratio of two times measured in one run, never a wall-clock bound
COLD_CHANGES = 16  # 20 today; fewer measured means the walk below stopped finding pictures never fetched
SETTLED = """() => { const ex = document.querySelector('.al-explorer').alExplorer;
  return ex.m !== undefined && [ex.state, ...ex.neighbours(ex.state)].every(n => ex.image(n).decoded); }"""


def _cold_moves(page) -> list[dict]:
    """Home or End on a slider, more than two steps away, to a picture this page has not fetched nor decoded."""
    return page.evaluate("""() => {
      const ex = document.querySelector('.al-explorer').alExplorer;
      const out = [];
      ex.m.controls.forEach((c, i) => {
        if (c.kind !== 'slider') return;
        const ui = ex.ui(ex.state, i);
        const here = ui.findIndex(p => p[0] === ex.m.states[ex.state][i]);
        [['Home', 0], ['End', ui.length - 1]].forEach(([key, position]) => {
          if (Math.abs(position - here) <= 2) return;  // two steps or fewer: decoded ahead by design
          const t = ex.target(ex.state, i, ui[position][0]);
          const url = new URL('frames/' + ex.m.frames[t], ex.manifestUrl).href;
          if (t === ex.state || ex.cache.has(url) || performance.getEntriesByName(url).length) return;
          out.push({control: i, key: key, frame: ex.m.frames[t], url: url});
        });
      });
      return out;
    }""")


def test_latency_cold_change(browser, site_url):
    """No pointer first: the keyboard reaches a slider (its neighbours are decoded ahead, as on any focus), then
    Home or End jumps to a position never shown, so its picture is fetched and decoded after the input event.
    Over nine explorers, each page in a fresh context, a different slider than the last change where one is left."""
    samples: list[dict] = []
    frame_ms = None
    for stem in COLD_PAGES:
        context, page, watch = open_page(browser, site_url, f"en/{stem}.html")
        requested: set[str] = set()
        page.on("request", lambda r, seen=requested: seen.add(r.url))
        try:
            page.evaluate("() => performance.setResourceTimingBufferSize(100000)")
            root = page.locator(".al-explorer").first
            root.scroll_into_view_if_needed()
            if frame_ms is None:
                frame_ms = display_frame_ms(page)
            last = None
            for _ in range(COLD_PER_PAGE):
                if last is None:
                    root.locator("input[type=range]").first.focus()
                page.wait_for_function(SETTLED)
                page.wait_for_timeout(100)  # a reader's pause: nothing in flight
                moves = [m for m in _cold_moves(page) if m["url"] not in requested]
                if not moves:
                    break
                chosen = next((m for m in moves if m["control"] != last), moves[0])
                root.locator(f"input[type=range][data-control='{chosen['control']}']").focus()
                count = page.evaluate("() => window.alLatency.length")
                page.keyboard.press(chosen["key"])
                page.wait_for_function("(n) => window.alLatency.length > n", arg=count)
                sample = page.evaluate("""([n, url]) => { const e = performance.getEntriesByName(url)[0];
                  return {...window.alLatency[n], fetch_ms: e ? e.responseEnd - e.startTime : null}; }""",
                                       [count, chosen["url"]])
                assert sample["frame"] == chosen["frame"], f"{stem}: {chosen['key']} showed another picture"
                assert not sample["preloaded"], f"{stem}: {chosen['key']}'s picture was decoded ahead: not a cold change"
                samples.append({**sample, "page": stem, "key": chosen["key"]})
                last = chosen["control"]
            assert not watch.errors, "\n".join(watch.errors[:10])
            assert not watch.outside, watch.outside[:5]
        finally:
            context.close()
    result = latency_result(samples, frame_ms)
    fetched = [s["fetch_ms"] for s in samples if s["fetch_ms"] is not None]
    if fetched:
        result["fetch_median_ms"] = statistics.median(fetched)  # the picture's request to its last byte
    RESULTS["latency"][f"cold (no pointer first): Home/End on {len(COLD_PAGES)} explorers' sliders (en)"] = result
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "latency-cold.json").write_text(json.dumps({**result, "samples": samples}, indent=1))
    assert result["changes"] >= COLD_CHANGES, (f"only {result['changes']} cold changes measured (at least {COLD_CHANGES}): "
                                                  "the explorers' starting positions moved? add a page to COLD_PAGES")
    assert result["preloaded"] == 0
    frames = result["median_ms"] / frame_ms
    assert frames <= COLD_FRAMES, (f"cold change median {frames:.2f} display frames ({result['median_ms']:.1f} ms, "
                                   f"frames of {frame_ms:.1f} ms) > {COLD_FRAMES}")


@contextlib.contextmanager
def opened_at(browser, site_url: str, path: str, viewport: dict):
    """A page in a fresh context at ``viewport``, loaded; yields (page, watch)."""
    context = browser.new_context(viewport=viewport)
    context.set_default_timeout(30_000)
    page = context.new_page()
    watch = Watch(page, site_url)
    try:
        page.goto(site_url + path)
        page.wait_for_load_state("networkidle")
        yield page, watch
    finally:
        context.close()


def progress_counts_then_resets(page, site_url: str, lang: str, stem: str, kind: str, screenshot: str) -> None:
    """The contents page counts one of this chapter's Predicts (kind "predicts") or exercises checked right
    ("exercises"); the reset forgets it, and the browser keeps nothing."""
    count, template_of, total_of = {"predicts": (".al-progress-count", "data-of", "data-total"),
                                    "exercises": (".al-progress-exercises", "data-exercises-of", "data-exercises")}[kind]
    page.goto(f"{site_url}{lang}/index.html")
    page.wait_for_load_state("networkidle")
    item = page.locator(f".al-progress li[data-page='{lang}/{stem}']")
    template = page.locator(".al-progress").get_attribute(template_of).replace("{total}", item.get_attribute(total_of))
    assert item.locator(count).text_content() == template.replace("{done}", "1")
    item.scroll_into_view_if_needed()
    page.screenshot(path=str(OUT / screenshot))
    page.locator(".al-progress .al-reset").click()
    assert item.locator(count).text_content() == template.replace("{done}", "0")
    assert page.evaluate("() => localStorage.getItem('attention-lab-progress-v1')") is None, "the reset kept it"


PREDICT_PAGES = [("en", "02_softmax"), ("ko", "05_masking")]
PHONE = {"width": 390, "height": 844}


@pytest.mark.parametrize("lang, stem", PREDICT_PAGES)
def test_predict_then_see_by_keyboard_and_progress(browser, site_url, lang, stem):
    """A Predict's output waits for a guess: typed and committed with the keyboard alone, it shows with
    the guess above it; a reload remembers it; the contents page counts it; the reset forgets it."""
    OUT.mkdir(parents=True, exist_ok=True)
    for width, viewport in (("desktop", VIEWPORT), ("phone", PHONE)):
        with opened_at(browser, site_url, f"{lang}/{stem}.html", viewport) as (page, watch):
            form = page.locator("form.al-predict").first
            number = form.get_attribute("data-number")
            outputs = page.locator(f".tag_al-answer-{number} .cell_output")
            assert outputs.count() >= 1 and not outputs.first.is_visible(), "the answer shows before a guess"
            explanation = page.locator(f".al-explanation.al-answer-{number}")  # the verdict's text, if folded
            assert explanation.count() == 0 or not explanation.first.is_visible(), "the explanation shows before a guess"
            assert page.locator(f".tag_al-answer-{number} .al-hidden-note").first.is_visible()
            form.scroll_into_view_if_needed()
            page.screenshot(path=str(OUT / f"predict-{lang}-{stem}-{width}-before.png"))
            form.locator("textarea").focus()
            page.keyboard.press("Tab")  # to the commit button, with nothing written
            page.keyboard.press("Enter")
            assert not outputs.first.is_visible(), "an empty guess revealed the answer"
            form.locator("textarea").focus()
            page.keyboard.type("the largest weight goes to the largest score")
            page.keyboard.press("Tab")
            page.keyboard.press("Enter")
            outputs.first.wait_for(state="visible")
            assert explanation.count() == 0 or explanation.first.is_visible(), "the explanation stayed hidden"
            guess = page.locator(f".tag_al-answer-{number} .al-your-guess").first
            assert "the largest weight goes to the largest score" in guess.text_content()
            later = page.locator("form.al-predict").nth(1)
            if later.count():
                hidden = page.locator(f".tag_al-answer-{later.get_attribute('data-number')} .cell_output").first
                assert not hidden.is_visible(), "committing one Predict revealed another"
            page.screenshot(path=str(OUT / f"predict-{lang}-{stem}-{width}-after.png"))
            watch.reload(page)
            assert outputs.first.is_visible(), "a reload forgot the committed guess"
            progress_counts_then_resets(page, site_url, lang, stem, "predicts", f"progress-{lang}-{width}.png")
            assert not watch.errors and not watch.outside


def test_every_internal_link_and_anchor_resolves_and_external_links_come_from_one_setting():
    """Every href and src in every page: a file of the site, with its #anchor present there; a link
    to the course's own repository or to Colab is built from the one repository setting (site.json);
    other links off the site are the notebooks' references (papers, other courses)."""
    from html.parser import HTMLParser

    class Links(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.links: list[str] = []
            self.ids: set[str] = set()

        def handle_starttag(self, tag, attrs) -> None:
            attrs = dict(attrs)
            self.ids |= {attrs[k] for k in ("id", "name") if attrs.get(k)}
            for key in ("href", "src"):
                if attrs.get(key) and not (tag == "link" and attrs.get("rel") in ("preload", "prefetch")):
                    self.links.append(attrs[key])

    if not SITE.exists():
        pytest.fail("build/site/ is missing: run `make site` first (`make test-site` does)")
    repository = json.loads((SITE / "site.json").read_text())["repository"]
    allowed = []
    if repository:
        owner_name = repository.removeprefix("https://github.com/")
        allowed += [repository, f"https://colab.research.google.com/github/{owner_name}/"]

    def ours(link: str) -> bool:  # a link to where the course itself lives
        return "colab.research.google.com" in link or "attention-lab" in link or ".github.io" in link
    parsed: dict[Path, Links] = {}

    def parse(path: Path) -> Links:
        if path not in parsed:
            parsed[path] = Links()
            parsed[path].feed(path.read_text(encoding="utf-8"))
        return parsed[path]

    broken, outside = [], []
    pages = [p for p in SITE.rglob("*.html") if "/_static/" not in p.as_posix()]
    for path in pages:
        for link in parse(path).links:
            if link.startswith(("mailto:", "data:", "javascript:")):
                continue
            if link.startswith(("http://", "https://", "//")):
                if ours(link) and not any(link.startswith(a) for a in allowed):
                    outside.append(f"{path.relative_to(SITE)}: {link}")
                continue
            target, _, anchor = link.partition("#")
            target = target.split("?")[0]
            file = (path.parent / target).resolve() if target else path
            if file.is_dir():
                file = file / "index.html"
            if not file.exists():
                broken.append(f"{path.relative_to(SITE)}: {link} (no such file)")
            elif anchor and file.suffix == ".html" and anchor not in parse(file).ids:
                broken.append(f"{path.relative_to(SITE)}: {link} (no #{anchor} there)")
    assert not broken, f"{len(broken)} broken links, e.g.\n" + "\n".join(broken[:20])
    assert not outside, f"{len(outside)} links to the course's repository not built from SITE_REPOSITORY:\n" + "\n".join(outside[:20])


CHECK_PAGES = [("en", "01_dot_product", "01.2"), ("ko", "04_self_attention_qkv", "04.1")]


@pytest.mark.parametrize("lang, stem, exercise_id", CHECK_PAGES)
def test_exercise_checked_on_the_page_by_keyboard_and_progress(browser, site_url, lang, stem, exercise_id):
    """An exercise whose answer is a value: a wrong answer typed and checked with the keyboard alone gets
    the Python checker's hint, the right one its "Correct!", both in the page's language; axe finds nothing
    with the replies shown; the contents page counts the exercise; the reset forgets it."""
    from helpers import i18n
    from helpers.checks import evaluate
    from website import checks

    rights, wrongs = checks.catalogues()[exercise_id]
    i18n.set_language(lang)
    try:
        wrong = next(w for w in wrongs if checks.typed(w) and checks.numbers_of(checks.typed(w)) is not None)
        expected = {"wrong": evaluate(exercise_id, wrong), "right": evaluate(exercise_id, rights[0])}
    finally:
        i18n.set_language(None)
    answers = {"wrong": checks.typed(wrong), "right": checks.typed(rights[0])}
    OUT.mkdir(parents=True, exist_ok=True)
    for width, viewport in (("desktop", VIEWPORT), ("phone", PHONE)):
        with opened_at(browser, site_url, f"{lang}/{stem}.html", viewport) as (page, watch):
            form = page.locator(f'form.al-check[data-exercise="{exercise_id}"]')
            reply = form.locator(".al-check-reply")
            form.scroll_into_view_if_needed()
            for outcome in ("wrong", "right"):
                form.locator("input").focus()
                page.keyboard.press("Control+A")
                page.keyboard.type(answers[outcome])
                if outcome == "wrong":
                    page.keyboard.press("Enter")  # submits from the field
                else:
                    page.keyboard.press("Tab")  # to the Check button
                    page.keyboard.press("Enter")
                correct, message = expected[outcome]
                mark = "✅ " if correct else "❌ "
                page.wait_for_function("([el, text]) => el.textContent === text", arg=[reply.element_handle(), mark + message])
                assert correct == (outcome == "right")
                assert reply.is_visible()
                form.scroll_into_view_if_needed()
                page.screenshot(path=str(OUT / f"check-{lang}-{exercise_id}-{width}-{outcome}.png"))
                if width == "desktop":
                    violations = axe_violations(page)
                    assert not violations, f"axe-core (WCAG 2.1 A/AA) with the {outcome} reply shown: {violations}"
            progress_counts_then_resets(page, site_url, lang, stem, "exercises", f"progress-exercises-{lang}-{width}.png")
            assert not watch.errors and not watch.outside
