"""The static site's frames (website/frames.py) and pages (website/pages.py), without a browser.

The walk over an explorer's positions must follow the widgets as JupyterLab does (a slider whose
maximum follows another control), snap long sliders, and draw each position with the explorer's
own picture; a page must carry the explorer, the practice box and the exercise note.
"""

import io
import json

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
    assert TEXT[language]["exercises"] in text
    assert any("al-exercise" in c.get("metadata", {}).get("tags", []) for c in nb["cells"])


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
