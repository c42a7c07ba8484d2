"""The `signoff` CLI's failures: one clear line, the documented exit code, nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest

from ..cli_helpers import ERROR, USAGE, Cli, closed_port, count


@pytest.fixture
def cli(dsn: str) -> Cli:
    return Cli(dsn)


def tasks(dsn: str) -> int:
    return count(dsn, "SELECT count(*) FROM tasks")


@pytest.mark.parametrize("args", [
    ["ls"],
    ["migrate"],
    ["enqueue", "demo", "--payload", '{"n": 1}'],
    ["claim", "demo", "--worker", "w1"],
])
def test_an_unreachable_database_is_one_line_naming_host_and_port(args: list[str]) -> None:
    port = closed_port()
    line = Cli(f"postgresql://postgres@127.0.0.1:{port}/signoff").fails(ERROR, *args)
    assert f"127.0.0.1:{port}" in line


def test_enqueue_with_a_bad_payload_writes_nothing(cli: Cli, dsn: str) -> None:
    assert "--payload" in cli.fails(ERROR, "enqueue", "demo", "--payload", '{"n": 1')
    for payload in ("not json", "[1, 2]", '"text"', "", '{"n": 1} {"n": 2}'):
        assert "--payload" in cli.fast.fails(ERROR, "enqueue", "demo", "--payload", payload)
    assert tasks(dsn) == 0


def test_a_bad_jsonl_line_is_named_and_nothing_is_written(
        cli: Cli, dsn: str, tmp_path: Path) -> None:
    batch = tmp_path / "batch.jsonl"
    batch.write_text('{"n": 1}\n\n{"n": 2\n{"n": 3}\n', "utf-8")
    line = cli.fails(ERROR, "enqueue", "demo", "--from-jsonl", str(batch))
    assert "line 3" in line
    line = cli.fails(ERROR, "enqueue", "demo", "--from-jsonl", "-",
                     stdin='{"n": 1}\n{"n": 2}\n[3]\n')
    assert "line 3" in line
    line = cli.fast.fails(ERROR, "enqueue", "demo", "--from-jsonl", "-",
                          stdin='{"n": 1}\n{"n": "\\u0000"}\n')
    assert "line 2" in line
    cli.fast.fails(ERROR, "enqueue", "demo", "--from-jsonl", str(tmp_path / "missing.jsonl"))
    assert tasks(dsn) == 0


def test_invalid_json_in_worker_options_writes_nothing(cli: Cli, dsn: str) -> None:
    task_id = str(cli.enqueue())
    token = cli.claim()["claim"]
    events = count(dsn, "SELECT count(*) FROM task_events")
    assert "--state" in cli.fails(ERROR, "release", task_id, "--worker", "w1",
                                  "--state", "{oops")
    assert "--request" in cli.fast.fails(ERROR, "park", task_id, "--worker", "w1",
                                         "--question", "Go?", "--request", "{oops")
    assert "--result" in cli.fast.fails(ERROR, "complete", task_id, "--worker", "w1",
                                        "--result", "{oops")
    assert "--state" in cli.fast.fails(ERROR, "release", task_id, "--worker", "w1",
                                       "--state", "[1]")
    assert "--request" in cli.fast.fails(ERROR, "park", task_id, "--worker", "w1",
                                         "--question", "Go?", "--request", "42")
    task = cli.show(int(task_id))
    assert task["status"] == "running" and task["claim"] == token and task["state"] == {}
    assert count(dsn, "SELECT count(*) FROM approvals") == 0
    assert count(dsn, "SELECT count(*) FROM task_events") == events


def test_values_the_database_cannot_store_are_one_line_errors(cli: Cli, dsn: str) -> None:
    cli.fast.fails(ERROR, "enqueue", "demo", "--priority", "3000000000")
    cli.fast.fails(ERROR, "enqueue", "demo", "--payload", '{"text": "\\u0000"}')
    cli.fails(ERROR, "enqueue", "demo", "--delay", "1e300")
    assert tasks(dsn) == 0
    task_id = cli.enqueue()
    for lease in ("nan", "inf", "1e300"):
        proc = cli.fast("claim", "demo", "--worker", "w1", "--lease", lease)
        assert proc.returncode in (ERROR, USAGE) and proc.stdout == ""
        assert "Traceback" not in proc.stderr
    assert cli.show(task_id)["status"] == "pending"


USAGE_ERRORS = [
    [],
    ["frobnicate"],
    ["enqueue"],
    ["enqueue", "demo", "--priority", "high"],
    ["enqueue", "demo", "--delay", "-1"],
    ["claim", "demo"],
    ["claim", "demo", "--worker", "w1", "--lease", "0"],
    ["heartbeat", "1"],
    ["heartbeat", "one", "--worker", "w1"],
    ["release", "1", "--worker", "w1", "--delay", "soon"],
    ["park", "1", "--worker", "w1"],
    ["park", "1", "--worker", "w1", "--question", "Go?", "--expires-in", "0"],
    ["complete", "1"],
    ["fail", "1", "--worker", "w1"],
    ["approve", "1"],
    ["skip", "1"],
    ["revise", "1", "--by", "alice"],
    ["retry"],
    ["cancel"],
    ["reap", "--bogus"],
    ["signals", "extra"],
    ["ls", "--status"],
    ["show"],
    ["caps"],
    ["caps", "set"],
    ["caps", "set", "demo", "--max-running", "-1"],
]


def test_usage_errors_exit_2() -> None:
    # Usage errors never reach the database.
    cli = Cli(f"postgresql://postgres@127.0.0.1:{closed_port()}/signoff")
    for args in USAGE_ERRORS[:3]:
        cli.fails(USAGE, *args)
    for args in USAGE_ERRORS[3:]:
        cli.fast.fails(USAGE, *args)


def test_bad_input_exits_1(cli: Cli, dsn: str, tmp_path: Path) -> None:
    fast = cli.fast
    fast.fails(ERROR, "enqueue", "demo", "--max-attempts", "0")
    fast.fails(ERROR, "enqueue", "demo", "--payload", "{}", "--from-jsonl", "-")
    fast.fails(ERROR, "caps", "set", "demo")
    fast.fails(ERROR, "caps", "set", "demo", "--timezone", "Mars/Olympus")
    task_id = str(cli.enqueue())
    cli.claim()
    fast.fails(ERROR, "heartbeat", task_id, "--worker", "w1", "--claim", "not-a-uuid")
    fast.fails(ERROR, "park", task_id, "--worker", "w1", "--question", "Go?",
               "--attach", str(tmp_path / "missing.png"))
    binary = tmp_path / "blob.bin"
    binary.write_bytes(b"\x00\x01\x02\xff")
    fast.fails(ERROR, "park", task_id, "--worker", "w1", "--question", "Go?",
               "--attach", str(binary))
    fast.fails(ERROR, "park", task_id, "--worker", "w1", "--question", "  ")
    fast.fails(ERROR, "fail", task_id, "--worker", "w1", "--error", "")
    assert cli.show(int(task_id))["status"] == "running"
    assert count(dsn, "SELECT count(*) FROM approvals") == 0
    assert tasks(dsn) == 1
