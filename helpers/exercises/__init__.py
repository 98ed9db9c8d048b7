"""One module per notebook (``ch01.py``, ``ch02.py``, ...), each registering its checkers
with :func:`helpers.checks.exercise`. Modules here are discovered automatically."""
