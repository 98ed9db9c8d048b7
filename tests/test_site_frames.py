"""The static site's frames (website/frames.py) and pages (website/pages.py), without a browser.

The walk over an explorer's positions must follow the widgets as JupyterLab does (a slider whose
maximum follows another control), snap long sliders, and draw each position with the explorer's
own picture; a page must carry the explorer, the practice box and the exercise note.
"""

import io
import json
import re
from pathlib import Path

import ipywidgets as widgets
import numpy as np
import pytest
from PIL import Image

from helpers.widgets import HeatmapFrame, LiveHeatmap
from website.frames import SNAP, Walk, encode, positions, render, snapped
from website.pages import (
    TEXT,
    docname,
    edition_notebooks,
    explorer_html,
    page_notebook,
    practice_box,
)


def linked_explorer() -> LiveHeatmap:
    """length 2..5 and pads 0..length-1 (its maximum follows length), a toggle and a long slider."""
    def compute(length, pads, side, scale):
        weights = np.full((length, length), 1 / length) * scale / 10
        return HeatmapFrame(weights, readouts={"pads": pads, "side": side, "scale": float(scale)})

    controls = {
        "length": widgets.IntSlider(value=4, min=2, max=5),
        "pads": widgets.IntSlider(value=3, min=0, max=3),
        "side": widgets.ToggleButtons(options=["left", "right"], value="left"),
        "scale": widgets.IntSlider(value=10, min=1, max=40),
    }
    controls["length"].observe(lambda change: setattr(controls["pads"], "max", change["new"] - 1), names="value")
    return LiveHeatmap(compute, controls)


def test_walk_follows_linked_controls_and_records_the_moves_that_differ():
    explorer = linked_explorer()
    walk = Walk(explorer, {"scale": (1, 40)})
    walk.run()
    names = [c.name for c in walk.controls]
    values = [[walk.controls[i].values[v] for i, v in enumerate(state)] for state in walk.states]
    # every (length, pads <= length - 1, side, scale in {1, 10, 40}) and nothing else
    expected = {(n, p, s, k) for n in range(2, 6) for p in range(n) for s in ("left", "right") for k in (1, 10, 40)}
    assert {tuple(v) for v in values} == expected and len(walk.states) == len(expected)
    assert values[0] == [4, 3, "left", 10], "the walk starts where the notebook leaves the explorer"
    # length 4 -> 2 with pads 3: the widget clamps pads to 1; the walk records that move
    length = names.index("length")
    two = walk.controls[length].values.index(2)
    landed = walk.states[walk.moves[0, length, two]]
    assert [walk.controls[i].values[v] for i, v in enumerate(landed)] == [2, 1, "left", 10]
    for (n, c, v), t in walk.moves.items():  # a recorded move is one the widgets make differently
        plain = walk.states[n][:c] + (v,) + walk.states[n][c + 1:]
        assert walk.states[t] != plain and walk.states[t][c] == v
    # pads offers 0..length - 1 at each position
    for state, ui in zip(walk.states, walk.ui, strict=True):
        n = walk.controls[length].values[state[length]]
        assert [label for _, label in ui[names.index("pads")]] == [str(p) for p in range(n)]


def test_snapping_keeps_the_current_value_and_rejects_unknown_values():
    offered = [(v, str(v)) for v in range(0, 41)]
    assert [v for v, _ in snapped(offered, 7, (0, 20, 40))] == [0, 7, 20, 40]
    assert len(snapped(offered, 0, None)) == 11  # evenly spread by default
    assert snapped(offered[:5], 2, None) == offered[:5]  # a short slider keeps every position
    with pytest.raises(ValueError, match="not positions"):
        snapped(offered, 0, (0, 41))


def test_positions_read_the_widgets_own_options_and_formats():
    log = widgets.FloatLogSlider(value=100, base=10, min=-2, max=2, step=1, readout_format=".3g")
    assert [label for _, label in positions(log)] == ["0.0100", "0.100", "1.00", "10.0", "100"]
    toggles = widgets.ToggleButtons(options=[("fp16", 2), ("fp32", 4)], value=2)
    assert positions(toggles) == [(2, "fp16"), (4, "fp32")]
    assert [v for v, _ in positions(widgets.FloatSlider(value=0.5, min=0.25, max=1.0, step=0.25))] == [0.25, 0.5, 0.75, 1.0]


def test_render_draws_each_position_with_the_explorers_own_picture(tmp_path, monkeypatch):
    explorer = linked_explorer()
    monkeypatch.setattr("website.frames.build_explorer", lambda notebook, cell_id: explorer)
    monkeypatch.setitem(SNAP, "toy/cell", {"scale": (1, 40)})
    manifest = render(tmp_path / "toy.ipynb", "cell", "en", tmp_path / "out")
    on_disk = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert on_disk["states"] == manifest["states"] and len(manifest["frames"]) == len(manifest["states"])
    names = [c["name"] for c in manifest["controls"]]
    for n in (0, len(manifest["states"]) // 2, len(manifest["states"]) - 1):  # a few positions, redrawn here
        values = {name: manifest["controls"][i]["values"][v] for i, (name, v) in enumerate(zip(names, manifest["states"][n], strict=True))}
        with explorer.held():
            explorer.set(length=values["length"])
            explorer.set(**{k: v for k, v in values.items() if k != "length"})
        site = Image.open(tmp_path / "out" / "frames" / manifest["frames"][n])
        kernel = Image.open(io.BytesIO(explorer.image.value))
        assert np.array_equal(np.asarray(site.convert("RGB")), np.asarray(kernel.convert("RGB")))
        shown = {manifest["readout_names"][k]: text for k, text in manifest["readouts"][n]}
        assert shown["pads"] == str(values["pads"]) and shown["scale"] == f"{float(values['scale']):.3f}"


def test_encode_is_lossless():
    rng = np.random.default_rng(0)
    pixels = rng.integers(0, 256, (30, 40, 3), dtype=np.uint8)
    png = io.BytesIO()
    Image.fromarray(pixels).save(png, format="PNG")
    assert np.array_equal(np.asarray(Image.open(io.BytesIO(encode(png.getvalue()))).convert("RGB")), pixels)


@pytest.mark.parametrize("language", ["en", "ko"])
def test_pages_carry_explorer_practice_box_and_exercise_note(language):
    notebook = next(p for p in edition_notebooks(language) if p.name == "05_masking.ipynb")
    manifest = {"key": "05_masking/6aa2e2e5", "size": [10, 10], "frames": ["a.webp"], "states": [[0]],
                "state_ui": [[0]], "ui": [[[0, "8"], [1, "9"]]], "readout_names": ["x"], "readouts": [[[0, "1"]]],
                "controls": [{"name": "length", "kind": "slider", "description": "sequence length", "full": 12,
                              "values": [8, 9]}]}
    nb = page_notebook(notebook, language, {"05_masking/6aa2e2e5": manifest}, "https://github.com/o/r")
    text = "\n".join([json.dumps(nb, ensure_ascii=False)]
                     + ["".join(c["source"]) for c in nb["cells"]]
                     + [o["data"]["text/html"] for c in nb["cells"] for o in c.get("outputs", [])
                        if "text/html" in o.get("data", {})])
    assert 'data-manifest="_explorers/05_masking-6aa2e2e5/manifest.json"' in text
    assert "application/vnd.jupyter.widget-view+json" not in text, "a widget the page cannot show"
    assert TEXT[language]["snaps"] in text and "sequence length → 8, 9" in text
    assert "colab.research.google.com/github/o/r/blob/main/notebooks/" + ("ko/" if language == "ko" else "") in text
    assert TEXT[language]["exercises_here"] in text  # 05.5's answer is a value: checked on the page
    assert any("al-exercise" in c.get("metadata", {}).get("tags", []) for c in nb["cells"])
    ids = [c["id"] for c in nb["cells"]]
    form = nb["cells"][ids.index("al-check-05-5")]
    assert "al-exercise-checked" in nb["cells"][ids.index("al-check-05-5") - 1]["metadata"]["tags"]
    assert 'data-exercise="05.5"' in form["source"] and 'data-src="_checks/05_masking.json"' in form["source"]
    assert f'data-key="{language}/05_masking#05.5"' in form["source"] and 'type="submit"' in form["source"]


@pytest.mark.parametrize("language", ["en", "ko"])
def test_every_site_checked_exercise_has_its_box_on_its_chapter_page_only(language):
    """Each exercise website.checks checks gets one box, under its own cell, on its chapter's page in
    both editions; a worked solution's page has none (it shows the answers)."""
    from website.checks import site_checked
    from website.pages import checked_on_page

    found = []
    for notebook in edition_notebooks(language):
        boxes = [c["id"] for c in page_notebook(notebook, language, _fake_manifests(
            notebook, json.loads(notebook.read_text(encoding="utf-8"))["cells"]), None)["cells"]
            if c["id"].startswith("al-check-")]
        assert boxes == ["al-check-" + i.replace(".", "-") for i in checked_on_page(notebook, language)]
        assert not boxes or "/" not in docname(notebook, language)
        found += boxes
    assert sorted(found) == sorted("al-check-" + i.replace(".", "-") for i in site_checked())


def test_twin_links_and_colab_paths():
    box = practice_box("solutions/03_scaling_sqrt_dk_solutions", "en", "https://github.com/o/r")
    assert 'href="../../ko/solutions/03_scaling_sqrt_dk_solutions.html"' in box
    assert 'href="../notebooks/solutions/03_scaling_sqrt_dk_solutions.ipynb" download' in box
    assert "make lab    # then open my-work/solutions/03_scaling_sqrt_dk_solutions.ipynb" in box
    with pytest.raises(ValueError, match="SITE_REPOSITORY"):
        practice_box("00_start_here", "en", "https://example.org/r")
    for language in ("en", "ko"):
        pages = [docname(p, language) for p in edition_notebooks(language)]
        assert "03_scaling_sqrt_dk" in pages and "solutions/03_scaling_sqrt_dk_solutions" in pages
    assert "<img" in explorer_html({"key": "a/b", "size": [1, 1], "frames": ["f.webp"], "states": [[]], "state_ui": [[]],
                                    "ui": [], "readout_names": [], "readouts": [[]], "controls": []}, "ko", "../")


@pytest.mark.parametrize("language", ["en", "ko"])
def test_without_a_repository_the_pages_link_nowhere_and_say_so(language):
    """No invented address: a site built without SITE_REPOSITORY or a GitHub remote has no Colab link,
    names no clone address, and says why, on every page and on the contents page."""
    from website.pages import index_markdown

    box = practice_box("05_masking", language, None)
    assert "colab.research.google.com" not in box and "github.com" not in box
    assert TEXT[language]["no_repository"] in box and TEXT[language]["repository_placeholder"] in box
    index = index_markdown(language, None)
    assert "github.com" not in index and TEXT[language]["no_repository"] in index
    with_repository = index_markdown(language, "https://github.com/o/r")
    assert "git clone https://github.com/o/r attention-lab" in with_repository
    assert TEXT[language]["no_repository"] not in with_repository


@pytest.mark.parametrize("setting, remote, expected", [
    ("https://github.com/o/r", "git@github.com:x/y.git", "https://github.com/o/r"),  # the setting wins
    ("https://github.com/o/r.git/", "", "https://github.com/o/r"),
    ("", "git@github.com:x/y.git", "https://github.com/x/y"),  # else the clone's origin remote
    ("", "ssh://git@github.com/x/y", "https://github.com/x/y"),
    ("", "https://github.com/x/y.git", "https://github.com/x/y"),
    ("", "https://gitlab.com/x/y.git", None),  # not GitHub: Colab cannot open it, so no address
    ("", None, None),  # no remote at all
])
def test_the_repository_comes_from_the_setting_or_the_remote(monkeypatch, setting, remote, expected):
    import subprocess

    from website import build

    monkeypatch.setenv("SITE_REPOSITORY", setting)
    answer = subprocess.CompletedProcess([], 0 if remote is not None else 2, stdout=(remote or "") + "\n", stderr="")
    monkeypatch.setattr(build.subprocess, "run", lambda *a, **k: answer)
    assert build.repository_url() == expected


def test_a_repository_setting_that_is_not_github_is_refused(monkeypatch):
    from website import build

    monkeypatch.setenv("SITE_REPOSITORY", "https://example.org/r")
    with pytest.raises(SystemExit, match="SITE_REPOSITORY"):
        build.repository_url()


@pytest.mark.parametrize("language", ["en", "ko"])
def test_every_predict_on_the_site_hides_the_cells_scripts_mark_answers_marks(language):
    """One source for JupyterLab and the site: the page puts a guess form under each Predict whose
    answers scripts/mark_answers.py marks, and tags exactly those answer cells to wait for it."""
    import sys

    import nbformat

    from website.pages import page_notebook, predict_groups

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
    import mark_answers

    forms = 0
    for notebook in edition_notebooks(language):
        nb = nbformat.read(notebook, as_version=4)
        wanted = mark_answers.plan(nb, notebook)
        planned = {p: a + ([wanted.explains[p]] if p in wanted.explains else []) for p, a in wanted.answers.items() if a}
        cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
        order = [c["id"] for c in cells]
        for asker, explain in wanted.explains.items():  # an explorer's folded answer (EXPLORER_ANSWERS): the
            if asker not in wanted.answers:  # page has no form for an explorer, so it waits for the Predict above
                above = max((p for p in planned if order.index(p) < order.index(explain)), key=order.index)
                planned[above] = planned[above] + [explain]
        found = {cells[p]["id"]: [cells[a]["id"] for a in answers] for p, answers in predict_groups(cells, language).items()}
        assert found == planned, f"{notebook.name}: the site's Predicts differ from scripts/mark_answers.py's"
        page = page_notebook(notebook, language, _fake_manifests(notebook, cells), None)
        ids = [c["id"] for c in page["cells"]]
        for n, (predict, answers) in enumerate(sorted(found.items(), key=lambda kv: ids.index(kv[0]))):
            form = page["cells"][ids.index(predict) + 1]
            assert form["id"] == f"al-predict-{n}" and 'class="al-predict"' in form["source"]
            for answer in answers:
                cell = page["cells"][ids.index(answer)]
                if cell["cell_type"] == "markdown":  # the explanation, in a block the page hides with the output
                    assert cell["source"].startswith(f'<div class="al-explanation al-answer-{n}">')
                else:
                    assert {"answer", "al-answer", f"al-answer-{n}"} <= set(cell["metadata"]["tags"])
            forms += 1
        tagged = sum("al-answer" in c.get("metadata", {}).get("tags", []) for c in page["cells"])
        assert tagged == sum(len(a) for a in wanted.answers.values())
    assert forms >= 40, f"only {forms} Predicts with a form in the {language} edition"  # 50 today


def _fake_manifests(notebook, cells) -> dict:
    """A stand-in picture manifest for every explorer cell of a notebook (page_notebook needs one)."""
    fake = {"size": [1, 1], "frames": ["f.webp"], "states": [[]], "state_ui": [[]], "ui": [],
            "readout_names": [], "readouts": [[]], "controls": []}
    return {f"{notebook.stem}/{c['id']}": fake | {"key": f"{notebook.stem}/{c['id']}"} for c in cells
            if c["cell_type"] == "code"}


@pytest.mark.parametrize("language", ["en", "ko"])
def test_the_contents_page_maps_the_course_with_progress(language):
    from website.pages import index_markdown

    index = index_markdown(language, None)
    assert f"## {TEXT[language]['progress_title']}" in index and 'class="al-reset"' in index
    pages = re.findall(r'<li data-page="([^"]+)" data-total="(\d+)" data-exercises="(\d+)">', index)
    assert (f"{language}/05_masking", ) == tuple(p for p, _, _ in pages if p.endswith("05_masking"))
    assert len(pages) >= 12 and all(int(total) + int(checked) > 0 for _, total, checked in pages)
    assert sum(int(checked) for _, _, checked in pages) >= 30  # exercises checked on the page count too
    assert 'class="al-progress-exercises"' in index


@pytest.mark.parametrize("language", ["en", "ko"])
def test_every_figure_and_explorer_picture_has_alt_text_in_the_page_language(language):
    """A figure's alt text is its cell's titles (or a pointer to the text around it), numbered on the
    page, never a file name; an explorer's picture is described by the readouts of its position."""
    from website.pages import figure_alt, figure_titles

    assert figure_titles('ax.set_title("a"); fig.suptitle(f"b {x:.2f} c"); ax.set(title="d")') == ["a", "b … c", "d"]
    assert figure_alt("plt.plot(x)", range(3, 5), language).startswith(f"{TEXT[language]['figure']} 3–4: ")
    pictures = 0
    for notebook in edition_notebooks(language):
        cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
        page = page_notebook(notebook, language, _fake_manifests(notebook, cells), None)
        for cell in page["cells"]:
            if any("image/png" in o.get("data", {}) and "text/html" not in o.get("data", {})
                   for o in cell.get("outputs", [])):
                alt = cell["metadata"]["mystnb"]["image"]["alt"]
                assert alt.startswith(TEXT[language]["figure"] + " ") and ".png" not in alt
                pictures += 1
    assert pictures >= 40
    manifest = {"key": "a/b", "size": [1, 1], "frames": ["f.webp"], "states": [[]], "state_ui": [[]], "ui": [],
                "readout_names": ["entropy"], "readouts": [[[0, "0.261"]]], "controls": []}
    assert f'alt="{TEXT[language]["picture_alt"]}: entropy 0.261"'.replace("'", "&#x27;") in explorer_html(manifest, language, "")
