"""The Korean edition, built from the English one: one source of code and outputs.

The English notebooks are the source. Korean prose is stored per notebook in
``i18n/ko/<notebook>.json``, keyed by the English cell's id together with a hash of the
English text it translates; checker messages in ``helpers/locale/ko.json``, keyed by their
English text. ``build`` writes ``notebooks/ko/`` from the English notebooks (code cells and
outputs copied, markdown replaced by its translation, checker feedback in outputs translated),
so no second execution is needed.

    python scripts/translations.py status             # what is missing, stale or orphaned
    python scripts/translations.py export -o work.json [--all] [--messages] [NOTEBOOK ...]
    #   ... fill in every "ko" of work.json ...
    python scripts/translations.py import work.json   # store them (with the English hash)
    python scripts/translations.py prune              # drop translations of deleted cells
    python scripts/translations.py build              # write notebooks/ko/ (fails if out of date)
    python scripts/translations.py build --check      # exit 1 if notebooks/ko/ is not up to date
    python scripts/translations.py build --only notebooks/03_scaling_sqrt_dk.ipynb   # preview one
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from helpers import i18n  # noqa: E402

LANG = "ko"
NOTEBOOKS = ROOT / "notebooks"
STORE = ROOT / "i18n" / LANG
EDITION = NOTEBOOKS / LANG
CATALOG = ROOT / "helpers" / "locale" / f"{LANG}.json"


def english_notebooks() -> list[Path]:
    """Every notebook of the English edition (chapters and solutions), in order."""
    return sorted(p for p in NOTEBOOKS.rglob("*.ipynb")
                  if EDITION not in p.parents and ".ipynb_checkpoints" not in p.parts)


def rel(path: Path) -> str:
    return path.relative_to(NOTEBOOKS).as_posix()


def store_path(notebook: Path) -> Path:
    return STORE / Path(rel(notebook)).with_suffix(".json")


def edition_path(notebook: Path) -> Path:
    return EDITION / rel(notebook)


def digest(text: str) -> str:
    """The hash a translation records of the English text it translates."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def load_store(notebook: Path) -> dict[str, dict]:
    path = store_path(notebook)
    return json.loads(path.read_text(encoding="utf-8"))["cells"] if path.exists() else {}


def save_store(notebook: Path, cells: dict[str, dict]) -> None:
    order = {cell.id: i for i, cell in enumerate(read(notebook).cells)}
    cells = dict(sorted(cells.items(), key=lambda kv: order.get(kv[0], len(order))))
    path = store_path(notebook)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps({"notebook": f"notebooks/{rel(notebook)}", "cells": cells}, ensure_ascii=False, indent=1)
    path.write_text(text + "\n", encoding="utf-8")


def read(notebook: Path) -> nbformat.NotebookNode:
    nb = nbformat.read(notebook, as_version=4)
    missing = [i for i, cell in enumerate(nb.cells) if not cell.get("id")]
    if missing:
        raise SystemExit(f"{rel(notebook)}: cells {missing} have no id (nbformat 4.5 ids are needed)")
    return nb


def prose_cells(nb: nbformat.NotebookNode) -> list:
    """The cells a translation replaces: every markdown cell with text."""
    return [cell for cell in nb.cells if cell.cell_type == "markdown" and cell.source.strip()]


@dataclass
class Problem:
    notebook: str
    cell: str
    kind: str  # missing, stale, orphan, untranslated-message, orphan-message, out-of-date
    text: str = ""

    def __str__(self) -> str:
        where = f"{self.notebook} cell {self.cell}" if self.cell else self.notebook
        first = self.text.strip().splitlines()[0][:70] if self.text.strip() else ""
        what = {
            "missing": "has no Korean translation",
            "stale": "changed in English after it was translated (stale)",
            "orphan": "is translated but no longer exists in English (orphan)",
            "untranslated-message": "checker message has no Korean translation",
            "orphan-message": "Korean checker message whose English no longer exists (orphan)",
            "out-of-date": "is not what `build` makes from the English notebook and the translations",
        }[self.kind]
        return f"{where} {what}" + (f": {first!r}" if first else "")


def prose_problems(notebook: Path) -> list[Problem]:
    nb, store = read(notebook), load_store(notebook)
    problems = []
    for cell in prose_cells(nb):
        entry = store.get(cell.id)
        if entry is None:
            problems.append(Problem(rel(notebook), cell.id, "missing", cell.source))
        elif entry["en_sha"] != digest(cell.source):
            problems.append(Problem(rel(notebook), cell.id, "stale", cell.source))
    ids = {cell.id for cell in prose_cells(nb)}
    problems += [Problem(rel(notebook), cid, "orphan", e["ko"]) for cid, e in store.items() if cid not in ids]
    return problems


def message_problems() -> list[Problem]:
    templates, table = i18n.message_templates(), load_catalog()
    problems = [Problem("helpers/exercises", "", "untranslated-message", t) for t in templates if not table.get(t)]
    problems += [Problem("helpers/locale/ko.json", "", "orphan-message", t) for t in table if t not in templates]
    return problems


def load_catalog() -> dict[str, str]:
    return json.loads(CATALOG.read_text(encoding="utf-8")) if CATALOG.exists() else {}


def save_catalog(table: dict[str, str]) -> None:
    order = {t: i for i, t in enumerate(i18n.message_templates())}
    table = dict(sorted(table.items(), key=lambda kv: order.get(kv[0], len(order))))
    CATALOG.parent.mkdir(parents=True, exist_ok=True)
    CATALOG.write_text(json.dumps(table, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    i18n.catalog.cache_clear()
    i18n._compiled.cache_clear()


def translate_outputs(cell) -> None:
    """Checker feedback in a code cell's printed output, in Korean (what the kernel prints in
    notebooks/ko/); every other output stays exactly as in English."""
    if "check(" not in cell.source:
        return
    for output in cell.get("outputs", []):
        if output.get("output_type") == "stream":
            lines = output["text"].split("\n")
            output["text"] = "\n".join(i18n.translate(line, LANG) for line in lines)


def build_one(notebook: Path) -> nbformat.NotebookNode:
    """The Korean twin of one English notebook."""
    nb, store = read(notebook), load_store(notebook)
    twin = copy.deepcopy(nb)
    for cell in twin.cells:
        if cell.cell_type == "markdown" and cell.source.strip():
            cell.source = store[cell.id]["ko"]
        elif cell.cell_type == "code":
            translate_outputs(cell)
    twin.metadata["attention_lab"] = {"edition": LANG, "translation_of": f"notebooks/{rel(notebook)}"}
    return twin


def serialise(nb: nbformat.NotebookNode) -> str:
    return nbformat.writes(nb) + "\n"


def all_problems(check_built: bool = True) -> list[Problem]:
    problems = [p for notebook in english_notebooks() for p in prose_problems(notebook)]
    problems += message_problems()
    known = {rel(n) for n in english_notebooks()}
    problems += [Problem(p.relative_to(STORE).with_suffix(".ipynb").as_posix(), "", "orphan")
                 for p in sorted(STORE.rglob("*.json")) if p.name != "glossary.json"
                 and p.relative_to(STORE).with_suffix(".ipynb").as_posix() not in known]
    problems += [Problem(f"ko/{p.relative_to(EDITION).as_posix()}", "", "orphan")
                 for p in sorted(EDITION.rglob("*.ipynb")) if p.relative_to(EDITION).as_posix() not in known]
    if check_built and not problems:
        for notebook in english_notebooks():
            path = edition_path(notebook)
            if not path.exists() or path.read_text(encoding="utf-8") != serialise(build_one(notebook)):
                problems.append(Problem(f"ko/{rel(notebook)}", "", "out-of-date"))
    return problems


def export(paths: list[Path], everything: bool) -> list[dict]:
    """Work items for a translator: each cell (and checker message) to translate, with its English."""
    items = []
    for notebook in paths:
        store = load_store(notebook)
        for cell in prose_cells(read(notebook)):
            entry = store.get(cell.id)
            state = "missing" if entry is None else "stale" if entry["en_sha"] != digest(cell.source) else "ok"
            if everything or state != "ok":
                items.append({"notebook": f"notebooks/{rel(notebook)}", "id": cell.id, "state": state,
                              "en": cell.source, "ko": entry["ko"] if entry else ""})
    if not paths or paths == english_notebooks():
        table = load_catalog()
        items += [{"message": t, "ko": table.get(t, "")} for t in i18n.message_templates()
                  if everything or not table.get(t)]
    return items


def import_items(items: list[dict]) -> list[str]:
    """Store filled-in work items; returns what was refused and why."""
    refused, table, by_notebook = [], load_catalog(), {}
    messages = {item["message"]: item["ko"] for item in items if "message" in item and item.get("ko", "").strip()}
    for item in items:
        if "message" in item or not item.get("ko", "").strip():
            continue
        by_notebook.setdefault(item["notebook"], []).append(item)
    for name, group in by_notebook.items():
        notebook = ROOT / name
        cells = {cell.id: cell for cell in prose_cells(read(notebook))}
        store = load_store(notebook)
        for item in group:
            cell = cells.get(item["id"])
            if cell is None:
                refused.append(f"{name} cell {item['id']}: no such markdown cell")
            elif cell.source != item["en"]:
                refused.append(f"{name} cell {item['id']}: the English changed since the export; export it again")
            else:
                store[item["id"]] = {"en_sha": digest(cell.source), "ko": item["ko"]}
        save_store(notebook, store)
    if messages:
        save_catalog(table | messages)
    return refused


def prune() -> int:
    removed = 0
    for notebook in english_notebooks():
        store = load_store(notebook)
        ids = {cell.id for cell in prose_cells(read(notebook))}
        kept = {cid: e for cid, e in store.items() if cid in ids}
        removed += len(store) - len(kept)
        if store_path(notebook).exists():
            save_store(notebook, kept)
    templates = set(i18n.message_templates())
    table = load_catalog()
    save_catalog({t: k for t, k in table.items() if t in templates})
    return removed + len(table) - len(templates & set(table))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("status")
    ex = sub.add_parser("export")
    ex.add_argument("notebooks", nargs="*", type=Path)
    ex.add_argument("-o", "--output", type=Path, required=True)
    ex.add_argument("--all", action="store_true", help="also cells whose translation is up to date")
    ex.add_argument("--messages", action="store_true", help="only the checker messages")
    im = sub.add_parser("import")
    im.add_argument("work", type=Path)
    sub.add_parser("prune")
    bu = sub.add_parser("build")
    bu.add_argument("--check", action="store_true")
    bu.add_argument("--only", nargs="+", type=Path, metavar="NOTEBOOK",
                    help="preview: build just these English notebooks' twins (their prose must be complete)")
    args = parser.parse_args(argv)

    if args.command == "export":
        paths = [p.resolve() for p in args.notebooks] or english_notebooks()
        items = export(paths, args.all)
        if args.messages:
            items = [item for item in items if "message" in item]
        args.output.write_text(json.dumps(items, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        print(f"{len(items)} items to translate -> {args.output}")
        return 0
    if args.command == "import":
        refused = import_items(json.loads(args.work.read_text(encoding="utf-8")))
        print("\n".join(refused) or "stored")
        return 1 if refused else 0
    if args.command == "prune":
        print(f"removed {prune()} translations of cells or messages that no longer exist")
        return 0
    problems = all_problems(check_built=args.command == "status" or args.check)
    if args.command == "build" and args.only:
        for notebook in (p.resolve() for p in args.only):
            gaps = [p for p in prose_problems(notebook) if p.kind != "orphan"]
            if gaps:
                print("\n".join(str(p) for p in gaps))
                return 1
            edition_path(notebook).parent.mkdir(parents=True, exist_ok=True)
            edition_path(notebook).write_text(serialise(build_one(notebook)), encoding="utf-8")
            print(f"built ko/{rel(notebook)}")
        return 0
    if args.command == "build" and not args.check:
        if problems:
            print("cannot build the Korean edition:\n" + "\n".join(f"  {p}" for p in problems))
            return 1
        for notebook in english_notebooks():
            path = edition_path(notebook)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(serialise(build_one(notebook)), encoding="utf-8")
        print(f"built {len(english_notebooks())} Korean notebooks in {EDITION.relative_to(ROOT)}/")
        return 0
    print("\n".join(str(p) for p in problems) or "the Korean edition is complete and up to date")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
