"""Drive a notebook in JupyterLab the way a learner does: open, wait for the kernel, run all,
then move every control of every live explorer from the keyboard.

Text is read with textContent, not innerText: JupyterLab's default windowing skips the
rendering of cells off screen (CSS content-visibility), and their innerText is empty.
"""

from __future__ import annotations

import re
import time
import urllib.error
from dataclasses import dataclass

from playwright.sync_api import Locator, Page

from e2e.jupyter_server import JupyterLab

KERNEL_STATUS = "#jp-main-statusbar span.jp-StatusBar-TextItem[title^='Change kernel']"
# Jupyter Notebook 7 has no status bar: its toolbar's execution indicator says "Kernel status: Idle".
NOTEBOOK7_STATUS = ".jp-Notebook-ExecutionIndicator-tooltip"
# A displayed widget (JupyterLab sets no data-mime-type on widget outputs).
WIDGET_OUTPUT = ".jp-Notebook .jp-OutputArea-output:has(> .jupyter-widgets)"

# Controls a learner moves, in the DOM ipywidgets 8 renders (one CSS selector per kind).
CONTROL_KINDS = {
    "slider": ".widget-slider",
    "checkbox": ".widget-checkbox",
    "toggle": "button.widget-toggle-button:not(.widget-toggle-buttons button)",
    "toggle-buttons": ".widget-toggle-buttons",
    "dropdown": ".widget-dropdown",
    "radio": ".widget-radio-box",
}

# An explorer's picture: a FrameView's canvas (helpers/frame_view.js), or an ipywidgets Image.
PICTURE = "canvas.al-frame, img.widget-image"

# SHA-256 of every picture under an element (a canvas's painted pixels, an image's PNG), and the
# readouts' text.
SNAPSHOT_JS = """
async (root) => {
  const PICTURE = '""" + PICTURE + """';
  const hex = (buf) => Array.from(new Uint8Array(buf), b => b.toString(16).padStart(2, '0')).join('');
  const pictures = [];
  for (const img of root.querySelectorAll(PICTURE)) {
    let digest = '', bytes = null;
    if (img.tagName === 'CANVAS') {  // a FrameView: the pixels it painted
      if (img.width) bytes = img.getContext('2d').getImageData(0, 0, img.width, img.height).data;
    } else if (img.src) {
      bytes = await (await fetch(img.src)).arrayBuffer();
    }
    if (bytes) digest = hex(await crypto.subtle.digest('SHA-256', bytes));
    const complete = img.tagName === 'CANVAS' ? img.width > 0 : img.complete;
    pictures.push({src: img.src || img.dataset.paint, digest, complete, width: img.naturalWidth || img.width});
  }
  const readouts = Array.from(root.querySelectorAll('.widget-html, .al-readouts'), el => el.textContent.trim()).join('\\n');
  return {pictures, readouts};
}
"""


def in_notebook7(page: Page) -> bool:
    """True on a Jupyter Notebook 7 page (``/notebooks/...``), False in JupyterLab (``/lab/...``)."""
    return "/notebooks/" in page.url


def kernel_status(page: Page) -> str:
    """The kernel's state as JupyterLab's status bar words it, e.g. 'Python 3 (ipykernel) | Idle'
    (in Notebook 7, read from the toolbar's execution indicator)."""
    if in_notebook7(page):
        text = page.locator(NOTEBOOK7_STATUS).first.text_content(timeout=60_000) or ""
        state = text.split("Kernel status:")[-1].split("Executed")[0].strip()
        return f"Notebook 7 | {state}"
    return page.locator(KERNEL_STATUS).inner_text(timeout=60_000)


def wait_kernel_idle(page: Page, timeout: float = 120.0, settle: float = 0.5) -> None:
    """Wait until the status bar (not the toolbar, which says idle before a kernel exists)
    shows a kernel that is Idle, and stays Idle for ``settle`` seconds."""
    deadline = time.monotonic() + timeout
    idle_since = None
    status = ""
    while time.monotonic() < deadline:
        status = kernel_status(page)
        if status.endswith("| Idle") and not status.startswith("No Kernel"):
            idle_since = idle_since or time.monotonic()
            if time.monotonic() - idle_since >= settle:
                return
        else:
            idle_since = None
        time.sleep(0.05)
    raise TimeoutError(f"kernel not idle after {timeout:.0f} s; status bar says {status!r}")


def kernels_running(lab: JupyterLab) -> bool:
    """True if the server lists a kernel. A listing that fails (HTTP 500, seen while another
    page's kernel was being shut down) counts as none yet: the caller asks again."""
    try:
        return bool(lab.api("GET", "/api/kernels"))
    except urllib.error.HTTPError:
        return False


def open_notebook(page: Page, lab: JupyterLab, path: str) -> Locator:
    """Open ``path`` (relative to the served folder) in a fresh workspace; wait for an idle kernel."""
    if lab.app == "notebook":  # Jupyter Notebook 7: one notebook per page, no file browser
        page.goto(lab.url(f"/notebooks/{path}"))
    else:
        workspace = "e2e-" + re.sub(r"[^A-Za-z0-9]+", "-", path)
        page.goto(lab.url(f"/lab/workspaces/{workspace}/tree/{path}", reset=""))
    notebook = page.locator(".jp-NotebookPanel .jp-Notebook").first
    notebook.wait_for(state="visible", timeout=90_000)
    if lab.app == "jupyterlab":
        page.keyboard.press("Control+b")  # hide the file browser: more room for the notebook
    else:  # Notebook 7 says Idle before its kernel exists: wait for the kernel and the cells
        deadline = time.monotonic() + 90
        while not (kernels_running(lab) and code_prompts(page)):
            if time.monotonic() > deadline:
                raise TimeoutError("Notebook 7 started no kernel within 90 s")
            time.sleep(0.25)
    wait_kernel_idle(page)
    return notebook


def menu(page: Page, top: str, item: str) -> None:
    """Click ``top`` in the menu bar, then ``item`` (its label, up to any trailing "…"). JupyterLab
    and Notebook 7 share the menus."""
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(f"^{re.escape(top)}$")).first.click()
    label = re.compile(f"^{re.escape(item)}…?$")
    page.locator(".lm-Menu-content .lm-Menu-itemLabel", has_text=label).click()


def open_from_path(page: Page, path: str) -> Locator:
    """In a JupyterLab page already loaded, File > Open from Path… (no reload of the app, no
    wait for the kernel): the notebook opens in a new tab, which becomes the current one."""
    menu(page, "File", "Open from Path")
    page.locator(".jp-Dialog input").fill(path)
    page.keyboard.press("Enter")
    notebook = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook").first
    notebook.wait_for(state="visible", timeout=90_000)
    return notebook


def close_tab(page: Page) -> None:
    """Close the current notebook tab (Alt+W), as a learner would; its kernel keeps running."""
    page.keyboard.press("Alt+w")
    page.locator(".jp-NotebookPanel").first.wait_for(state="detached")


def code_prompts(page: Page) -> list[str]:
    return [text.strip() for text in page.locator(".jp-Notebook .jp-CodeCell .jp-InputPrompt").all_text_contents()]


def run_all(page: Page, timeout: float = 180.0) -> float:
    """Run > Run All Cells from the menu bar; wait until no cell is queued or running and the
    kernel is idle. Returns the seconds it took. (After an error the cells below it stay
    unrun: :func:`unrun_cells` tells.)"""
    start = time.monotonic()
    menu(page, "Run", "Run All Cells")
    deadline = start + timeout
    while time.monotonic() < deadline:
        if "[*]:" not in code_prompts(page):
            wait_kernel_idle(page, timeout=max(deadline - time.monotonic(), 1.0))
            if "[*]:" not in code_prompts(page):
                return time.monotonic() - start
        time.sleep(0.1)
    raise TimeoutError(f"Run All did not finish in {timeout:.0f} s; prompts: {code_prompts(page)}")


def unrun_cells(page: Page) -> list[int]:
    """Numbers (1-based, code cells only) of the code cells that show no execution count."""
    return [i for i, p in enumerate(code_prompts(page), start=1) if not re.fullmatch(r"\[\d+\]:", p)]


# An error output or a warning in a stderr output (a progress bar on stderr is fine).
ERROR_OR_WARNING = re.compile(r"Traceback \(most recent call last\)|\b\w*(Error|Exception|Warning)\b")


def problems(page: Page) -> list[str]:
    """Error outputs, warnings and widgets that failed to display, as text. (JupyterLab
    renders an error output and a stderr stream alike, as application/vnd.jupyter.stderr.)"""
    found = []
    for output in page.locator(".jp-Notebook .jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']").all():
        text = output.text_content() or ""
        if ERROR_OR_WARNING.search(text):
            found.append("error or warning output:\n" + text[-1500:])
    for output in page.locator(".jp-Notebook .jp-OutputArea-output").all():
        text = output.text_content() or ""
        if "Error displaying widget" in text:
            found.append("a widget failed to display: " + text[:300])
        elif "Loading widget" in text:
            found.append("a widget is stuck at 'Loading widget...'")
    return found


@dataclass
class Control:
    kind: str
    label: str
    locator: Locator

    def __str__(self) -> str:
        return f"{self.kind} {self.label!r}"


def explorers(page: Page) -> list[Locator]:
    """Every displayed widget output that holds a picture (a FrameView or an ipywidgets Image)."""
    return [view for view in page.locator(WIDGET_OUTPUT).all() if view.locator(PICTURE).count()]


def controls(explorer: Locator) -> list[Control]:
    found = []
    for kind, selector in CONTROL_KINDS.items():
        for element in explorer.locator(selector).all():
            label = element.locator(".widget-label-basic" if kind == "checkbox" else ".widget-label").first
            text = (label.text_content() or "").strip() if label.count() else ""
            if kind == "toggle":
                text = text or (element.text_content() or "").strip()
            found.append(Control(kind, text, element))
    return found


def snapshot(explorer: Locator) -> dict:
    return explorer.evaluate(SNAPSHOT_JS)


def slider_value(control: Control) -> tuple[float, float, float]:
    """(value, min, max) of a slider's first handle, from its ARIA attributes."""
    handle = control.locator.locator(".noUi-handle").first
    return tuple(float(handle.get_attribute(name)) for name in ("aria-valuenow", "aria-valuemin", "aria-valuemax"))


def step_slider(control: Control, direction: int | None = None) -> str:
    """Focus the slider's handle and press one arrow key (towards the far end if not given)."""
    handle = control.locator.locator(".noUi-handle").first
    if direction is None:
        value, low, high = slider_value(control)
        direction = 1 if value < high else -1
    handle.focus()
    key = "ArrowRight" if direction > 0 else "ArrowLeft"
    handle.press(key)
    return key


def type_slider_value(control: Control, text: str) -> str:
    """Type a value into a slider's readout box and press Enter, as a learner can. (Notebook 7
    keeps the keyboard focus on the active cell, so arrow keys never reach a slider's handle.)"""
    readout = control.locator.locator(".widget-readout").first
    readout.click()
    page = control.locator.page
    page.keyboard.press("Control+a")
    page.keyboard.type(text)
    page.keyboard.press("Enter")
    return f"typed {text}"


def change(control: Control) -> str:
    """Change one control from the keyboard, as a learner would; returns what was done."""
    element = control.locator
    if control.kind == "slider":
        return step_slider(control)
    if control.kind == "checkbox":
        box = element.locator("input[type=checkbox]")
        box.focus()
        box.press("Space")
        return "Space"
    if control.kind == "toggle":
        element.focus()
        element.press("Space")
        return "Space"
    if control.kind == "toggle-buttons":
        button = element.locator("button:not(.mod-active)").first
        name = (button.text_content() or "").strip()  # before: the locator is re-evaluated lazily
        button.focus()
        button.press("Space")
        return f"Space on {name!r}"
    if control.kind == "radio":
        radio = element.locator("input[type=radio]:not(:checked)").first
        radio.focus()
        radio.press("Space")
        return "Space on a radio button"
    if control.kind == "dropdown":
        select = element.locator("select")
        options = select.locator("option").all_text_contents()
        current = select.evaluate("s => s.selectedIndex")
        target = current + 1 if current + 1 < len(options) else current - 1
        select.focus()
        select.select_option(index=target)
        return f"select {options[target]!r}"
    raise ValueError(f"no way to change a {control.kind}")


def wait_for_new_picture(explorer: Locator, before: dict, timeout: float = 15.0) -> dict:
    """Wait until every picture in the explorer has loaded and one shows different bytes."""
    deadline = time.monotonic() + timeout
    now = before
    old = [p["digest"] for p in before["pictures"]]
    while time.monotonic() < deadline:
        now = snapshot(explorer)
        loaded = all(p["complete"] and p["width"] > 0 for p in now["pictures"])
        if loaded and [p["digest"] for p in now["pictures"]] != old:
            return now
        time.sleep(0.05)
    return now


def wait_for_new_readouts(explorer: Locator, before: dict, timeout: float = 5.0) -> dict:
    deadline = time.monotonic() + timeout
    now = snapshot(explorer)
    while now["readouts"] == before["readouts"] and time.monotonic() < deadline:
        time.sleep(0.05)
        now = snapshot(explorer)
    return now


# Per cell of the open notebook, in order: is it a code cell, does an output show, is a folded
# output's "…" bar (JupyterLab's placeholder for hidden outputs) showing, and the outputs' text.
# checkVisibility() is false under display:none; cells that content-visibility skips off
# screen still count as shown (the learner sees them on scrolling).
CELL_STATES_JS = """
() => Array.from(document.querySelectorAll('.jp-Notebook .jp-Cell'), (cell) => {
  const outputs = Array.from(cell.querySelectorAll('.jp-OutputArea-output'));
  const shown = (el) => el.checkVisibility({visibilityProperty: true, opacityProperty: true});
  return {
    code: cell.classList.contains('jp-CodeCell'),
    output_shown: outputs.some(shown),
    folded: Array.from(cell.querySelectorAll('.jp-OutputPlaceholder')).some(shown),
    text: outputs.filter(shown).map((o) => o.textContent).join('\\n'),
    pictures: outputs.filter(shown).reduce((n, o) => n + o.querySelectorAll('img').length, 0),
    text_shown: Array.from(cell.querySelectorAll('.jp-MarkdownOutput')).some(shown),
    text_folded: Array.from(cell.querySelectorAll('.jp-InputPlaceholder')).some(shown),
  };
})
"""


def cells(page: Page) -> Locator:
    """Every cell of the open notebook, in order (markdown and code)."""
    return page.locator(".jp-Notebook .jp-Cell")


def wait_cells(page: Page, count: int, timeout: float = 60.0) -> None:
    """Wait until the first ``count`` cells of the notebook are in the page (JupyterLab attaches
    a long notebook's cells in batches, when the browser is idle, after it opens) and their
    stored outputs are rendered."""
    deadline = time.monotonic() + timeout
    while cells(page).count() < count:
        if time.monotonic() > deadline:
            raise TimeoutError(f"{cells(page).count()} of {count} cells in the page after {timeout:.0f} s")
        time.sleep(0.1)
    page.wait_for_timeout(300)  # the last batch's outputs


def cell_states(page: Page) -> list[dict]:
    """:data:`CELL_STATES_JS` for the open notebook: one dict per cell, in order."""
    return page.evaluate(CELL_STATES_JS)
