"""Bounded input through the real `signoff` process: JSON size, depth and numbers, text
lengths and attachment files are refused in one line and write nothing; what fits works."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ..cli_helpers import ERROR, Cli, count


@pytest.fixture
def cli(dsn: str) -> Cli:
    return Cli(dsn)


def tasks(dsn: str) -> int:
    return count(dsn, "SELECT count(*) FROM tasks")


def nested(depth: int, kind: str = "object") -> str:
    """JSON text of `depth` nested objects (or arrays), the outermost an object."""
    inner = '{"a": ' * (depth - 1) + "1" + "}" * (depth - 1) if kind == "object" else \
        "[" * (depth - 1) + "1" + "]" * (depth - 1)
    return '{"x": ' + inner + "}"


@pytest.mark.parametrize("kind", ["object", "array"])
def test_a_payload_nested_10000_deep_is_one_line_naming_the_option(
        cli: Cli, dsn: str, kind: str) -> None:
    line = cli.fails(ERROR, "enqueue", "demo", "--payload", nested(10_000, kind))
    assert line.startswith("signoff: --payload is nested deeper than 64 levels"), line
    # Deeper than the default limit but shallow enough for Python's parser: refused too.
    assert "nested deeper" in cli.fast.fails(ERROR, "enqueue", "demo", "--payload",
                                             nested(65, kind))
    assert tasks(dsn) == 0
    task_id = cli.enqueue("demo", "--payload", nested(64, kind))
    assert json.dumps(cli.show(task_id)["payload"]).count("1") == 1


def test_a_deep_jsonl_line_is_named_and_nothing_is_written(
        cli: Cli, dsn: str, tmp_path: Path) -> None:
    batch = tmp_path / "batch.jsonl"
    batch.write_text(f'{{"n": 1}}\n{{"n": 2}}\n{nested(10_000, "array")}\n', "utf-8")
    line = cli.fails(ERROR, "enqueue", "demo", "--from-jsonl", str(batch))
    assert line.startswith("signoff: line 3 is nested deeper than 64 levels"), line
    assert tasks(dsn) == 0
    batch.write_text('{"n": 1}\n{"n": 2}\n' + nested(64) + "\n", "utf-8")
    assert len(cli.ok("enqueue", "demo", "--from-jsonl", str(batch)).split()) == 3


def test_numbers_jsonb_cannot_hold_are_one_line_errors(cli: Cli, dsn: str) -> None:
    line = cli.fails(ERROR, "enqueue", "demo", "--payload", '{"n": ' + "9" * 5000 + "}")
    assert line == "signoff: --payload holds a number of more than 1000 digits"
    # Past our bound but under Python's own: the same refusal, from the value check.
    assert "1000 digits" in cli.fast.fails(ERROR, "enqueue", "demo", "--payload",
                                           '{"n": ' + "9" * 1001 + "}")
    for bad in ("NaN", "Infinity", "-Infinity", "1e999"):
        assert "NaN or Infinity" in cli.fast.fails(ERROR, "enqueue", "demo", "--payload",
                                                   f'{{"n": {bad}}}')
    assert tasks(dsn) == 0
    big = "9" * 40
    task_id = cli.enqueue("demo", "--payload", f'{{"n": {big}}}')
    assert cli.show(task_id)["payload"] == {"n": int(big)}


def test_a_50_mb_payload_is_refused_quickly_and_a_big_one_under_the_limit_is_stored(
        cli: Cli, dsn: str, tmp_path: Path) -> None:
    batch = tmp_path / "huge.jsonl"
    with batch.open("w", encoding="utf-8") as f:
        f.write('{"n": 1}\n{"blob": "')
        f.write("x" * 50_000_000)
        f.write('"}\n')
    line = cli.fails(ERROR, "enqueue", "demo", "--from-jsonl", str(batch))
    assert line.startswith("signoff: line 2 is "), line
    assert "over the limit of 1048576 bytes" in line and "max_json_bytes" in line
    batch.write_text(json.dumps({"blob": "x" * 1_100_000}) + "\n", "utf-8")  # 1,100,012 B
    assert "line 1 is at least 1100004 bytes of JSON, over the limit of 1048576" in cli.fast.fails(
        ERROR, "enqueue", "demo", "--from-jsonl", str(batch))
    assert tasks(dsn) == 0
    batch.write_text(json.dumps({"blob": "x" * 1_000_000}) + "\n", "utf-8")
    task_id = cli.enqueue("demo", "--from-jsonl", str(batch))
    assert count(dsn, "SELECT length(payload->>'blob') FROM tasks WHERE id = %s",
                 task_id) == 1_000_000


def test_the_config_file_sets_the_limits_of_every_json_option(
        cli: Cli, dsn: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "signoff.toml"
    config.write_text("[limits]\nmax_json_bytes = 100\nmax_json_depth = 3\n", "utf-8")
    monkeypatch.setenv("SIGNOFF_CONFIG", str(config))
    fits = json.dumps({"text": "x" * 80})
    line = cli.fails(ERROR, "enqueue", "demo", "--payload", json.dumps({"text": "x" * 100}))
    assert "over the limit of 100" in line and "--payload" in line
    assert "deeper than 3" in cli.fast.fails(ERROR, "enqueue", "demo", "--payload",
                                             '{"a": {"b": {"c": {}}}}')
    task_id = str(cli.enqueue("demo", "--payload", fits))
    cli.claim()
    big = json.dumps({"text": "y" * 100})
    assert "--state" in cli.fast.fails(ERROR, "release", task_id, "--worker", "w1",
                                       "--state", big)
    assert "--result" in cli.fast.fails(ERROR, "complete", task_id, "--worker", "w1",
                                        "--result", big)
    assert "--request" in cli.fast.fails(ERROR, "park", task_id, "--worker", "w1",
                                         "--question", "Go?", "--request", big)
    assert cli.show(int(task_id))["status"] == "running"
    cli.ok("complete", task_id, "--worker", "w1", "--result", fits)
    config.write_text("[limits]\nmax_json_bytes = 0\n", "utf-8")
    line = cli.fails(ERROR, "ls")
    assert "limits.max_json_bytes" in line and "at least 1" in line


@pytest.mark.parametrize(("option", "limit"), [
    ("--dedupe-key", 500), ("--question", 10_000), ("--worker", 200), ("--note", 10_000),
    ("--by", 200), ("--error", 65_536)])
def test_text_options_are_bounded(cli: Cli, dsn: str, option: str, limit: int) -> None:
    def run(text: str, fast: bool = True) -> tuple[int, str]:
        c = cli.fast if fast else cli
        if option == "--dedupe-key":
            proc = c("enqueue", "demo", "--dedupe-key", text)
        elif option == "--worker":
            proc = c("claim", "demo", "--worker", text)
        else:
            task_id = str(cli.enqueue())
            cli.claim()
            if option == "--question":
                proc = c("park", task_id, "--worker", "w1", "--question", text)
            elif option == "--error":
                proc = c("fail", task_id, "--worker", "w1", "--error", text)
            else:
                cli.fast.ok("park", task_id, "--worker", "w1", "--question", "Go?")
                note, by = (text, "alice") if option == "--note" else ("n", text)
                proc = c("revise", task_id, "--by", by, "--note", note)
        return proc.returncode, proc.stderr
    if option == "--worker":
        cli.enqueue()
    code, err = run("k" * (limit + 1), fast=False)
    assert code == ERROR and err.count("\n") == 1, err
    assert f"{limit + 1} characters, over the limit of {limit}" in err
    assert count(dsn, "SELECT count(*) FROM approvals WHERE decision IS NOT NULL") == 0
    code, err = run("k" * limit)
    assert code == 0, err


def test_park_attach_refuses_devices_folders_and_fifos_without_reading_them(
        cli: Cli, dsn: str, tmp_path: Path) -> None:
    task_id = str(cli.enqueue())
    cli.claim()
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    park = ("park", task_id, "--worker", "w1", "--question", "Go?", "--attach")
    line = cli.fails(ERROR, *park, "/dev/zero")
    assert line == "signoff: attachment /dev/zero is not a regular file"
    for path in (str(tmp_path), str(fifo)):
        assert cli.fast.fails(ERROR, *park, path).endswith(" is not a regular file")
    assert count(dsn, "SELECT count(*) FROM approvals") == 0
    note = tmp_path / "note.txt"
    note.write_text("evidence", "utf-8")
    cli.ok(*park, str(note))
    assert count(dsn, "SELECT count(*) FROM approval_attachments") == 1


def test_park_attach_stops_reading_at_the_limit(
        cli: Cli, dsn: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    task_id = str(cli.enqueue())
    cli.claim()
    big = tmp_path / "big.txt"
    with big.open("wb") as f:  # sparse: 20 MiB + 1 costs no disk
        f.truncate(20 * 1024 * 1024 + 1)
    park = ("park", task_id, "--worker", "w1", "--question", "Go?", "--attach")
    line = cli.fails(ERROR, *park, str(big))
    assert line == (f"signoff: attachment {big} is over the limit of 20971520 bytes "
                    "(max_attachment_bytes)")
    config = tmp_path / "signoff.toml"
    config.write_text("[limits]\nmax_attachment_bytes = 10\n", "utf-8")
    monkeypatch.setenv("SIGNOFF_CONFIG", str(config))
    small = tmp_path / "small.txt"
    small.write_text("x" * 11, "utf-8")
    assert "over the limit of 10 bytes" in cli.fast.fails(ERROR, *park, str(small))
    assert count(dsn, "SELECT count(*) FROM approvals") == 0
    small.write_text("x" * 10, "utf-8")
    cli.fast.ok(*park, str(small))
    assert count(dsn, "SELECT count(*) FROM approval_attachments") == 1
