"""docs/architecture.md matches the tree: every sub-package of taskqueue/, bot/ and workloads/,
every named-query file of the core (taskqueue/store/sql/*.sql) and every migrations folder is
named there, so a part added to the tree without a line in the drawing fails here."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"
TOPS = ("taskqueue", "bot", "workloads")
# What the document writes in backticks: `taskqueue/cli/`, `cli/`, `claim`, `claim.sql`, ….
NAMES = set(re.findall(r"`([^`\s]+)`", DOC.read_text("utf-8")))


def sub_packages() -> list[Path]:
    """Every folder with an __init__.py below the three top packages (data folders such as
    templates/, static/ and starter/ are not packages)."""
    return sorted(init.parent.relative_to(ROOT) for top in TOPS
                  for init in (ROOT / top).rglob("*/__init__.py"))


def package_named(package: Path) -> bool:
    """Named by its path from the repository root or its dotted name; a sub-package of the
    core also by its path inside taskqueue/, as the layer table writes it (`cli/`)."""
    spellings = {f"{package.as_posix()}/", ".".join(package.parts)}
    if package.parts[0] == "taskqueue":
        spellings.add(f"{Path(*package.parts[1:]).as_posix()}/")
    return bool(spellings & NAMES)


def sql_named(path: Path) -> bool:
    """A named-query file by its stem (`claim`), its file name or a path ending in it."""
    return (path.stem in NAMES or path.name in NAMES
            or any(name.endswith(f"/{path.name}") for name in NAMES))


def migrations_folders() -> list[Path]:
    return sorted(folder.relative_to(ROOT) for top in TOPS
                  for folder in (ROOT / top).rglob("migrations") if folder.is_dir())


def test_every_sub_package_is_named() -> None:
    missing = [f"{p.as_posix()}/" for p in sub_packages() if not package_named(p)]
    assert not missing, f"docs/architecture.md does not name these packages: {missing}"


def test_every_sql_file_of_the_core_is_named() -> None:
    files = sorted((ROOT / "taskqueue" / "store" / "sql").glob("*.sql"))
    assert files
    missing = [f.name for f in files if not sql_named(f)]
    assert not missing, f"docs/architecture.md does not name these SQL files: {missing}"


def test_every_migrations_folder_is_named() -> None:
    folders = migrations_folders()
    assert folders
    missing = [f"{f.as_posix()}/" for f in folders if f"{f.as_posix()}/" not in NAMES]
    assert not missing, f"docs/architecture.md does not name these migrations folders: {missing}"
