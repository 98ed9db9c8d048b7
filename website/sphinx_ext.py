"""The site's Sphinx extension: the link to each page's twin in the other language, and Korean search.

Sphinx has no Korean search language: with the default one a Korean word is indexed with its
particle attached ("어텐션은", "어텐션의"), so a search for "어텐션" finds little. ``SearchKorean``
strips common particles and endings from Hangul words, the same way in Python (the index) and
JavaScript (the query).
"""

from __future__ import annotations

import re

from sphinx.application import Sphinx
from sphinx.search import SearchLanguage

OTHER = {"en": ("ko", "한국어"), "ko": ("en", "English")}

# Longest first: a word keeps at least two syllables.
PARTICLES = (
    "에서는", "에서도", "으로는", "으로도", "에게서", "이라는", "이라고", "입니다", "합니다", "됩니다",
    "에서", "으로", "에게", "까지", "부터", "처럼", "보다", "하고", "이나", "이고", "이며", "이다", "라는",
    "라고", "하는", "하면", "해서", "하여", "한다", "된다", "되는",
    "은", "는", "이", "가", "을", "를", "의", "에", "로", "와", "과", "도", "만", "나", "다", "고",
)
HANGUL = re.compile(r"[\uac00-\ud7a3]")


def stem_korean(word: str) -> str:
    """A Hangul word without its trailing particle or ending (kept if that leaves one syllable)."""
    word = word.lower()
    if not HANGUL.search(word):
        return word
    for ending in PARTICLES:
        if word.endswith(ending) and len(word) - len(ending) >= 2:
            return word[: -len(ending)]
    return word


class SearchKorean(SearchLanguage):
    lang = "ko"
    language_name = "Korean"
    js_stemmer_code = (
        "var Stemmer = function () {\n"
        f"  var particles = {list(PARTICLES)!r};\n"
        "  var hangul = /[\\uac00-\\ud7a3]/;\n"
        "  this.stemWord = function (w) {\n"
        "    w = w.toLowerCase();\n"
        "    if (!hangul.test(w)) return w;\n"
        "    for (var i = 0; i < particles.length; i++) {\n"
        "      var p = particles[i];\n"
        "      if (w.length - p.length >= 2 && w.slice(-p.length) === p) return w.slice(0, -p.length);\n"
        "    }\n"
        "    return w;\n"
        "  };\n"
        "};\n"
    )

    def stem(self, word: str) -> str:
        return stem_korean(word)


def add_twin(app: Sphinx, pagename: str, templatename: str, context: dict, doctree) -> None:
    """``al_twin_url``: this page in the other edition (build/site/en/x.html <-> build/site/ko/x.html)."""
    other, label = OTHER[app.config.al_language]
    up = "../" * (pagename.count("/") + 1)
    context["al_twin_url"] = f"{up}{other}/{pagename}.html"
    context["al_twin_lang"] = other
    context["al_twin_label"] = label


def setup(app: Sphinx) -> dict:
    app.add_config_value("al_language", "en", "html")
    app.add_search_language(SearchKorean)
    app.connect("html-page-context", add_twin)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
