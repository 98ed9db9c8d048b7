"""The Korean edition, built from the English one: one source of code.

The English notebooks are the source. Korean text is stored per notebook in
``i18n/ko/<notebook>.json``, keyed by the English cell's id together with a hash of the
English text it translates: every markdown cell, and each code cell whose comments or
strings a learner reads (the Korean code cell is the English one with only its comments and
string literals translated; tests/test_korean.py proves it). What ``helpers`` says (checker
feedback, figure text, widget labels, errors) is in ``helpers/locale/ko.json``, keyed by its
English text. ``build`` writes the SOURCES of ``notebooks/ko/`` from the English notebooks
(markdown and code replaced by their translations, cell ids kept; a code cell without a
translation is copied); a cell whose source is unchanged keeps its outputs, the others are
left unexecuted, and ``make notebooks`` executes the Korean edition itself.

A notebook whose store says ``"code": "complete"`` must have a translation for every code cell
with comments or people-facing strings; in the others such cells are listed by ``status`` as
"code to translate", and stay English until someone translates them.

    python scripts/translations.py status             # what is missing, stale or orphaned
    python scripts/translations.py export -o work.json [--all] [--messages] [NOTEBOOK ...]
    #   ... fill in every "ko" of work.json ...
    python scripts/translations.py import work.json   # store them (with the English hash)
    python scripts/translations.py prune              # drop translations of deleted cells
    python scripts/translations.py build              # write notebooks/ko/ (fails if out of date)
    python scripts/translations.py build --check      # exit 1 if notebooks/ko/ is not up to date
    python scripts/translations.py build --only notebooks/03_scaling_sqrt_dk.ipynb   # these twins only
    python scripts/translations.py export -o work.json --code notebooks/04_self_attention_qkv.ipynb
    #   ... the code cells of 04 that have comments or strings to translate, with their English
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import io
import json
import re
import sys
import tokenize
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


def load_file(notebook: Path) -> dict:
    path = store_path(notebook)
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {"cells": {}}


def load_store(notebook: Path) -> dict[str, dict]:
    return load_file(notebook)["cells"]


def code_complete(notebook: Path) -> bool:
    """Whether every code cell of this notebook that needs a translation must have one."""
    return load_file(notebook).get("code") == "complete"


def save_store(notebook: Path, cells: dict[str, dict]) -> None:
    order = {cell.id: i for i, cell in enumerate(read(notebook).cells)}
    cells = dict(sorted(cells.items(), key=lambda kv: order.get(kv[0], len(order))))
    path = store_path(notebook)
    path.parent.mkdir(parents=True, exist_ok=True)
    head = {"notebook": f"notebooks/{rel(notebook)}"}
    if code_complete(notebook):
        head["code"] = "complete"
    text = json.dumps(head | {"cells": cells}, ensure_ascii=False, indent=1)
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


MARKER_COMMENT = re.compile(r"#\s*(NBVAL_\w+|noqa\b|type:\s*ignore)")  # comments for tools, not people


def python_source(code: str) -> str:
    """A code cell's source as plain Python: IPython magics (!cmd, %magic) become ``pass``."""
    return "\n".join(re.sub(r"^(\s*)[!%].*$", r"\1pass", line) for line in code.split("\n"))


def words_to_translate(code: str) -> list[str]:
    """The comments and strings of a code cell that a learner reads: every comment but a
    tool's marker (# NBVAL_..., # noqa), and every string with two English words."""
    found = []
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(python_source(code)).readline))
    except (tokenize.TokenError, SyntaxError):
        return [code]
    for tok in tokens:
        if tok.type == tokenize.COMMENT and not MARKER_COMMENT.match(tok.string):
            found.append(tok.string)
        elif tok.type == tokenize.STRING and re.search(r"[A-Za-z]{2,}\W+[A-Za-z]{2,}", tok.string):
            found.append(tok.string)
    return found


def code_cells(nb: nbformat.NotebookNode) -> list:
    """The code cells with something to translate."""
    return [cell for cell in nb.cells if cell.cell_type == "code" and words_to_translate(cell.source)]


def translatable_cells(nb: nbformat.NotebookNode) -> list:
    """Cells a translation may replace: markdown with text, and code with something to translate."""
    return [cell for cell in nb.cells if cell.cell_type == "markdown" and cell.source.strip()
            or cell.cell_type == "code" and words_to_translate(cell.source)]


@dataclass
class Problem:
    notebook: str
    cell: str
    kind: str  # missing, stale, orphan, code-to-translate, untranslated-message, orphan-message, out-of-date
    text: str = ""

    def __str__(self) -> str:
        where = f"{self.notebook} cell {self.cell}" if self.cell else self.notebook
        first = self.text.strip().splitlines()[0][:70] if self.text.strip() else ""
        what = {
            "missing": "has no Korean translation",
            "stale": "changed in English after it was translated (stale)",
            "orphan": "is translated but no longer exists in English (orphan)",
            "code-to-translate": "is a code cell whose comments and strings are still English",
            "untranslated-message": "message has no Korean translation",
            "orphan-message": "Korean message whose English no longer exists (orphan)",
            "out-of-date": "is not what `build` makes from the English notebook and the translations",
        }[self.kind]
        return f"{where} {what}" + (f": {first!r}" if first else "")


def prose_problems(notebook: Path) -> list[Problem]:
    """What keeps this notebook's Korean twin from being built: a markdown cell (or, in a
    notebook whose code is complete, a code cell) without a current translation, a stale code
    translation, a translation of a cell that is gone. "code-to-translate" is only a note."""
    nb, store = read(notebook), load_store(notebook)
    problems = []
    code_required = code_complete(notebook)
    for cell in translatable_cells(nb):
        entry = store.get(cell.id)
        if entry is None and cell.cell_type == "code":
            kind = "missing" if code_required else "code-to-translate"
            problems.append(Problem(rel(notebook), cell.id, kind, cell.source))
        elif entry is None:
            problems.append(Problem(rel(notebook), cell.id, "missing", cell.source))
        elif entry["en_sha"] != digest(cell.source):
            problems.append(Problem(rel(notebook), cell.id, "stale", cell.source))
    ids = {cell.id for cell in nb.cells if cell.cell_type == "code" or cell.source.strip()}
    problems += [Problem(rel(notebook), cid, "orphan", e["ko"]) for cid, e in store.items() if cid not in ids]
    return problems


def blocking(problems: list[Problem]) -> list[Problem]:
    return [p for p in problems if p.kind != "code-to-translate"]


def message_problems() -> list[Problem]:
    templates, table = i18n.message_templates(), load_catalog()
    problems = [Problem("helpers", "", "untranslated-message", t) for t in templates if not table.get(t)]
    problems += [Problem("helpers/locale/ko.json", "", "orphan-message", t) for t in table if t not in templates]
    return problems


def load_catalog() -> dict[str, str]:
    return json.loads(CATALOG.read_text(encoding="utf-8")) if CATALOG.exists() else {}


def save_catalog(table: dict[str, str]) -> None:
    order = {t: i for i, t in enumerate(i18n.message_templates())}
    table = dict(sorted(table.items(), key=lambda kv: order.get(kv[0], len(order))))
    CATALOG.parent.mkdir(parents=True, exist_ok=True)
    CATALOG.write_text(json.dumps(table, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    i18n.reload()


RUN_STATE = ("execution_count", "outputs")  # what executing a notebook writes into a code cell
LANGUAGE_CALL = 'helpers.set_language("{}")'  # every notebook's first code cell says its language


def build_one(notebook: Path) -> nbformat.NotebookNode:
    """The Korean twin of one English notebook, sources only: each cell's translation where
    there is one (code without one is copied), ids kept, no outputs."""
    nb, store = read(notebook), load_store(notebook)
    twin = copy.deepcopy(nb)
    for cell in twin.cells:
        entry = store.get(cell.id)
        if cell.cell_type == "markdown" and cell.source.strip():
            cell.source = entry["ko"]
        elif cell.cell_type == "code":
            if entry is not None:
                cell.source = entry["ko"]
            cell.source = cell.source.replace(LANGUAGE_CALL.format("en"), LANGUAGE_CALL.format(LANG))
            cell.execution_count, cell.outputs = None, []
            cell.metadata.pop("execution", None)
    twin.metadata["attention_lab"] = {"edition": LANG, "translation_of": f"notebooks/{rel(notebook)}"}
    return twin


def with_outputs_kept(twin: nbformat.NotebookNode, path: Path) -> nbformat.NotebookNode:
    """``twin`` with the outputs of the Korean notebook at ``path`` for every cell whose source
    did not change (executing the edition is ``make notebooks``' job, not ``build``'s)."""
    if not path.exists():
        return twin
    executed = nbformat.read(path, as_version=4)
    old = {cell.get("id"): cell for cell in executed.cells}
    for cell in twin.cells:
        before = old.get(cell.id)
        if cell.cell_type == "code" and before is not None and before.source == cell.source:
            cell.execution_count, cell.outputs = before.execution_count, before.outputs
            if "execution" in before.metadata:
                cell.metadata["execution"] = before.metadata["execution"]
    for key in ("language_info", "widgets"):  # written by execution
        if key in executed.metadata:
            twin.metadata[key] = executed.metadata[key]
    return twin


def skeleton(nb: nbformat.NotebookNode) -> dict:
    """A notebook without what execution writes: what ``build`` decides."""
    cells = [{key: value for key, value in cell.items() if key not in RUN_STATE}
             | {"metadata": {k: v for k, v in cell.metadata.items() if k != "execution"}} for cell in nb.cells]
    metadata = {k: v for k, v in nb.metadata.items() if k not in ("language_info", "widgets")}
    return {"cells": cells, "metadata": metadata, "nbformat": nb.nbformat, "nbformat_minor": nb.nbformat_minor}


def write_twin(notebook: Path) -> Path:
    path = edition_path(notebook)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(serialise(with_outputs_kept(build_one(notebook), path)), encoding="utf-8")
    return path


def serialise(nb: nbformat.NotebookNode) -> str:
    return nbformat.writes(nb) + "\n"


def all_problems(check_built: bool = True) -> list[Problem]:
    """Everything that is missing, stale or orphaned, the notes of code still to translate, and
    (when nothing blocks the build) every Korean notebook whose sources are not what ``build``
    makes. Outputs are not compared: they come from executing the edition (nbval checks them)."""
    problems = [p for notebook in english_notebooks() for p in prose_problems(notebook)]
    problems += message_problems()
    known = {rel(n) for n in english_notebooks()}
    problems += [Problem(p.relative_to(STORE).with_suffix(".ipynb").as_posix(), "", "orphan")
                 for p in sorted(STORE.rglob("*.json")) if p.name != "glossary.json"
                 and p.relative_to(STORE).with_suffix(".ipynb").as_posix() not in known]
    problems += [Problem(f"ko/{p.relative_to(EDITION).as_posix()}", "", "orphan")
                 for p in sorted(EDITION.rglob("*.ipynb")) if p.relative_to(EDITION).as_posix() not in known]
    if check_built and not blocking(problems):
        for notebook in english_notebooks():
            path = edition_path(notebook)
            if not path.exists() or skeleton(nbformat.read(path, as_version=4)) != skeleton(build_one(notebook)):
                problems.append(Problem(f"ko/{rel(notebook)}", "", "out-of-date"))
    return problems


def export(paths: list[Path], everything: bool, code: bool = False) -> list[dict]:
    """Work items for a translator: each cell (and helpers message) to translate, with its
    English; code cells only with ``code`` (or when their notebook's code is complete, or when
    their translation is stale). For a code cell without a translation, "ko" starts as the
    English code: translate its comments and strings, change nothing else."""
    items = []
    for notebook in paths:
        store = load_store(notebook)
        wanted = code or code_complete(notebook)
        for cell in translatable_cells(read(notebook)):
            entry = store.get(cell.id)
            state = "missing" if entry is None else "stale" if entry["en_sha"] != digest(cell.source) else "ok"
            if cell.cell_type == "code" and not wanted and state != "stale":
                continue
            if everything or state != "ok":
                start = entry["ko"] if entry else cell.source if cell.cell_type == "code" else ""
                items.append({"notebook": f"notebooks/{rel(notebook)}", "id": cell.id, "type": cell.cell_type,
                              "state": state, "en": cell.source, "ko": start})
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
        cells = {cell.id: cell for cell in translatable_cells(read(notebook))}
        store = load_store(notebook)
        for item in group:
            cell = cells.get(item["id"])
            if cell is None:
                refused.append(f"{name} cell {item['id']}: no such cell with text to translate")
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
        ids = {cell.id for cell in translatable_cells(read(notebook))}
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
    ex.add_argument("--messages", action="store_true", help="only the helpers messages")
    ex.add_argument("--code", action="store_true", help="also the code cells still to translate")
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
        items = export(paths, args.all, args.code)
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
    if args.command == "build" and args.only:
        return build_only([p.resolve() for p in args.only])
    problems = all_problems(check_built=args.command == "status" or args.check)
    if args.command == "build" and not args.check:
        if blocking(problems):
            print("cannot build the Korean edition:\n" + "\n".join(f"  {p}" for p in blocking(problems)))
            return 1
        for notebook in english_notebooks():
            write_twin(notebook)
        print(f"built {len(english_notebooks())} Korean notebooks in {EDITION.relative_to(ROOT)}/ "
              "(sources; `make notebooks` executes them)")
        return 0
    notes = [p for p in problems if p.kind == "code-to-translate"]
    print("\n".join(str(p) for p in blocking(problems)) or "the Korean edition is complete and up to date")
    if notes and args.command == "status":
        counts: dict[str, int] = {}
        for p in notes:
            counts[p.notebook] = counts.get(p.notebook, 0) + 1
        print("code cells still in English (not an error): "
              + ", ".join(f"{name} {n}" for name, n in counts.items()))
    return 1 if blocking(problems) else 0


def build_only(notebooks: list[Path]) -> int:
    """Build the twins of these English notebooks (``make notebooks NB=...``): print the path of
    each twin written, one a line, for the caller to execute; say on stderr which could not be
    built and why (exit 1). Korean notebooks given are printed as they are."""
    status = 0
    for notebook in notebooks:
        if EDITION in notebook.parents:
            print(notebook.relative_to(ROOT))
            continue
        gaps = blocking([p for p in prose_problems(notebook) if p.kind != "orphan"])
        if gaps:
            print(f"not built: ko/{rel(notebook)}\n" + "\n".join(f"  {p}" for p in gaps), file=sys.stderr)
            status = 1
            continue
        print(write_twin(notebook).relative_to(ROOT))
    return status


if __name__ == "__main__":
    sys.exit(main())
