"""The CLI speaks in words a newcomer reads: a task's runs, the signals as sentences, error
timestamps to the second, and "did you mean" for a mistyped command, option or status."""

from __future__ import annotations

import re

import pytest

from ..cli_helpers import CONFLICT, ERROR, USAGE, Cli, count

ISO_MICROSECONDS = re.compile(r"\d{2}:\d{2}:\d{2}\.\d+")


@pytest.fixture
def cli(dsn: str) -> Cli:
    return Cli(dsn)


def _show_line(cli: Cli, task_id: int, field: str) -> str:
    [line] = [x for x in cli.fast.ok("show", str(task_id)).splitlines()
              if x.startswith(f"{field}:")]
    return line


def test_show_counts_a_tasks_runs_not_only_its_failures(cli: Cli) -> None:
    task_id = cli.enqueue("demo", "--max-attempts", "3")
    assert _show_line(cli, task_id, "runs").split(None, 1)[1] == (
        "0 so far (0 failed of 3 allowed)")
    for _ in range(2):  # two runs, each put back without failing
        cli.claim()
        cli.fast.ok("release", str(task_id), "--worker", "w1")
    assert _show_line(cli, task_id, "runs").split(None, 1)[1] == (
        "2 so far (0 failed of 3 allowed)")
    cli.claim()
    cli.fast.ok("fail", str(task_id), "--worker", "w1", "--error", "boom")
    assert _show_line(cli, task_id, "runs").split(None, 1)[1] == (
        "3 so far (1 failed of 3 allowed)")
    assert cli.show(task_id)["attempts"] == 1  # the JSON contract is unchanged
    header = cli.fast.ok("ls").splitlines()[0].split()
    assert "FAILS" in header and "TRIES" not in header


def test_signals_read_as_sentences(cli: Cli) -> None:
    incident, nudge = cli.fast.ok("signals").splitlines()[:2]
    assert incident == ("incident: ok: 0 tasks claimable but unclaimed for more than 6 h "
                        "(fires above 5; oldest 0.0 h); the system's move")
    assert nudge == ("nudge: ok: 0 approvals unanswered for more than 24 h "
                     "(fires above 5; oldest 0.0 h); a person's move")
    assert "?" not in incident + nudge and " > " not in incident + nudge


def test_an_already_decided_error_gives_its_time_to_the_second(cli: Cli) -> None:
    task_id = str(cli.enqueue())
    cli.claim()
    cli.fast.ok("park", task_id, "--worker", "w1", "--question", "Go?")
    cli.fast.ok("approve", task_id, "--by", "alice")
    line = cli.fails(CONFLICT, "approve", task_id, "--by", "bob")
    assert re.search(r"was already approved by alice at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$",
                     line), line
    assert not ISO_MICROSECONDS.search(line) and "+00:00" not in line


@pytest.mark.parametrize(("args", "suggestion"), [
    (["aprove", "1", "--by", "a"], "did you mean 'approve'?"),
    (["caps", "sett"], "did you mean 'set'?"),
    (["ls", "--stauts", "pending"], "did you mean '--status'?"),
])
def test_a_mistyped_word_gets_did_you_mean(cli: Cli, args: list[str], suggestion: str) -> None:
    line = cli.fails(USAGE, *args)
    assert suggestion in line


def test_nothing_close_gets_no_suggestion(cli: Cli) -> None:
    assert "did you mean" not in cli.fails(USAGE, "xyzzy")
    assert "did you mean" not in cli.fails(USAGE, "ls", "--zzz")


def test_a_mistyped_status_gets_did_you_mean_and_writes_nothing(cli: Cli, dsn: str) -> None:
    line = cli.fails(ERROR, "ls", "--status", "pendin")
    assert line.startswith("signoff: unknown status 'pendin'; did you mean 'pending'? (one of:")
    assert count(dsn, "SELECT count(*) FROM tasks") == 0
