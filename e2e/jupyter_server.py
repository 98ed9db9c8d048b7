"""Start JupyterLab from this environment on a throw-away folder, and stop all of it by PID.

Used by the browser tests (``e2e/conftest.py``), and runnable by hand to look around::

    .venv/bin/python -m e2e.jupyter_server     # prints the URL, Ctrl+C stops it
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = REPO / "notebooks"
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
# The Korean edition shares its code with the English one: the browser tests open its 03.
KOREAN_IN_BROWSER = ["ko/03_scaling_sqrt_dk.ipynb"]


def free_port() -> int:
    """A TCP port nothing listens on right now (the OS picks it)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def has_widget(notebook: Path) -> bool:
    """True if a stored output of the notebook holds a live widget view."""
    cells = json.loads(notebook.read_text(encoding="utf-8")).get("cells", [])
    return any(
        WIDGET_MIME in output.get("data", {})
        for cell in cells
        for output in cell.get("outputs", [])
    )


def widget_notebooks(root: Path = NOTEBOOKS) -> list[Path]:
    """Every notebook (chapters and solutions, both editions) with a widget output, relative
    to ``root``."""
    found = sorted(root.glob("*.ipynb")) + sorted(root.glob("solutions/*.ipynb"))
    found += [root / name for name in KOREAN_IN_BROWSER if (root / name).exists()]
    return [path.relative_to(root) for path in found if has_widget(path)]


def copy_notebooks(destination: Path) -> Path:
    """Copy notebooks/ (and everything the notebooks read relative to themselves) into
    ``destination``; JupyterLab autosaves outputs into the files it opens, so it only ever
    sees the copy."""
    ignore = shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__")
    shutil.copytree(NOTEBOOKS, destination, ignore=ignore, dirs_exist_ok=True)
    return destination


def _die_with_parent() -> None:
    """In the child, before exec: ask Linux to SIGTERM it if the test process dies, so even a
    killed test run leaves no server behind (the server then stops its kernels)."""
    if sys.platform.startswith("linux"):
        import ctypes

        PR_SET_PDEATHSIG = 1
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


class JupyterLab:
    """A JupyterLab (or, with ``app="notebook"``, a Jupyter Notebook 7) server on 127.0.0.1,
    a random free port and a random token.

    All of its state (config, runtime files, workspaces, user settings) lives in a temporary
    folder; :meth:`stop` stops the server and every process it started (kernels), by PID.
    """

    def __init__(self, root: Path, *, python: str = sys.executable, startup_timeout: float = 90.0,
                 config: Path | None = None, app: str = "jupyterlab") -> None:
        if app not in ("jupyterlab", "notebook"):
            raise ValueError(f"app must be 'jupyterlab' or 'notebook', got {app!r}")
        self.app = app
        self.root = Path(root)
        self.config = config  # an extra jupyter_server_config.py to try a setting; None: stock
        self.python = python
        self.startup_timeout = startup_timeout
        self.port = free_port()
        self.token = secrets.token_hex(24)
        self.state = Path(tempfile.mkdtemp(prefix="attention-lab-e2e-state-"))
        self.process: subprocess.Popen | None = None
        self.log_path = self.state / "jupyterlab.log"
        self._known_children: dict[int, psutil.Process] = {}

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def url(self, path: str, **query: str) -> str:
        """``/lab/...`` URL with the token (and any extra query flags, e.g. ``reset=""``)."""
        params = "&".join([f"{key}={value}" if value else key for key, value in query.items()] + [f"token={self.token}"])
        return f"{self.base_url}{path}?{params}"

    def _write_settings(self) -> Path:
        """User settings for a quiet, deterministic lab: no news or update check pop-ups."""
        settings = self.state / "user-settings"
        notification = settings / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
        notification.parent.mkdir(parents=True)
        notification.write_text(json.dumps({"fetchNews": "false", "checkForUpdates": False}))
        if self.config is not None:
            (self.state / "config").mkdir(exist_ok=True)
            shutil.copy(self.config, self.state / "config" / "jupyter_server_config.py")
        return settings

    def start(self) -> JupyterLab:
        env = dict(os.environ)
        env.update(
            JUPYTER_CONFIG_DIR=str(self.state / "config"),
            JUPYTER_RUNTIME_DIR=str(self.state / "runtime"),
            MPLBACKEND="module://matplotlib_inline.backend_inline",
            PYTHONUNBUFFERED="1",
        )
        settings_app = "LabApp" if self.app == "jupyterlab" else "JupyterNotebookApp"
        command = [
            self.python, "-m", self.app,
            "--no-browser",
            "--ip=127.0.0.1",
            f"--port={self.port}",
            "--port-retries=0",
            f"--IdentityProvider.token={self.token}",
            f"--ServerApp.root_dir={self.root}",
            "--ServerApp.open_browser=False",
            f"--{settings_app}.user_settings_dir={self._write_settings()}",
            f"--{settings_app}.workspaces_dir={self.state / 'workspaces'}",
        ]
        if hasattr(os, "geteuid") and os.geteuid() == 0:  # CI containers run as root
            command.append("--allow-root")
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(
                command, cwd=self.root, env=env, stdout=log, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL, start_new_session=True, preexec_fn=_die_with_parent,
            )
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                self.stop()
                raise RuntimeError(f"JupyterLab exited with {self.process.returncode}:\n{self.log_tail()}")
            try:
                self.api("GET", "/api/status")
                return self
            except (urllib.error.URLError, ConnectionError, OSError):
                time.sleep(0.25)
        self.stop()
        raise TimeoutError(f"JupyterLab did not answer within {self.startup_timeout:.0f} s:\n{self.log_tail()}")

    def api(self, method: str, path: str, timeout: float = 10.0):
        """Call the server's REST API with the token; returns the decoded JSON (or None)."""
        request = urllib.request.Request(
            f"{self.base_url}{path}", method=method, headers={"Authorization": f"token {self.token}"}
        )
        with urllib.request.urlopen(request, timeout=timeout) as response:
            body = response.read()
        return json.loads(body) if body else None

    def shutdown_kernels(self) -> None:
        """Shut down every running kernel (between notebooks, to free the CPU)."""
        self._remember_children()
        for kernel in self.api("GET", "/api/kernels"):
            try:
                self.api("DELETE", f"/api/kernels/{kernel['id']}", timeout=30)
            except urllib.error.HTTPError:
                pass

    def _remember_children(self) -> None:
        if self.process is None:
            return
        try:
            for child in psutil.Process(self.process.pid).children(recursive=True):
                self._known_children[child.pid] = child
        except psutil.NoSuchProcess:
            pass

    def log_tail(self, chars: int = 4000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except OSError:
            return ""

    def stop(self) -> None:
        """Stop the server, then any process it started that is still alive (kernels), by PID."""
        if self.process is not None:
            self._remember_children()
            if self.process.poll() is None:
                self.process.send_signal(signal.SIGTERM)
                try:
                    self.process.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    self.process.kill()
                    self.process.wait(timeout=10)
            leftovers = [child for child in self._known_children.values() if child.is_running()]
            for child in leftovers:
                try:
                    child.terminate()
                except psutil.NoSuchProcess:
                    pass
            _, alive = psutil.wait_procs(leftovers, timeout=10)
            for child in alive:
                try:
                    child.kill()
                except psutil.NoSuchProcess:
                    pass
            self.process = None
        shutil.rmtree(self.state, ignore_errors=True)

    def __enter__(self) -> JupyterLab:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


if __name__ == "__main__":
    with tempfile.TemporaryDirectory(prefix="attention-lab-e2e-") as folder:
        with JupyterLab(copy_notebooks(Path(folder))) as lab:
            print(lab.url("/lab"), flush=True)
            try:
                lab.process.wait()
            except KeyboardInterrupt:
                pass
