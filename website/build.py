"""``make site``: both editions as a static site in ``build/site/``, every explorer live.

1. Explorers: for each language and explorer cell, its pictures and manifest
   (``website.frames``), drawn in worker processes (one language per process, as the helpers
   keep per-process caches). Cached in ``build/site-cache/explorers/`` under a fingerprint of
   everything that draws them: ``helpers/`` and ``data/``, the cell's source, ``website/frames.py``
   and the drawing libraries' versions. Editing a notebook's prose or another cell redraws nothing.
2. Sources: ``build/site-cache/src/<lang>/``, the edition's notebooks made into pages
   (``website.pages``); a file is rewritten only when it changes, so Sphinx re-reads only it.
3. Sphinx (myst-nb, nothing executed) builds both editions in parallel into
   ``build/site/en`` and ``build/site/ko``.
4. The pictures, the notebooks to download, MathJax (from the ``sphinx-mathjax-offline`` package),
   the data of the exercises checked on their pages (``website.checks``, cached in
   ``build/site-cache/checks/``) and a language chooser at ``build/site/index.html`` complete the site.

Nothing is fetched: the toolchain is ``requirements-site.txt``, installed from PyPI.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata
import json
import multiprocessing
import os
import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / "build"
SITE = BUILD / "site"
CACHE = BUILD / "site-cache"
LIBRARIES = ("matplotlib", "numpy", "torch", "pillow", "ipywidgets", "safetensors")
MATHJAX_KEEP = ("tex-chtml.js", "output/chtml", "input/tex/extensions", "a11y/assistive-mml.js",
                "ui", "adaptors")
# Rough drawing time per explorer (s, one core), to share the work between processes.
WEIGHT = {"11_tiny_vla": 30.0, "03_scaling_sqrt_dk": 8.0, "05_masking": 7.0, "01_dot_product": 5.0}


def _hash_files(digest, paths) -> None:
    for path in sorted(paths):
        digest.update(path.relative_to(ROOT).as_posix().encode())
        digest.update(path.read_bytes())


def drawing_fingerprint() -> str:
    """What every explorer's pictures depend on, besides its own cell and language."""
    digest = hashlib.sha256()
    _hash_files(digest, [p for p in (ROOT / "helpers").rglob("*") if p.is_file() and p.suffix in (".py", ".json")])
    _hash_files(digest, [p for p in (ROOT / "data").rglob("*") if p.is_file()])
    _hash_files(digest, [ROOT / "website" / "frames.py"])
    for library in LIBRARIES:
        digest.update(f"{library}=={importlib.metadata.version(library)}".encode())
    return digest.hexdigest()


def explorer_jobs(language: str) -> list[tuple[Path, str, str]]:
    """(notebook, cell id, cell source) of every explorer cell in the edition."""
    from helpers.explorers.registry import explorer_cells
    from website.pages import edition_notebooks

    jobs = []
    for notebook in edition_notebooks(language):
        for cell in explorer_cells(notebook):
            jobs.append((notebook, cell["id"], "".join(cell["source"])))
    return jobs


def _render_group(language: str, items: list[tuple[str, str, str]]) -> list[str]:
    """Worker: draw the explorers ``items`` ((notebook, cell id, cache folder)) in ``language``."""
    import torch

    torch.set_num_threads(1)
    from website.frames import render

    done = []
    for notebook, cell_id, folder in items:
        target = Path(folder)
        partial = target.with_name(target.name + ".partial")
        shutil.rmtree(partial, ignore_errors=True)
        manifest = render(Path(notebook), cell_id, language, partial)
        shutil.rmtree(target, ignore_errors=True)
        partial.rename(target)
        done.append(f"{language} {manifest['key']}: {len(manifest['states'])} positions, "
                    f"{len(set(manifest['frames']))} pictures, {manifest['seconds']['walk'] + manifest['seconds']['draw']:.1f} s")
    return done


def _share(items: list, workers: int) -> list[list]:
    """Split items (first element a notebook path) into ``workers`` groups of similar weight."""
    groups: list[list] = [[] for _ in range(workers)]
    loads = [0.0] * workers
    for item in sorted(items, key=lambda it: -WEIGHT.get(Path(it[0]).stem, 2.0)):
        i = loads.index(min(loads))
        groups[i].append(item)
        loads[i] += WEIGHT.get(Path(item[0]).stem, 2.0)
    return [g for g in groups if g]


def build_explorers(languages: list[str], workers: int) -> tuple[dict[str, dict[str, dict]], dict[str, dict[str, Path]]]:
    """Every explorer's manifest per language, drawing only what the cache lacks."""
    from website.frames import SLOWEST_FIRST, SNAP

    base = drawing_fingerprint()
    todo: dict[str, list] = {lang: [] for lang in languages}
    folders: dict[str, dict[str, Path]] = {lang: {} for lang in languages}
    for lang in languages:
        for notebook, cell_id, source in explorer_jobs(lang):
            key = f"{notebook.stem}/{cell_id}"
            settings = json.dumps([SNAP.get(key), SLOWEST_FIRST.get(key)], default=list)
            fp = hashlib.sha256(f"{base}|{lang}|{source}|{settings}".encode()).hexdigest()[:16]
            folder = CACHE / "explorers" / lang / key.replace("/", "-") / fp
            folders[lang][key] = folder
            if not (folder / "manifest.json").exists():
                for old in folder.parent.glob("*"):  # earlier fingerprints of this explorer
                    shutil.rmtree(old, ignore_errors=True)
                todo[lang].append((str(notebook), cell_id, str(folder)))
    groups = []
    busy = [lang for lang in languages if todo[lang]]
    for lang in busy:  # one language per process; a lone language gets every worker
        share = max(1, workers // len(busy)) if len(busy) < workers else 1
        groups += [(lang, group) for group in _share(todo[lang], share)]
    if groups:
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=min(workers, len(groups)), mp_context=context,
                                 max_tasks_per_child=1) as pool:
            for lines in pool.map(_render_group, *zip(*groups, strict=True)):
                for line in lines:
                    print("  drew", line, flush=True)
    return {lang: {key: json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
                   for key, folder in folders[lang].items()} for lang in languages}, folders


def prepare_mathjax() -> None:
    """A subset of the MathJax 3 that ``sphinx-mathjax-offline`` ships, under _static/mathjax."""
    target = CACHE / "mathjax" / "mathjax"
    if (target / "tex-chtml.js").exists():
        return
    files = importlib.metadata.files("sphinx-mathjax-offline") or []
    source = next(Path(f.locate()) for f in files if f.name == "tex-chtml.js").parent
    staging = target.with_name("mathjax.partial")
    shutil.rmtree(staging, ignore_errors=True)
    for keep in MATHJAX_KEEP:
        path = source / keep
        if path.is_dir():
            shutil.copytree(path, staging / keep)
        else:
            (staging / keep).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, staging / keep)
    staging.rename(target)


def run_sphinx(languages: list[str]) -> None:
    """Both editions at once, one process each."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), SITE_CACHE=str(CACHE))
    procs = {}
    for lang in languages:
        cmd = [sys.executable, "-m", "sphinx", "-b", "html", "-q", "-d", str(CACHE / f"doctrees-{lang}"),
               str(CACHE / "src" / lang), str(SITE / lang)]
        procs[lang] = subprocess.Popen(cmd, env=env, cwd=ROOT)
    failed = [lang for lang, proc in procs.items() if proc.wait() != 0]
    if failed:
        raise SystemExit(f"sphinx failed for {failed}")


def _link_or_copy(source: Path, target: Path) -> None:
    if target.exists():
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def publish_assets(languages: list[str], folders: dict[str, dict[str, Path]]) -> None:
    """Pictures and manifests into <lang>/_explorers/, notebooks into <lang>/notebooks/."""
    from website.pages import docname, edition_notebooks, explorer_dir

    for lang in languages:
        root = SITE / lang
        wanted = set()
        for key, folder in folders[lang].items():
            target = root / explorer_dir(key)
            wanted.add(target.name)
            if target.exists() and (target / ".fingerprint").exists() and (target / ".fingerprint").read_text() == folder.name:
                continue
            shutil.rmtree(target, ignore_errors=True)
            for path in folder.rglob("*"):
                if path.is_file():
                    _link_or_copy(path, target / path.relative_to(folder))
            (target / ".fingerprint").write_text(folder.name)
        for stale in (root / "_explorers").glob("*"):
            if stale.name not in wanted:
                shutil.rmtree(stale)
        for notebook in edition_notebooks(lang):
            target = root / "notebooks" / f"{docname(notebook, lang)}.ipynb"
            if not target.exists() or target.read_bytes() != notebook.read_bytes():
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(notebook, target)
    (SITE / ".nojekyll").write_text("")
    (SITE / "index.html").write_text(LANDING, encoding="utf-8")


LANDING = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Attention Lab</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="en/_static/favicon.svg">
<script>
if (!location.hash && !sessionStorage.getItem("al-chose")) {
  location.replace(((navigator.language || "").toLowerCase().startsWith("ko") ? "ko" : "en") + "/index.html");
}
</script>
<style>body{font-family:sans-serif;max-width:36rem;margin:4rem auto;line-height:1.6}</style>
</head><body>
<h1>Attention Lab</h1>
<p><a href="en/index.html" hreflang="en">English</a> · <a href="ko/index.html" hreflang="ko" lang="ko">한국어</a></p>
</body></html>
"""


def repository_url() -> str | None:
    """The GitHub repository the site is built from, as https://github.com/OWNER/NAME: the
    ``SITE_REPOSITORY`` setting (the Pages workflow passes its own repository), else this clone's
    ``origin`` remote; None when neither names a GitHub repository (the pages then say so)."""
    setting = os.environ.get("SITE_REPOSITORY", "").strip()
    url = setting
    if not url:
        found = subprocess.run(["git", "remote", "get-url", "origin"], cwd=ROOT, capture_output=True, text=True)
        url = found.stdout.strip() if found.returncode == 0 else ""
    url = re.sub(r"^(?:git@|ssh://git@)github\.com[:/]", "https://github.com/", url)
    match = re.match(r"^https://github\.com/([^/\s]+/[^/\s]+?)(?:\.git)?/?$", url)
    if setting and not match:
        raise SystemExit(f"SITE_REPOSITORY must be a https://github.com/OWNER/NAME URL, got {setting!r}")
    return f"https://github.com/{match.group(1)}" if match else None


def site_size() -> tuple[int, int]:
    files = [p for p in SITE.rglob("*") if p.is_file()]
    return sum(p.stat().st_size for p in files), len(files)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--languages", nargs="+", default=["en", "ko"], choices=["en", "ko"])
    parser.add_argument("--jobs", type=int, default=2, help="worker processes for the pictures (default 2)")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from website.pages import write_sources

    repository = repository_url()
    print(f"  repository: {repository or 'none (no SITE_REPOSITORY, no GitHub remote): the pages say so'}",
          flush=True)
    start = time.perf_counter()
    manifests, folders = build_explorers(args.languages, args.jobs)
    drawn = time.perf_counter()
    for lang in args.languages:
        changed = write_sources(lang, CACHE / "src" / lang, manifests[lang], repository)
        print(f"  {lang}: {len(changed)} page sources changed", flush=True)
    prepare_mathjax()
    run_sphinx(args.languages)
    publish_assets(args.languages, folders)
    from website.checks import publish as publish_checks

    checked = publish_checks(SITE, args.languages, CACHE / "checks")
    (SITE / "site.json").write_text(json.dumps({"repository": repository}) + "\n", encoding="utf-8")
    size, count = site_size()
    pictures = sum(len(set(m["frames"])) for lang in manifests.values() for m in lang.values())
    positions = sum(len(m["states"]) for lang in manifests.values() for m in lang.values())
    explorers = sum(len(lang) for lang in manifests.values())
    print(f"site: {SITE.relative_to(ROOT)}/ ({', '.join(args.languages)}), {size / 1e6:.1f} MB in {count} files; "
          f"{explorers} explorers, {positions} positions, {pictures} pictures, {checked} exercises checked on their pages; "
          f"explorers {drawn - start:.1f} s, total {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
