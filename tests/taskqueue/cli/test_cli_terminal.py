"""Nothing from the database or the user reaches a terminal raw: names, questions, errors
and the one-line error messages show newlines and escape codes as escapes."""

from __future__ import annotations

from pathlib import Path

import pytest

from ..cli_helpers import CONFLICT, ERROR, LEASE_LOST, Cli, count

EVIL = "evil\n\x1b[31mred"
SHOWN = "evil\\n\\x1b[31mred"


@pytest.fixture
def cli(dsn: str) -> Cli:
    return Cli(dsn)


def raw_free(text: str) -> None:
    assert "\x1b" not in text and "\r" not in text, text


def sql(dsn: str, statement: str, *params: object) -> None:
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(statement, params)


def test_an_attachment_name_with_a_newline_or_escape_code_is_refused_in_one_line(
        cli: Cli, dsn: str, tmp_path: Path) -> None:
    task_id = str(cli.enqueue())
    cli.claim()
    evil = tmp_path / f"{EVIL}.txt"
    evil.write_text("evidence", "utf-8")
    park = ("park", task_id, "--worker", "w1", "--question", "Go?", "--attach")
    line = cli.fails(ERROR, *park, str(evil))
    raw_free(line)
    assert line == (f"signoff: attachment name '{SHOWN}.txt' is not a plain file name: it "
                    "holds a control character")
    assert count(dsn, "SELECT count(*) FROM approvals") == 0
    plain = tmp_path / "plain.txt"
    plain.write_text("evidence", "utf-8")
    cli.ok(*park, str(plain))


def test_questions_errors_and_names_from_the_database_are_escaped(
        cli: Cli, dsn: str) -> None:
    task_id = str(cli.enqueue())
    cli.claim()
    out = cli.ok("park", task_id, "--worker", "w1", "--question", f"Go? {EVIL}")
    raw_free(out)
    assert out.splitlines()[0].startswith(f"task {task_id} parked: Go? {SHOWN} (expires ")
    # A name stored before names were checked (or written by hand) is still printed safely.
    sql(dsn, "UPDATE approvals SET request = '{}', question = %s", f"Q {EVIL}")
    sql(dsn, "UPDATE approval_attachments SET filename = %s", EVIL)
    sql(dsn, "UPDATE tasks SET dedupe_key = %s, capability = %s", EVIL, f"demo{EVIL}")
    show = cli.ok("show", task_id)
    raw_free(show)
    assert f"approval 1: Q {SHOWN}\n" in show or f": Q {SHOWN}\n" in show
    assert f"dedupe key:  {SHOWN}\n" in show and f"capability:  demo{SHOWN}\n" in show
    assert len(show.splitlines()) == len(cli.fast.ok("show", task_id).splitlines())
    listing = cli.ok("ls")
    raw_free(listing)
    assert f"demo{SHOWN}" in listing and len(listing.splitlines()) == 2


def test_a_failure_text_is_escaped_in_fail_ls_and_show(cli: Cli) -> None:
    task_id = str(cli.enqueue("demo", "--max-attempts", "1"))
    cli.claim()
    out = cli.ok("fail", task_id, "--worker", "w1", "--error", f"boom {EVIL}")
    raw_free(out)
    assert out == f"task {task_id} failed: failed after 1 attempt(s): boom {SHOWN}\n"
    show = cli.fast.ok("show", task_id)
    raw_free(show)
    assert f"last error:  boom {SHOWN}\n" in show
    # ls keeps the first line of an error (a traceback's is its summary), escaped.
    listing = cli.fast.ok("ls").splitlines()
    assert len(listing) == 2 and listing[1].endswith("boom evil")
    cli.fast.ok("retry", task_id)
    cli.claim()
    cli.fast.ok("fail", task_id, "--worker", "w1", "--error", "boom \x1b[31mred")
    [_, row] = cli.fast.ok("ls").splitlines()
    raw_free(row)
    assert row.endswith("boom \\x1b[31mred")


def test_error_lines_escape_what_the_database_holds(cli: Cli, dsn: str) -> None:
    task_id = str(cli.enqueue())
    cli.claim()
    sql(dsn, "UPDATE tasks SET worker = %s", EVIL)
    line = cli.fails(LEASE_LOST, "heartbeat", task_id, "--worker", "w1")
    raw_free(line)
    assert line == (f"signoff: lease lost: task {task_id} is running, held by {SHOWN}; "
                    "w1 no longer holds it")
    sql(dsn, "UPDATE tasks SET worker = 'w1'")
    cli.fast.ok("park", task_id, "--worker", "w1", "--question", "Go?")
    cli.fast.ok("approve", task_id, "--by", "alice")
    sql(dsn, "UPDATE approvals SET decided_by = %s", EVIL)
    line = cli.fails(CONFLICT, "approve", task_id, "--by", "bob")
    raw_free(line)
    assert f"was already approved by {SHOWN} at " in line


def test_names_given_to_the_cli_with_control_characters_are_refused(cli: Cli) -> None:
    task_id = str(cli.enqueue())
    line = cli.fails(ERROR, "claim", "demo", "--worker", EVIL)
    assert line == "signoff: the worker name holds a control character"
    cli.claim()
    cli.fast.ok("park", task_id, "--worker", "w1", "--question", "Go?")
    assert "control character" in cli.fast.fails(ERROR, "approve", task_id, "--by", EVIL)
    cli.fast.ok("approve", task_id, "--by", "alice")
