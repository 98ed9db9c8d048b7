"""Real-browser tests: JupyterLab + headless Chromium (``make e2e``). Not part of ``make test``."""
