"""The Sphinx sources of one edition: the stored notebooks, made into pages that can be played.

Each notebook of the edition is copied as stored (nothing is re-executed) with three changes:

- the output of every explorer cell (a live widget, unusable without a kernel) becomes the
  site's explorer: the same controls over the pictures ``website.frames`` drew, its readouts,
  and a line saying which values the sliders snap to;
- after the title cell, a box for practice: the ``.ipynb`` to download, the command that runs it
  locally, an "Open in Colab" link (from the one repository URL, ``SITE_REPOSITORY``) and the
  twin page in the other language (without a repository address, no Colab link, and a line saying so);
- before the first exercise, a note on where its answers are checked: under an exercise whose answer
  is a value, a box that checks it on the page (``website/checks.py``, ``website/static/checks.js``);
  the others run ``check(...)`` in a kernel, not on this page.

``index.md`` lists the notebooks (the README's table) and holds the table of contents.
"""

from __future__ import annotations

import copy
import functools
import html
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LANGUAGES = ("en", "ko")
OTHER = {"en": "ko", "ko": "en"}
NOTEBOOKS = {"en": ROOT / "notebooks", "ko": ROOT / "notebooks" / "ko"}
README = {"en": ROOT / "README.md", "ko": ROOT / "README.ko.md"}
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"

TEXT = {
    "en": {
        "language_name": "English",
        "practice_title": "Run this notebook yourself",
        "download": "Download the notebook (.ipynb)",
        "colab": "Open in Colab",
        "colab_note": ("In Colab, first run <code>!git clone {repo} attention-lab</code> and "
                       "<code>%pip install -q -e attention-lab</code>, then restart the session."),
        "locally": "On your machine (Python 3.10+, make):",
        "no_repository": ("This copy of the site was built without a repository address (no "
                          "<code>SITE_REPOSITORY</code> and no GitHub remote), so it links to no Colab page "
                          "or clone address: clone the repository you got it from."),
        "repository_placeholder": "REPOSITORY-URL",
        "figure": "Figure",
        "figure_fallback": "drawn by the code above; the text around it says what it shows",
        "predict_label": "Your prediction",
        "predict_help": "Write what you expect before you see the output below; it stays in this browser only.",
        "predict_commit": "Commit, then show the output",
        "predict_skip": "Skip: show it without a guess",
        "predict_empty": "Write a prediction first, or choose Skip.",
        "predict_yours": "Your prediction:",
        "predict_skipped": "You skipped this prediction.",
        "predict_hidden": "The output is hidden until you commit a prediction above.",
        "progress_title": "Your progress",
        "progress_text": ("Predictions you committed and exercises you checked right on these pages, "
                          "counted in this browser only (nothing leaves it)."),
        "progress_of": "{done} of {total} predictions",
        "progress_exercises_of": "exercises checked right: {done} of {total}",
        "check_label": "Your answer to exercise {id}",
        "check_button": "Check",
        "check_help": ("Type the value you would give to check(): a number, or several separated by "
                       "commas (a shape, a list of rows, letters). The reply is the notebook checker's."),
        "check_empty": "Type an answer first.",
        "check_numbers": "This exercise asks for numbers: type them, separated by commas.",
        "check_done": "You checked this exercise right in this browser.",
        "check_unavailable": "This check could not load; run the notebook to check your answer.",
        "progress_reset": "Forget my progress in this browser",
        "twin": "한국어로 읽기",
        "exercises_here": ("<strong>Checking your answers.</strong> An exercise below whose answer is a value "
                           "(a number, a shape, a few letters) has a box under it: type your answer and choose "
                           "Check, and the page replies as the notebook's <code>check(...)</code> does, right or a "
                           "hint. The other exercises are checked in Python, which this page cannot run: the ❌ "
                           "under them is what the notebook shows before you answer. To check those, run the "
                           "notebook: download it, open it in Colab, or run <code>make lab</code> in the "
                           "repository (links at the top of this page)."),
        "exercises": ("<strong>Checking your answers.</strong> Each exercise below calls "
                      "<code>check(...)</code>, which runs in Python: this page cannot run it, and the "
                      "❌ under each cell is what the notebook shows before you answer. To check an "
                      "answer, run the notebook: download it, open it in Colab, or run "
                      "<code>make lab</code> in the repository (links at the top of this page)."),
        "explorer_note": ("Live without a kernel: every picture and readout here was drawn at build "
                          "time by the same explorer code that runs in JupyterLab, one per position "
                          "of the controls."),
        "snaps": "Sliders snap to the positions drawn:",
        "all_positions": "every position",
        "loading": "loading…",
        "picture_alt": "the explorer's picture at the controls' current position",
        "index_title": "Attention Lab",
        "index_intro": ("Self-attention from the dot product up to a full Transformer block, as an "
                        "ordered series of notebooks. Every explorer on these pages answers its "
                        "controls, with no install and no server. Run the notebooks yourself to "
                        "change the code and check the exercises."),
        "index_run": "Run it yourself",
        "index_run_text": "Clone the repository and start JupyterLab at the first notebook:",
        "index_build": ("This site is built from the notebooks as stored, with <code>make site</code>; "
                        "see the repository's README."),
        "notebooks_caption": "Notebooks",
        "solutions_caption": "Worked solutions",
        "readme_section": "## The notebooks",
    },
    "ko": {
        "language_name": "한국어",
        "practice_title": "이 노트북을 직접 실행하기",
        "download": "노트북 내려받기 (.ipynb)",
        "colab": "Colab에서 열기",
        "colab_note": ("Colab에서는 먼저 <code>!git clone {repo} attention-lab</code>와 "
                       "<code>%pip install -q -e attention-lab</code>를 실행한 뒤 세션을 다시 시작합니다."),
        "locally": "내 컴퓨터에서 (Python 3.10 이상, make):",
        "no_repository": ("이 사이트는 저장소 주소 없이(<code>SITE_REPOSITORY</code>도, GitHub 원격 저장소도 없이) "
                          "만들어져서 Colab 페이지나 clone 주소로 연결하지 않습니다. 이 사이트를 받은 저장소를 "
                          "clone합니다."),
        "repository_placeholder": "저장소-URL",
        "figure": "그림",
        "figure_fallback": "위 코드가 그린 그림이며, 무엇을 보여 주는지는 주변 글에 있습니다",
        "predict_label": "나의 예측",
        "predict_help": "아래 출력을 보기 전에 예상한 결과를 적습니다. 적은 내용은 이 브라우저에만 남습니다.",
        "predict_commit": "예측을 확정하고 출력 보기",
        "predict_skip": "건너뛰기: 예측 없이 보기",
        "predict_empty": "먼저 예측을 적거나 건너뛰기를 고릅니다.",
        "predict_yours": "나의 예측:",
        "predict_skipped": "이 예측은 건너뛰었습니다.",
        "predict_hidden": "위에서 예측을 확정할 때까지 출력을 가려 둡니다.",
        "progress_title": "나의 진도",
        "progress_text": ("이 페이지들에서 확정한 예측과 맞게 채점된 연습문제의 수입니다. 이 브라우저에만 세어 "
                          "두며 밖으로 나가지 않습니다."),
        "progress_of": "예측 {total}개 중 {done}개",
        "progress_exercises_of": "맞게 채점한 연습문제: {total}개 중 {done}개",
        "check_label": "연습문제 {id}의 답",
        "check_button": "채점",
        "check_help": ("check()에 넘길 값을 입력합니다. 수 하나, 또는 쉼표로 구분한 여러 값(모양, 행 번호 목록, "
                       "글자)입니다. 답변은 노트북 채점기가 하는 말 그대로입니다."),
        "check_empty": "먼저 답을 입력합니다.",
        "check_numbers": "이 연습문제는 수를 묻습니다. 쉼표로 구분해 입력합니다.",
        "check_done": "이 브라우저에서 이 연습문제를 맞게 채점했습니다.",
        "check_unavailable": "채점 자료를 불러오지 못했습니다. 노트북을 실행해 답을 확인합니다.",
        "progress_reset": "이 브라우저에 남은 진도 지우기",
        "twin": "Read in English",
        "exercises_here": ("<strong>답 확인하기.</strong> 아래 연습문제 가운데 답이 값(수, 모양, 글자 몇 개)인 "
                           "문제에는 그 아래에 입력 칸이 있습니다. 답을 입력하고 채점을 누르면 노트북의 "
                           "<code>check(...)</code>와 똑같이 정답인지, 아니면 힌트를 알려 줍니다. 나머지 연습문제는 "
                           "Python에서 채점되며 이 페이지는 그것을 실행할 수 없습니다. 그 아래의 ❌는 답을 쓰기 전에 "
                           "노트북이 보여 주는 결과입니다. 그 문제들을 채점하려면 노트북을 실행합니다. 내려받거나, "
                           "Colab에서 열거나, 저장소에서 <code>make lab LANG=ko</code>를 실행합니다(이 페이지 맨 위의 링크)."),
        "exercises": ("<strong>답 확인하기.</strong> 아래 연습문제는 모두 <code>check(...)</code>를 "
                      "호출하며, 이 함수는 Python에서 실행됩니다. 이 페이지는 그것을 실행할 수 없으며, 각 셀 "
                      "아래의 ❌는 답을 쓰기 전에 노트북이 보여 주는 결과입니다. 답을 확인하려면 노트북을 "
                      "실행합니다. 내려받거나, Colab에서 열거나, 저장소에서 <code>make lab LANG=ko</code>를 "
                      "실행합니다(이 페이지 맨 위의 링크)."),
        "explorer_note": ("커널 없이 움직입니다. 여기 있는 그림과 수치는 모두 JupyterLab에서 실행되는 것과 같은 "
                          "탐색기 코드가 사이트를 만들 때 컨트롤의 위치마다 하나씩 그린 것입니다."),
        "snaps": "슬라이더는 미리 그린 위치에만 멈춥니다:",
        "all_positions": "모든 위치",
        "loading": "불러오는 중…",
        "picture_alt": "컨트롤의 현재 위치에서 탐색기가 그린 그림",
        "index_title": "Attention Lab",
        "index_intro": ("내적에서 시작해 트랜스포머 블록 전체까지, 셀프 어텐션을 차례로 배우는 노트북 "
                        "시리즈입니다. 이 페이지의 탐색기는 설치나 서버 없이도 컨트롤에 따라 움직입니다. "
                        "코드를 바꾸거나 연습문제를 채점하려면 노트북을 직접 실행합니다."),
        "index_run": "직접 실행하기",
        "index_run_text": "저장소를 내려받고 첫 노트북에서 JupyterLab을 엽니다:",
        "index_build": ("이 사이트는 저장된 노트북으로 <code>make site</code>가 만듭니다. 자세한 내용은 "
                        "저장소의 README.ko.md를 봅니다."),
        "notebooks_caption": "노트북",
        "solutions_caption": "풀이",
        "readme_section": "## 노트북",
    },
}


def edition_notebooks(language: str) -> list[Path]:
    """The notebooks of one edition, chapters first, then solutions (relative to its folder)."""
    folder = NOTEBOOKS[language]
    return sorted(folder.glob("*.ipynb")) + sorted((folder / "solutions").glob("*.ipynb"))


def docname(notebook: Path, language: str) -> str:
    """The page name of a notebook: "03_scaling_sqrt_dk" or "solutions/03_..._solutions"."""
    return notebook.relative_to(NOTEBOOKS[language]).with_suffix("").as_posix()


def explorer_dir(key: str) -> str:
    """The folder, relative to the edition's root, of one explorer's manifest and pictures."""
    return "_explorers/" + key.replace("/", "-")


def _markdown_cell(cell_id: str, html_text: str) -> dict:
    return {"cell_type": "markdown", "id": cell_id, "metadata": {}, "source": html_text}


def practice_box(page: str, language: str, repository: str | None) -> str:
    """Download, run locally, Colab, and the twin page (``page`` is the docname). Without a
    repository address there is no Colab link, and the clone command names none."""
    t = TEXT[language]
    up = "../" * page.count("/")
    repo_path = "notebooks/" + ("ko/" if language == "ko" else "") + page + ".ipynb"
    lab = "make lab LANG=ko" if language == "ko" else "make lab"
    work_path = "my-work/" + repo_path.removeprefix("notebooks/")  # make lab opens the learner's own copies
    command = (f"git clone {repository or t['repository_placeholder']} attention-lab\ncd attention-lab\n"
               f"{lab}    # then open {work_path}")
    twin = f"{up}../{OTHER[language]}/{page}.html"
    links = [f'<a class="al-download" href="{up}notebooks/{page}.ipynb" download>{html.escape(t["download"])}</a>']
    if repository:
        colab = f"https://colab.research.google.com/github/{_github_path(repository)}/blob/main/{repo_path}"
        links.append(f'<a class="al-colab" href="{html.escape(colab)}">{html.escape(t["colab"])}</a>')
    links.append(f'<a class="al-twin" href="{twin}" hreflang="{OTHER[language]}">{html.escape(t["twin"])}</a>')
    note = t["colab_note"].format(repo=html.escape(repository)) if repository else t["no_repository"]
    return (
        f'<div class="al-practice">\n'
        f'<p class="al-practice-title">{html.escape(t["practice_title"])}</p>\n'
        f'<p>{" · ".join(links)}</p>\n'
        f'<p>{html.escape(t["locally"])}</p>\n'
        f'<pre class="al-command">{html.escape(command)}</pre>\n'
        f'<p class="al-colab-note">{note}</p>\n'
        f"</div>\n"
    )


def _github_path(repository: str) -> str:
    """"owner/name" from a GitHub URL (Colab opens notebooks by that path)."""
    match = re.match(r"^https://github\.com/([^/]+/[^/]+?)(?:\.git)?/?$", repository)
    if not match:
        raise ValueError(f"SITE_REPOSITORY must be a https://github.com/OWNER/NAME URL, got {repository!r}")
    return match.group(1)


def _slider_note(manifest: dict, language: str) -> str:
    t = TEXT[language]
    parts = []
    for c, control in enumerate(manifest["controls"]):
        if control["kind"] != "slider":
            continue
        labels = _labels_of(manifest, c)
        if len(labels) < control["full"]:
            parts.append(f"{html.escape(control['description'])} → {html.escape(', '.join(labels))}")
    return f' {html.escape(t["snaps"])} ' + "; ".join(parts) + "." if parts else ""


def _labels_of(manifest: dict, c: int) -> list[str]:
    """Every label control ``c`` shows anywhere, in value order of first appearance per state."""
    seen: dict[int, str] = {}
    for ui in {ids[c] for ids in manifest["state_ui"]}:
        for v, label in manifest["ui"][ui]:
            seen.setdefault(v, label)
    values = manifest["controls"][c]["values"]
    order = sorted(seen, key=lambda v: values[v] if isinstance(values[v], (int, float)) else v)
    return [seen[v] for v in order]


def explorer_html(manifest: dict, language: str, up: str) -> str:
    """The explorer as the page first shows it: controls at the starting position, its picture and
    readouts (``website/static/explorer.js`` makes it move)."""
    t = TEXT[language]
    folder = up + explorer_dir(manifest["key"])
    state = manifest["states"][0]
    controls = []
    for c, control in enumerate(manifest["controls"]):
        ui = manifest["ui"][manifest["state_ui"][0][c]]
        controls.append(_control_html(c, control, ui, state[c]))
    width, height = manifest["size"]
    readouts = _readouts_html(manifest, 0)
    return (
        f'<div class="al-explorer" data-manifest="{folder}/manifest.json" lang="{language}">'
        f'<div class="al-controls">{"".join(controls)}</div>'
        f'<div class="al-view"><div class="al-picture" style="max-width:{width}px">'
        f'<img src="{folder}/frames/{manifest["frames"][0]}" width="{width}" height="{height}" '
        f'alt="{html.escape(_describe(manifest, 0, t))}" data-alt="{html.escape(t["picture_alt"])}"></div>'
        f'<div class="al-readouts">{readouts}</div></div>'
        f'<p class="al-note">{html.escape(t["explorer_note"])}{_slider_note(manifest, language)}</p>'
        f"</div>"
    )


def _describe(manifest: dict, n: int, t: dict) -> str:
    """The picture's alt text at position n, as website/static/explorer.js writes it after a change."""
    names = manifest["readout_names"]
    return t["picture_alt"] + ": " + "; ".join(f"{names[k]} {text}" for k, text in manifest["readouts"][n])


def _readouts_html(manifest: dict, n: int) -> str:
    names = manifest["readout_names"]
    rows = "".join(f"<tr><td>{html.escape(names[k])}</td><td>{html.escape(text)}</td></tr>"
                   for k, text in manifest["readouts"][n])
    return f"<table>{rows}</table>"


def _control_html(c: int, control: dict, ui: list, current: int) -> str:
    """One control: a range input, a select, a group of toggle buttons or a checkbox."""
    kind, name = control["kind"], html.escape(control["description"])
    here = next((i for i, (v, _) in enumerate(ui) if v == current), 0)
    data = f'data-control="{c}"'
    if kind == "slider":
        return (f'<div class="al-control al-slider"><label><span class="al-label">{name}</span>'
                f'<input type="range" {data} min="0" max="{len(ui) - 1}" step="1" value="{here}">'
                f'<output>{html.escape(ui[here][1])}</output></label></div>')
    if kind == "dropdown":
        options = "".join(f'<option value="{v}"{" selected" if v == current else ""}>{html.escape(label)}</option>'
                          for v, label in ui)
        return (f'<div class="al-control al-dropdown"><label><span class="al-label">{name}</span>'
                f"<select {data}>{options}</select></label></div>")
    if kind == "toggles":
        buttons = "".join(f'<button type="button" data-value="{v}" aria-pressed="{str(v == current).lower()}">'
                          f"{html.escape(label)}</button>" for v, label in ui)
        return (f'<div class="al-control al-toggles"><span class="al-label">{name}</span>'
                f'<span class="al-buttons" role="group" aria-label="{name}" {data}>{buttons}</span></div>')
    values = control["values"]
    on = values.index(True) if True in values else -1
    off = values.index(False) if False in values else -1
    checked = " checked" if current == on else ""
    return (f'<div class="al-control al-checkbox"><label><input type="checkbox" {data} data-on="{on}" '
            f'data-off="{off}"{checked}><span class="al-label">{name}</span></label></div>')


# A notebook's explicit anchor (JupyterLab honours the HTML) becomes a MyST target on the page, so a
# link from another page resolves in Korean too, where the heading's own slug differs. Only an
# anchor unique in its edition can be a target (Sphinx's labels are site-wide); the others stay HTML
# ids, which links within their page reach.
ANCHOR = re.compile(r'^<a id="([\w-]+)"></a>\n', re.MULTILINE)
LOCAL_LINK = re.compile(r"\[([^\]]+)\]\(#([\w-]+)\)")


@functools.cache
def unique_anchors(language: str) -> frozenset[str]:
    """The explicit anchor ids that occur in exactly one notebook of the edition."""
    counts: dict[str, int] = {}
    for notebook in edition_notebooks(language):
        cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
        text = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
        for anchor in set(ANCHOR.findall(text)):
            counts[anchor] = counts.get(anchor, 0) + 1
    return frozenset(a for a, n in counts.items() if n == 1)
def figure_titles(source: str) -> list[str]:
    """The titles a code cell gives its figures (set_title, suptitle, title=...), as written; an
    f-string's fields read as "…"."""
    import ast

    code = "\n".join(line for line in source.splitlines() if not line.lstrip().startswith(("%", "!")))
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []

    def text(node) -> str | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.JoinedStr):
            return "".join(v.value if isinstance(v, ast.Constant) else "…" for v in node.values)
        return None

    titles = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        if name in ("set_title", "suptitle", "title") and node.args and text(node.args[0]):
            titles.append(text(node.args[0]))
        titles += [text(k.value) for k in node.keywords if k.arg in ("title", "suptitle") and text(k.value)]
    return [" ".join(t.split()) for t in dict.fromkeys(titles) if t.strip()]


def figure_alt(source: str, numbers: range, language: str) -> str:
    """Alt text for a cell's figures (numbered on the page): its titles, else a pointer to the text."""
    t = TEXT[language]
    label = f"{t['figure']} {numbers[0]}" + (f"–{numbers[-1]}" if len(numbers) > 1 else "")
    titles = figure_titles(source)
    return f"{label}: " + ("; ".join(titles[:4]) if titles else t["figure_fallback"])


ANSWER_TAG = "answer"  # scripts/mark_answers.py tags every Predict's answer cells (JupyterLab folds them)
EXPLAIN_TAG = "answer-explanation"  # and the explain cell right after them (JupyterLab folds its text)
PREDICT_MARKERS = {"en": "**Predict:**", "ko": "**예측해 보기:**"}  # as in scripts/mark_answers.py


def predict_groups(cells: list[dict], language: str) -> dict[int, list[int]]:
    """Each Predict cell's index -> the indices of the cells that wait for the guess: those tagged
    ``answer`` (code) or ``answer-explanation`` (the verdict's text) after it and before the next
    Predict (the tags are scripts/mark_answers.py's, one source for JupyterLab and the site)."""
    groups: dict[int, list[int]] = {}
    current = None
    for i, cell in enumerate(cells):
        text = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        if cell["cell_type"] == "markdown" and PREDICT_MARKERS[language] in text:
            current = i
        elif {ANSWER_TAG, EXPLAIN_TAG} & set(cell.get("metadata", {}).get("tags", [])) and current is not None:
            groups.setdefault(current, []).append(i)
    return groups


def predict_form(page: str, number: int, language: str) -> str:
    """The box under a Predict: the learner writes a guess (or skips) before the output shows."""
    t = TEXT[language]
    key = f"{language}/{page}#{number}"
    field = f"al-guess-{number}"
    return (
        f'<form class="al-predict" data-predict="{html.escape(key)}" data-number="{number}" '
        + " ".join(f'data-{name}="{html.escape(t["predict_" + name])}"' for name in ("empty", "yours", "skipped", "hidden"))
        + ">"
        f'<label for="{field}">{html.escape(t["predict_label"])}</label>'
        f'<textarea id="{field}" rows="2" aria-describedby="{field}-help"></textarea>'
        f'<span id="{field}-help" class="al-predict-help">{html.escape(t["predict_help"])}</span>'
        f'<span class="al-predict-buttons"><button type="submit" class="al-commit">{html.escape(t["predict_commit"])}</button>'
        f'<button type="button" class="al-skip">{html.escape(t["predict_skip"])}</button></span>'
        f'<span class="al-predict-status" role="status" aria-live="polite"></span>'
        f"</form>\n"
    )


CHECK_CALL = re.compile(r"\bcheck\(\s*[\"']([^\"']+)[\"']")


@functools.cache
def _site_checked() -> frozenset[str]:
    from website.checks import site_checked

    return frozenset(site_checked())


def checked_on_page(notebook: Path, language: str) -> list[str]:
    """The exercises a chapter's page checks itself (website/checks.py), in page order; none on a
    worked solution's page, which shows the answers."""
    if "/" in docname(notebook, language):
        return []
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    found = [i for c in cells if c["cell_type"] == "code" for i in CHECK_CALL.findall("".join(c["source"]))]
    return [i for i in dict.fromkeys(found) if i in _site_checked()]


def checks_file(page: str) -> str:
    """The data of a page's checks, relative to the edition's root."""
    return f"_checks/{page.replace('/', '-')}.json"


def check_form(page: str, exercise_id: str, language: str) -> str:
    """The box under an exercise whose answer is a value: an input, a Check button and the reply
    (website/static/checks.js)."""
    t = TEXT[language]
    up = "../" * page.count("/")
    field = "al-check-" + exercise_id.replace(".", "-")
    return (
        f'<form class="al-check" data-exercise="{exercise_id}" data-key="{language}/{page}#{exercise_id}" '
        f'data-src="{up}{checks_file(page)}" '
        + " ".join(f'data-{name}="{html.escape(t["check_" + name])}"' for name in ("empty", "numbers", "done", "unavailable"))
        + ">"
        f'<label for="{field}">{html.escape(t["check_label"].format(id=exercise_id))}</label>'
        f'<span class="al-check-row"><input id="{field}" type="text" autocomplete="off" spellcheck="false" '
        f'aria-describedby="{field}-help">'
        f'<button type="submit">{html.escape(t["check_button"])}</button></span>'
        f'<span id="{field}-help" class="al-check-help">{html.escape(t["check_help"])}</span>'
        f'<span class="al-check-reply" role="status" aria-live="polite"></span>'
        f"</form>\n"
    )


def page_notebook(notebook: Path, language: str, manifests: dict[str, dict], repository: str | None) -> dict:
    """The notebook as the page shows it (see the module docstring)."""
    nb = json.loads(notebook.read_text(encoding="utf-8"))
    page = docname(notebook, language)
    up = "../" * page.count("/")
    cells = []
    exercise_note_done = False
    figures = 0
    groups = predict_groups(nb["cells"], language)
    own_anchors = set(ANCHOR.findall("\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")))
    number_of = {predict: n for n, predict in enumerate(sorted(groups))}
    checked = checked_on_page(notebook, language)
    answer_of = {a: number_of[predict] for predict, answers in groups.items() for a in answers}
    for i, cell in enumerate(nb["cells"]):
        cell = copy.deepcopy(cell)
        if i in answer_of and cell["cell_type"] == "markdown":  # an explanation: a block the page can hide
            source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            cell["source"] = (f'<div class="al-explanation al-answer-{answer_of[i]}">\n\n{source}\n\n</div>\n')
        elif i in answer_of:
            cell.setdefault("metadata", {}).setdefault("tags", []).extend(["al-answer", f"al-answer-{answer_of[i]}"])
        source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        if cell["cell_type"] == "markdown" and own_anchors:  # a link to an anchor of this page: plain HTML
            cell["source"] = source = LOCAL_LINK.sub(
                lambda m: f'<a href="#{m.group(2)}">{m.group(1)}</a>' if m.group(2) in own_anchors else m.group(0), source)
        if cell["cell_type"] == "markdown" and ANCHOR.search(source):
            cell["source"] = source = ANCHOR.sub(
                lambda m: f"({m.group(1)})=\n" if m.group(1) in unique_anchors(language) else m.group(0), source)
        if cell["cell_type"] == "code":
            images = sum("image/png" in o.get("data", {}) and WIDGET_VIEW not in o.get("data", {})
                         for o in cell.get("outputs", []))
            if images:  # myst-nb takes an image's alt text from the cell's metadata, for all its images
                cell.setdefault("metadata", {}).setdefault("mystnb", {})["image"] = {
                    "alt": figure_alt(source, range(figures + 1, figures + images + 1), language)}
                figures += images
            if any(WIDGET_VIEW in o.get("data", {}) for o in cell.get("outputs", [])):
                key = f"{notebook.stem}/{cell.get('id')}"
                if key not in manifests:
                    raise KeyError(f"{notebook}: explorer cell {cell.get('id')} has no pictures ({key})")
                cell["outputs"] = [{"output_type": "display_data", "metadata": {},
                                    "data": {"text/html": explorer_html(manifests[key], language, up)}}]
            ids = CHECK_CALL.findall(source)
            if ids:
                if not exercise_note_done:
                    note = TEXT[language]["exercises_here" if checked else "exercises"]
                    cells.append(_markdown_cell("al-exercise-note", f'<div class="al-exercise-note">{note}</div>\n'))
                    exercise_note_done = True
                tags = cell.setdefault("metadata", {}).setdefault("tags", [])
                tags.append("al-exercise-checked" if set(ids) <= set(checked) else "al-exercise")
        cells.append(cell)
        if cell["cell_type"] == "code":
            for exercise_id in dict.fromkeys(CHECK_CALL.findall(source)):
                if exercise_id in checked:
                    cells.append(_markdown_cell(f"al-check-{exercise_id.replace('.', '-')}",
                                                check_form(page, exercise_id, language)))
        if i == 0:
            cells.append(_markdown_cell("al-practice", practice_box(page, language, repository)))
        if i in number_of:
            cells.append(_markdown_cell(f"al-predict-{number_of[i]}", predict_form(page, number_of[i], language)))
    nb["cells"] = cells
    return nb


def progress_html(language: str) -> str:
    """The course map with the learner's progress: every chapter and how many of its Predicts this
    browser has committed (website/static/predict.js fills in the counts)."""
    t = TEXT[language]
    items = []
    for notebook in edition_notebooks(language):
        page = docname(notebook, language)
        if "/" in page:
            continue
        nb = json.loads(notebook.read_text(encoding="utf-8"))
        total = len(predict_groups(nb["cells"], language))
        exercises = len(checked_on_page(notebook, language))
        first = nb["cells"][0]["source"]
        title = ("".join(first) if isinstance(first, list) else first).splitlines()[0].lstrip("# ").strip()
        counts = ""
        if total:
            counts += (f'<span class="al-progress-count">'
                       f'{html.escape(t["progress_of"].format(done=0, total=total))}</span>')
        if exercises:
            counts += (f'<span class="al-progress-exercises">'
                       f'{html.escape(t["progress_exercises_of"].format(done=0, total=exercises))}</span>')
        if counts:
            items.append(f'<li data-page="{language}/{page}" data-total="{total}" data-exercises="{exercises}">'
                         f'<a href="{page}.html">{html.escape(title)}</a> {counts}</li>')
    return (f'<div class="al-progress" data-of="{html.escape(t["progress_of"])}" '
            f'data-exercises-of="{html.escape(t["progress_exercises_of"])}">'
            f'<p>{html.escape(t["progress_text"])}</p><ul>{"".join(items)}</ul>'
            f'<button type="button" class="al-reset">{html.escape(t["progress_reset"])}</button></div>')


def index_markdown(language: str, repository: str | None) -> str:
    """The edition's home page: intro, the README's table of notebooks, the learner's progress, how to
    run, the contents."""
    t = TEXT[language]
    table = _readme_table(language)
    chapters = [docname(p, language) for p in edition_notebooks(language) if "/" not in docname(p, language)]
    solutions = [docname(p, language) for p in edition_notebooks(language) if "/" in docname(p, language)]
    lab = "make lab LANG=ko" if language == "ko" else "make lab"
    return (
        f"# {t['index_title']}\n\n"
        f'<p class="al-twin-line"><a class="al-twin" href="../{OTHER[language]}/index.html" '
        f'hreflang="{OTHER[language]}">{html.escape(t["twin"])}</a></p>\n\n'
        f"{t['index_intro']}\n\n{table}\n\n"
        f"## {t['progress_title']}\n\n{progress_html(language)}\n\n"
        f"## {t['index_run']}\n\n{t['index_run_text']}\n\n"
        f"```bash\ngit clone {repository or t['repository_placeholder']} attention-lab\ncd attention-lab\n{lab}\n```\n\n"
        + ("" if repository else f"<p>{t['no_repository']}</p>\n\n") +
        f"<p>{t['index_build']}</p>\n\n"
        "```{toctree}\n:hidden:\n:maxdepth: 1\n" f":caption: {t['notebooks_caption']}\n\n"
        + "\n".join(chapters) + "\n```\n\n"
        "```{toctree}\n:hidden:\n:maxdepth: 1\n" f":caption: {t['solutions_caption']}\n\n"
        + "\n".join(solutions) + "\n```\n"
    )


def _readme_table(language: str) -> str:
    """The README's table of notebooks, its links pointing at the pages."""
    text = README[language].read_text(encoding="utf-8")
    section = text.split(TEXT[language]["readme_section"] + "\n", 1)[1]
    lines = [line for line in section.strip().splitlines() if line.startswith("|")]
    prefix = "notebooks/ko/" if language == "ko" else "notebooks/"
    table = "\n".join(lines)
    return re.sub(r"\]\(" + re.escape(prefix) + r"([^)]+)\.ipynb\)", r"](\1.ipynb)", table)


def write_if_changed(path: Path, text: str) -> bool:
    """Write only when the content differs, so Sphinx re-reads only what changed."""
    if path.exists() and path.read_text(encoding="utf-8") == text:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return True


def write_sources(language: str, src: Path, manifests: dict[str, dict], repository: str | None) -> list[str]:
    """Write the edition's Sphinx sources into ``src``; returns the pages whose source changed."""
    changed = []
    wanted = {"index.md", "conf.py"}
    for notebook in edition_notebooks(language):
        page = docname(notebook, language)
        wanted.add(page + ".ipynb")
        text = json.dumps(page_notebook(notebook, language, manifests, repository), ensure_ascii=False, indent=1)
        if write_if_changed(src / f"{page}.ipynb", text):
            changed.append(page)
    if write_if_changed(src / "index.md", index_markdown(language, repository)):
        changed.append("index")
    conf = f"from website.conf import configure\n\nconfigure(globals(), {language!r})\n"
    write_if_changed(src / "conf.py", conf)
    for stale in src.rglob("*.ipynb"):  # a notebook that was deleted or renamed
        if stale.relative_to(src).as_posix() not in wanted:
            stale.unlink()
    return changed
