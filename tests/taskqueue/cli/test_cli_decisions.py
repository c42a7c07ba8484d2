"""`signoff stats --decisions`: the seeded history's figures as JSON and as a table, the
window's bounds, and every earlier `signoff stats` invocation unchanged."""

from __future__ import annotations

import pytest

from taskqueue import TaskQueue
from tests.taskqueue.decision_history import HISTORY, seed_history

from ..cli_helpers import ERROR, USAGE, Cli

ROW_KEYS = {"scope", "capability", "person", "requests", "approved", "revised", "skipped",
            "expired", "decided", "p50_seconds", "p90_seconds", "max_seconds", "reminded",
            "escalated"}


@pytest.fixture
async def cli(dsn: str, queue: TaskQueue) -> Cli:
    await seed_history(queue, [*HISTORY, ("mail", "approved", "eve\x1b[31m\u202e", 5, 2)])
    return Cli(dsn)


def test_json_per_capability_and_person_over_the_last_30_days(cli: Cli) -> None:
    doc = cli.json("stats", "--decisions", "--since", "30", "--json")
    assert doc["since_days"] == 30 and doc["capability"] is None and doc["since"]
    rows = {(r["scope"], r["capability"] or r["person"]): r for r in doc["rows"]}
    assert all(set(r) == ROW_KEYS for r in doc["rows"])
    deploy = rows["capability", "deploy"]
    # [30, 60, 120, 300, 600]: p50 at 2 -> 120; p90 at 3.6 -> 300 + 0.6*300 = 480.
    assert (deploy["requests"], deploy["approved"], deploy["revised"], deploy["skipped"],
            deploy["expired"], deploy["decided"]) == (7, 3, 1, 1, 1, 5)
    assert (deploy["p50_seconds"], deploy["p90_seconds"], deploy["max_seconds"]) == (
        120, 480, 600)
    assert rows["person", "bob"]["requests"] is None and rows["person", "bob"]["expired"] is None
    assert (rows["person", "bob"]["reminded"], rows["person", "bob"]["escalated"]) == (None, None)
    assert (deploy["reminded"], deploy["escalated"]) == (0, 0)
    assert ("person", "carol") not in rows  # decided 40 days ago
    assert rows["total", None]["requests"] == 11


def test_the_table_escapes_names_from_the_database(cli: Cli) -> None:
    out = cli.fast.ok("stats", "--decisions")
    lines = out.splitlines()
    assert lines[0] == ("decisions in all recorded history (times: question to decision; "
                        "a person's: question to their own answer)")
    assert lines[1].split() == ["requests", "approved", "revised", "skipped", "expired",
                                "reminded", "escalated", "p50", "p90", "max"]
    assert "\x1b" not in out and "\u202e" not in out
    [eve] = [line for line in lines if "eve" in line]
    assert eve.split()[0] == "eve\\x1b[31m\\u202e" and eve.split()[2] == "1"
    [deploy] = [line for line in lines if line.startswith("deploy")]
    # requests approved revised skipped expired reminded escalated p50 p90 max: p50 210 s,
    # p90 5299.5 s, max 9999 s (2.78 h).
    assert deploy.split() == ["deploy", "9", "4", "1", "1", "2", "0", "0", "4m", "88m", "2.8h"]
    assert "people:" in lines and lines[-1].split()[:8] == ["all", "13", "7", "1", "1", "3",
                                                            "0", "0"]
    [bob] = [line for line in lines if line.split()[0] == "bob"]
    assert bob.split()[:8] == ["bob", "-", "0", "1", "1", "-", "-", "-"]


def test_a_capability_narrows_the_report(cli: Cli) -> None:
    doc = cli.fast.json("stats", "mail", "--decisions", "--json")
    assert [(r["scope"], r["capability"] or r["person"]) for r in doc["rows"]] == [
        ("capability", "mail"), ("person", "alice"), ("person", "eve\x1b[31m\u202e"),
        ("total", None)]


@pytest.mark.parametrize("days", ["0", "-1", "abc", "3651", "nan", "inf", ""])
def test_a_bad_since_is_one_line_and_exit_1(cli: Cli, days: str) -> None:
    line = cli.fast.fails(ERROR, "stats", "--decisions", "--since", days)
    assert "--since must be a number of days" in line


def test_since_and_postings_go_with_their_own_reports(cli: Cli) -> None:
    assert "--since goes with --decisions" in cli.fast.fails(ERROR, "stats", "deploy",
                                                             "--since", "3")
    assert "separate reports" in cli.fast.fails(ERROR, "stats", "--decisions", "--postings")


def test_the_earlier_stats_invocations_keep_working(cli: Cli) -> None:
    line = cli.fails(USAGE, "stats")
    assert line == ("signoff: error: the following arguments are required: capability "
                    "(see 'signoff stats --help')")
    doc = cli.fast.json("stats", "deploy", "--json")
    assert doc["capability"] == "deploy" and doc["enqueued"] == 9 and "rows" not in doc
    assert cli.fast.ok("stats", "deploy").startswith("deploy (read at ")
