"""Fixtures for the browser tests: one JupyterLab and one headless Chromium per run.

JupyterLab serves a throw-away copy of notebooks/ from this project's environment; Chromium
is Debian's, driven by Playwright (``make e2e`` installs both when missing). Everything
started here is stopped by PID when the run ends, passed or failed.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import tempfile
from pathlib import Path

import psutil
import pytest

from e2e.jupyter_server import REPO, JupyterLab, copy_notebooks

CHROMIUM = os.environ.get("E2E_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
OUT = Path(os.environ.get("E2E_OUT", REPO / "build" / "e2e"))
VIEWPORT = {"width": 1400, "height": 1000}

# What the latency test measured, printed at the end of the run and saved as JSON.
RESULTS: dict[str, dict] = {}


def pytest_configure(config):
    """A SIGTERM (CI timeout, `kill`) ends the run like Ctrl+C, so every fixture below still
    stops what it started."""

    def interrupt(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, interrupt)


@pytest.fixture(scope="session")
def out_dir() -> Path:
    OUT.mkdir(parents=True, exist_ok=True)
    return OUT


@pytest.fixture(scope="session")
def lab_root():
    """A throw-away copy of notebooks/ (JupyterLab autosaves outputs into what it opens)."""
    folder = Path(tempfile.mkdtemp(prefix="attention-lab-e2e-"))
    try:
        yield copy_notebooks(folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def lab(lab_root):
    """JupyterLab from this environment on 127.0.0.1, a free port, a random token."""
    server = JupyterLab(lab_root)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def browser():
    """Headless Chromium (Debian's), with a fresh temporary profile (Playwright's default)."""
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: run `make e2e` (it installs Debian's chromium)")
    from playwright.sync_api import sync_playwright

    before = {child.pid for child in psutil.Process().children(recursive=True)}
    playwright = sync_playwright().start()
    try:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            yield chromium
        finally:
            chromium.close()
    finally:
        playwright.stop()
        # Anything Playwright started that is still alive (driver, browser): stop it by PID.
        started = [c for c in psutil.Process().children(recursive=True) if c.pid not in before]
        for child in started:
            try:
                child.terminate()
            except psutil.NoSuchProcess:
                pass
        psutil.wait_procs(started, timeout=10)


def fresh_page(browser, server):
    """A fresh browser context and page; the server's kernels are shut down afterwards."""
    context = browser.new_context(viewport=VIEWPORT)
    context.set_default_timeout(30_000)
    try:
        yield context.new_page()
    finally:
        context.close()
        server.shutdown_kernels()


@pytest.fixture
def page(browser, lab):
    """A fresh page in JupyterLab's browser; kernels are shut down after each test."""
    yield from fresh_page(browser, lab)


@pytest.fixture(scope="module")
def notebook7(lab_root):
    """Jupyter Notebook 7 (the `notebook` package) serving the same copy, for one test module."""
    server = JupyterLab(lab_root, app="notebook")
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def nb7_page(browser, notebook7):
    """A fresh page for Notebook 7; its kernels are shut down after each test."""
    yield from fresh_page(browser, notebook7)


def pytest_terminal_summary(terminalreporter):
    if not RESULTS:
        return
    terminalreporter.section("slider-to-picture latency (in JupyterLab, headless Chromium)")
    for name, result in RESULTS.items():
        for line in result["lines"]:
            terminalreporter.write_line(f"{name}: {line}")
    OUT.mkdir(parents=True, exist_ok=True)
    summary = {name: {k: v for k, v in r.items() if k != "lines"} for name, r in RESULTS.items()}
    (OUT / "latency.json").write_text(json.dumps(summary, indent=2))


SITE_OUT = REPO / "build" / "site-e2e"


def pytest_sessionstart(session):
    """The controller starts the workers' site results afresh (results-main.json, a run without
    workers such as the latency test's, is kept to be merged)."""
    if not hasattr(session.config, "workerinput"):
        for old in SITE_OUT.glob("results-gw*.json"):
            old.unlink()


def pytest_sessionfinish(session):
    """With several workers, the site test's measurements are merged into build/site-e2e/results.json
    and printed here (each worker saved its own results-gwN.json)."""
    if hasattr(session.config, "workerinput"):
        return
    parts = sorted(SITE_OUT.glob("results-*.json"))
    if not parts:
        return
    merged: dict[str, dict] = {}
    for part in parts:
        for key, values in json.loads(part.read_text(encoding="utf-8")).items():
            merged.setdefault(key, {}).update(values)
    (SITE_OUT / "results.json").write_text(json.dumps(merged, indent=1, ensure_ascii=False), encoding="utf-8")
    if any(p.name.startswith("results-gw") for p in parts):
        from e2e.test_site import summary

        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line("")
            for line in summary(merged):
                reporter.write_line(line)
