"""The explorers work in Jupyter Notebook 7 (the `notebook` package) too, not only in JupyterLab:
notebook 03 run there, the saturation explorer's d_k slider set to three values, and the
picture and readouts must change each time."""

from __future__ import annotations

from e2e import lab_page

NOTEBOOK = "03_scaling_sqrt_dk.ipynb"


def test_saturation_explorer_follows_its_d_k_slider_in_notebook7(nb7_page, notebook7, out_dir):
    page = nb7_page
    lab_page.open_notebook(page, notebook7, NOTEBOOK)
    seconds = lab_page.run_all(page)
    print(f"\nNotebook 7, {NOTEBOOK}: Run All took {seconds:.1f} s")
    assert not lab_page.problems(page), "\n".join(lab_page.problems(page))
    assert not lab_page.unrun_cells(page), f"code cells {lab_page.unrun_cells(page)} did not run"

    views = lab_page.explorers(page)
    assert views, "no live explorer after Run All in Notebook 7"
    explorer = views[0]
    explorer.scroll_into_view_if_needed()
    sliders = [c for c in lab_page.controls(explorer) if c.kind == "slider" and "d_k" in c.label]
    assert sliders, f"no d_k slider among {[str(c) for c in lab_page.controls(explorer)]}"
    # Notebook 7 keeps the keyboard focus on the active cell (arrow keys never reach a slider's
    # handle), so the d_k values are typed into the slider's readout box.
    for step, d_k in enumerate(["256", "16", "1024"]):
        before = lab_page.snapshot(explorer)
        lab_page.type_slider_value(sliders[0], d_k)
        after = lab_page.wait_for_new_picture(explorer, before)
        assert [p["digest"] for p in after["pictures"]] != [p["digest"] for p in before["pictures"]], \
            f"step {step + 1}: the picture did not change"
        after = lab_page.wait_for_new_readouts(explorer, before)
        assert after["readouts"] != before["readouts"], f"step {step + 1}: the readouts did not change"
    explorer.screenshot(path=str(out_dir / "notebook7_03.explorer1.png"))
    assert not lab_page.problems(page), "\n".join(lab_page.problems(page))
