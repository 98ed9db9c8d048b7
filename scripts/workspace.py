"""The learner's own copy of the notebooks: ``my-work/``, git-ignored, never overwritten.

``make lab`` runs ``sync`` before it starts JupyterLab on ``my-work/``. ``sync`` copies every
tracked notebook of both editions (``notebooks/**/*.ipynb``) that has no copy yet, with the same
layout (``my-work/03_scaling_sqrt_dk.ipynb``, ``my-work/ko/...``, ``my-work/solutions/...``), so
relative links, ``solutions/`` and the Korean edition's folder keep working. It never touches a
copy that is there. For each copy it records in ``my-work/.workspace.json`` a hash of the cell
sources of the tracked notebook it came from; when the tracked notebook's sources change (a
``git pull`` brought a newer version), ``sync`` names that chapter and the command to restart it.

``restart 03`` (``make restart NB=03``) renames the learner's copy to a dated name
(``03_scaling_sqrt_dk.old-2026-11-28T0312.ipynb``, never deleted) and copies the fresh one.

    python scripts/workspace.py sync [--edition ko]
    python scripts/workspace.py restart 03 | ko/03 | solutions/03 | 03_scaling_sqrt_dk
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TRACKED = ROOT / "notebooks"
WORK = ROOT / "my-work"
MANIFEST = ".workspace.json"  # inside the learner folder; a dot file JupyterLab does not list
EDITIONS = ("en", "ko")


def tracked_notebooks(tracked: Path) -> list[str]:
    """Every tracked notebook, as a path relative to ``tracked`` ("ko/03_....ipynb")."""
    return sorted(
        path.relative_to(tracked).as_posix()
        for path in tracked.rglob("*.ipynb")
        if ".ipynb_checkpoints" not in path.parts
    )


def source_hash(path: Path) -> str:
    """A hash of a notebook's cell types and sources: the version of the text a learner reads.
    Outputs, execution counts and metadata do not count, so re-executing a notebook unchanged
    is not a new version."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    sources = [[cell["cell_type"], "".join(cell["source"])] for cell in cells]
    return hashlib.sha256(json.dumps(sources, ensure_ascii=False).encode("utf-8")).hexdigest()


def read_manifest(work: Path) -> dict[str, dict]:
    """What the manifest says of each copy: {relative path: {"source_hash", "copied"}}."""
    path = work / MANIFEST
    if not path.exists():
        return {}
    return json.loads(path.read_text(encoding="utf-8"))["notebooks"]


def write_manifest(work: Path, entries: dict[str, dict]) -> None:
    """Save the manifest, sorted so that it reads well."""
    body = {"about": "which tracked notebook each copy came from (scripts/workspace.py)",
            "notebooks": dict(sorted(entries.items()))}
    (work / MANIFEST).write_text(json.dumps(body, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def now() -> str:
    """The date and time to the minute, as a record and a dated name show it."""
    return datetime.now().strftime("%Y-%m-%dT%H%M")


def copy_fresh(name: str, tracked: Path, work: Path, entries: dict[str, dict]) -> None:
    """Copy tracked notebook ``name`` to ``work/name`` (which must not exist) and record it."""
    target = work / name
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(tracked / name, target)
    entries[name] = {"source_hash": source_hash(tracked / name), "copied": now()}


def copy_missing(tracked: Path, work: Path) -> list[str]:
    """Copy every tracked notebook that has no copy in ``work`` yet; return their names.
    A copy that is there is never written to."""
    entries = read_manifest(work)
    copied = [name for name in tracked_notebooks(tracked) if not (work / name).exists()]
    for name in copied:
        copy_fresh(name, tracked, work, entries)
    if copied or not (work / MANIFEST).exists():
        work.mkdir(parents=True, exist_ok=True)
        write_manifest(work, entries)
    return copied


def newer_in_series(tracked: Path, work: Path) -> list[str]:
    """The copies whose tracked notebook has changed since they were copied. A copy the
    manifest does not know (made by hand, or the manifest was deleted) is not reported."""
    entries = read_manifest(work)
    return [
        name
        for name in tracked_notebooks(tracked)
        if name in entries and (work / name).exists()
        and entries[name]["source_hash"] != source_hash(tracked / name)
    ]


def edition(name: str) -> str:
    """"ko" for a notebook of the Korean edition, else "en"."""
    return "ko" if name.startswith("ko/") else "en"


def short_name(name: str) -> str:
    """What ``restart`` accepts for a notebook: its path without the suffix and the words
    after the number ("ko/solutions/03")."""
    folder, _, file = name.rpartition("/")
    number = file.split("_", 1)[0]
    return f"{folder}/{number}" if folder else number


NOTE = {  # what sync prints, in the edition's language
    "en": {
        "where": "Your work lives in {work}/ (git-ignored: `git pull` never changes it).",
        "copied": "Copied {n} notebook(s) you did not have yet.",
        "newer": "The series has a newer version of these; your copy stays as you left it:",
        "restart": "make restart keeps your copy, renamed <name>.old-<date>.ipynb, beside the fresh one.",
        "others": "({n} notebook(s) of the Korean edition also have a newer version: make lab LANG=ko lists them.)",
    },
    "ko": {
        "where": "내 작업은 {work}/에 있습니다 (git이 무시하는 폴더라 `git pull`이 건드리지 않습니다).",
        "copied": "아직 없던 노트북 {n}개를 복사했습니다.",
        "newer": "시리즈에 다음 노트북의 새 버전이 있습니다. 내 사본은 그대로 둡니다:",
        "restart": "make restart는 내 사본의 이름을 <이름>.old-<날짜>.ipynb로 바꿔 새 사본 옆에 남겨 둡니다.",
        "others": "(영어판 노트북 {n}개에도 새 버전이 있습니다: make lab LANG=en에서 보입니다.)",
    },
}


def note(copied: list[str], newer: list[str], work: Path, language: str = "en") -> str:
    """The few lines ``make lab`` prints, in the edition's language: where the work lives, what
    was copied, and which notebooks of the learner's edition have a newer version (the other
    edition's only counted)."""
    say = NOTE[language]
    lines = [say["where"].format(work=work.name)]
    if copied:
        lines.append(say["copied"].format(n=len(copied)))
    mine = [name for name in newer if edition(name) == language]
    if mine:
        lines.append(say["newer"])
        width = max(len(name) for name in mine)
        lines += [f"  {name:<{width}}   make restart NB={short_name(name)}" for name in mine]
        lines.append(say["restart"])
    if len(newer) > len(mine):
        lines.append(say["others"].format(n=len(newer) - len(mine)))
    return "\n".join(lines)


def resolve(wanted: str, tracked: Path) -> str:
    """The tracked notebook ``wanted`` names: a path relative to the notebooks, with or without
    ``.ipynb``, or its folder and number ("03", "ko/10b", "solutions/03")."""
    folder, _, key = wanted.removesuffix(".ipynb").strip("/").rpartition("/")
    prefix = f"{folder}/" if folder else ""
    names = [name for name in tracked_notebooks(tracked) if name.startswith(prefix)]
    found = [
        name for name in names
        if "/" not in name[len(prefix):]
        and (name[len(prefix):] == f"{key}.ipynb" or name[len(prefix):].startswith(f"{key}_"))
    ]
    if len(found) != 1:
        choices = ", ".join(short_name(n) for n in names if "/" not in n[len(prefix):]) or "none"
        raise SystemExit(f"{wanted!r} names {len(found)} notebooks; one of: {choices}")
    return found[0]


def set_aside(path: Path) -> Path:
    """Rename ``path`` to a dated name beside it that is not taken; return the new path."""
    stem = f"{path.stem}.old-{now()}"
    target, n = path.with_name(f"{stem}.ipynb"), 1
    while target.exists():
        n += 1
        target = path.with_name(f"{stem}-{n}.ipynb")
    return path.rename(target)


def restart(wanted: str, tracked: Path, work: Path) -> tuple[str, Path | None]:
    """Put a fresh copy of one notebook in ``work``, the learner's old copy renamed beside it.
    Return the notebook's name and where the old copy went (None if there was none)."""
    name = resolve(wanted, tracked)
    entries = read_manifest(work)
    old = set_aside(work / name) if (work / name).exists() else None
    copy_fresh(name, tracked, work, entries)
    write_manifest(work, entries)
    return name, old


def main(argv: list[str] | None = None) -> None:
    """The command line: ``sync`` (what ``make lab`` runs) or ``restart NB``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tracked", type=Path, default=TRACKED, help=argparse.SUPPRESS)
    parser.add_argument("--work", type=Path, default=WORK, help=argparse.SUPPRESS)
    commands = parser.add_subparsers(dest="command", required=True)
    sync = commands.add_parser("sync", help="copy what is missing, name the chapters that changed")
    sync.add_argument("--edition", choices=EDITIONS, default="en", help="the edition to report on")
    again = commands.add_parser("restart", help="a fresh copy of one notebook, the old one kept")
    again.add_argument("notebook", help='e.g. "03", "ko/03", "solutions/03", "03_scaling_sqrt_dk"')
    args = parser.parse_args(argv)
    if args.command == "sync":
        copied = copy_missing(args.tracked, args.work)
        print(note(copied, newer_in_series(args.tracked, args.work), args.work, args.edition))
    else:
        name, old = restart(args.notebook, args.tracked, args.work)
        kept = f"; your old copy is {old.relative_to(args.work).as_posix()}" if old else ""
        print(f"{args.work.name}/{name} is fresh from the series{kept}")


if __name__ == "__main__":
    sys.exit(main())
