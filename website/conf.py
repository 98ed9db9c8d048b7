"""Sphinx settings for both editions; each edition's generated ``conf.py`` calls :func:`configure`.

No execution (the stored outputs are the textbook); MathJax from the site itself; no widget
loader (the explorers are the site's own, see ``website/static/explorer.js``).
"""

from __future__ import annotations

import os
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CACHE = Path(os.environ.get("SITE_CACHE", ROOT / "build" / "site-cache"))


def configure(settings: dict, language: str) -> None:
    """Fill a conf.py namespace for the ``language`` edition ("en" or "ko")."""
    settings.update(
        project="Attention Lab",
        author="Attention Lab",
        copyright="Attention Lab 기여자 (MIT 라이선스)" if language == "ko" else "Attention Lab contributors (MIT licence)",
        language=language,
        extensions=["myst_nb", "website.sphinx_ext"],
        exclude_patterns=["_build", "**.ipynb_checkpoints"],
        html_theme="sphinx_book_theme",
        html_title="Attention Lab" + (" · 한국어" if language == "ko" else ""),
        html_static_path=[str(HERE / "static"), str(CACHE / "mathjax")],
        html_css_files=["site.css"],
        html_js_files=["predict.js", ("explorer.js", {"defer": "defer"}), ("checks.js", {"defer": "defer"})],  # predict.js first: hides answers before paint
        templates_path=[str(HERE / "templates")],
        locale_dirs=[str(HERE / "locale")],
        html_favicon=str(HERE / "static" / "favicon.svg"),
        html_context={"default_mode": "light"},  # the notebooks' pictures are drawn on white
        html_copy_source=False,
        html_show_sourcelink=False,
        html_last_updated_fmt=None,
        html_search_language=language,
        html_theme_options={
            "article_header_end": ["lang-switch.html", "article-header-buttons.html"],
            "use_download_button": False,
            "use_fullscreen_button": False,
            "home_page_in_toc": True,
            "show_navbar_depth": 1,
            "search_bar_text": "검색..." if language == "ko" else "Search...",
        },
        mathjax_path="mathjax/tex-chtml.js",
        myst_enable_extensions=["dollarmath", "amsmath"],
        myst_heading_anchors=3,
        nb_execution_mode="off",
        nb_ipywidgets_js={},  # no require.js or widget manager from a CDN: no page has widget state
        nb_mime_priority_overrides=[("html", "application/vnd.jupyter.widget-view+json", None)],
        suppress_warnings=["myst.header", "mystnb.unknown_mime_type"],
        al_language=language,
    )
