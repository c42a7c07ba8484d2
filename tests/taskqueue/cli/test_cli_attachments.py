"""`signoff show` prints the open request readably; `signoff attachment ls|get` fetch the
evidence, refusing path tricks and overwrites."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.taskqueue.cli_helpers import ERROR, NOT_FOUND, ROOT, Cli

REQUEST = {"title": "Fix it \x1b[31mred\x1b[0m", "diff": "--- a\n+++ b\n-old\n+new\n",
           "fields": [{"field": "Name", "value": "Ada"}],
           "artifact": {"name": "game.rbxl", "sha256": "ab" * 32}}


@pytest.fixture
def cli(dsn: str) -> Cli:
    return Cli(dsn)


def _parked(cli: Cli, tmp_path: Path) -> int:
    task_id = cli.enqueue("demo")
    cli.claim("demo")
    pdf = tmp_path / "cv.pdf"
    pdf.write_bytes(b"%PDF-1.4 not really")
    cli.fast.ok("park", str(task_id), "--worker", "w1", "--question", "Ship it?",
                "--request", json.dumps(REQUEST), "--attach", str(pdf))
    return task_id


def test_show_prints_the_open_request_readably_and_escaped(cli: Cli, tmp_path: Path) -> None:
    task_id = _parked(cli, tmp_path)
    text = cli.fast.ok("show", str(task_id))
    assert "request:" in text and "  | +new" in text and "  | -old" in text
    assert "- field: Name, value: Ada" in text and "sha256: " + "ab" * 32 in text
    assert "\x1b" not in text and "\\x1b[31mred" in text
    doc = cli.show(task_id)
    assert doc["approval"]["request"] == REQUEST  # --json unchanged


def test_attachment_ls_and_get_to_a_file_stdout_and_refusals(cli: Cli, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch
                                                             ) -> None:
    task_id = _parked(cli, tmp_path / "..")
    listed = cli.fast.json("attachment", "ls", str(task_id), "--json")
    assert [f["filename"] for f in listed] == ["cv.pdf"]
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    assert "wrote" in cli.fast.ok("attachment", "get", str(task_id), "cv.pdf")
    assert (work / "cv.pdf").read_bytes() == b"%PDF-1.4 not really"
    line = cli.fast.fails(ERROR, "attachment", "get", str(task_id), "cv.pdf")
    assert "exists; use --force" in line
    cli.fast.ok("attachment", "get", str(task_id), "cv.pdf", "--force")
    cli.fast.ok("attachment", "get", str(task_id), "cv.pdf", "-o", str(work / "copy.pdf"))
    assert (work / "copy.pdf").read_bytes() == b"%PDF-1.4 not really"
    for trick in ("../cv.pdf", "/etc/passwd", "..", "a\nb"):
        assert "not a plain file name" in cli.fast.fails(
            ERROR, "attachment", "get", str(task_id), trick)
    cli.fast.fails(NOT_FOUND, "attachment", "get", str(task_id), "other.pdf")
    cli.fast.fails(NOT_FOUND, "attachment", "ls", "999999")
    raw = subprocess.run([sys.executable, "-m", "taskqueue", "attachment", "get",
                          str(task_id), "cv.pdf", "-o", "-"],
                         env=os.environ | {"DATABASE_URL": cli.dsn}, cwd=ROOT,
                         capture_output=True, timeout=60, check=False)
    assert raw.returncode == 0 and raw.stdout == b"%PDF-1.4 not really"
