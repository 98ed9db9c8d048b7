"""The static site: both editions of the notebooks as HTML, with every explorer still live.

``python -m website.build`` (``make site``) writes ``build/site/``. See ``website/build.py``.
"""
