"""The `signoff` CLI contract: commands, printing rules, --json shapes and exit codes."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ..cli_helpers import (
    APPROVAL_KEYS,
    CONFLICT,
    EMPTY,
    LEASE_LOST,
    NOT_FOUND,
    TASK_KEYS,
    USAGE,
    Cli,
    check_failed,
    count,
    last_id,
)
from ..factories import PDF, PNG


@pytest.fixture
def cli(dsn: str) -> Cli:
    return Cli(dsn)


def seconds_from_now(stamp: str) -> float:
    return (datetime.fromisoformat(stamp) - datetime.now(UTC)).total_seconds()


def test_migrate_applies_then_says_up_to_date(empty_dsn: str) -> None:
    cli = Cli(empty_dsn)
    first = cli.ok("migrate")
    assert first.startswith("applied ") and "0001" in first
    # The console script `signoff` is the same command as `python -m taskqueue`.
    script = Path(sys.executable).with_name("signoff")
    again = subprocess.run([str(script), "migrate"], capture_output=True, text=True, check=False,
                           env=os.environ | {"DATABASE_URL": empty_dsn}, timeout=60)
    assert again.returncode == 0 and again.stdout.strip() == "up to date", again.stderr
    assert count(empty_dsn, "SELECT count(*) FROM tasks") == 0


def test_enqueue_prints_the_id_and_stores_payload_priority_max_attempts_and_delay(
        cli: Cli, dsn: str) -> None:
    out = cli.ok("enqueue", "demo", "--payload", '{"url": "https://x.test", "n": 2}',
                 "--priority", "5", "--max-attempts", "7")
    task_id = last_id(out)
    plain = cli.enqueue("demo")
    task = cli.show(task_id)
    assert task.keys() >= TASK_KEYS
    assert task["id"] == task_id and task["capability"] == "demo"
    assert task["status"] == "pending" and task["priority"] == 5
    assert task["payload"] == {"url": "https://x.test", "n": 2}
    assert task["max_attempts"] == 7 and task["attempts"] == 0
    assert task["approval"] is None and task["worker"] is None and task["claim"] is None
    defaults = cli.show(plain)
    assert defaults["payload"] == {} and defaults["priority"] == 0
    assert defaults["max_attempts"] == 3
    later = cli.enqueue("later", "--delay", "3600")
    check_failed(cli.fast("claim", "later", "--worker", "w1"), EMPTY)
    assert 3500 < seconds_from_now(cli.show(later)["run_after"]) <= 3600
    assert count(dsn, "SELECT count(*) FROM tasks") == 3


def test_enqueue_with_a_held_dedupe_key_prints_the_same_id_and_inserts_nothing(
        cli: Cli, dsn: str) -> None:
    first = last_id(cli.ok("enqueue", "demo", "--dedupe-key", "job-1", "--payload", '{"n": 1}'))
    again = last_id(cli.ok("enqueue", "demo", "--dedupe-key", "job-1", "--payload", '{"n": 2}'))
    assert again == first
    assert count(dsn, "SELECT count(*) FROM tasks") == 1
    assert cli.show(first)["payload"] == {"n": 1}
    cli.claim()
    cli.fast.ok("complete", str(first), "--worker", "w1")
    assert cli.enqueue("demo", "--dedupe-key", "job-1") == first  # succeeded still holds it
    other = cli.enqueue("other", "--dedupe-key", "job-1")  # keys are per capability
    assert other != first
    assert count(dsn, "SELECT count(*) FROM tasks") == 2


def test_enqueue_from_jsonl_prints_one_id_a_line_and_skips_blank_lines(
        cli: Cli, tmp_path: Path) -> None:
    batch = tmp_path / "batch.jsonl"
    batch.write_text('{"n": 1}\n\n{"n": 2}\n   \n{"n": 3}\n\n', "utf-8")
    ids = [int(line) for line in cli.ok("enqueue", "demo", "--from-jsonl", str(batch)).split()]
    assert len(ids) == 3 and ids == sorted(ids)
    tasks = cli.fast.json("ls", "--capability", "demo", "--json")
    assert [t["payload"] for t in tasks] == [{"n": 1}, {"n": 2}, {"n": 3}]
    assert [t["id"] for t in tasks] == ids
    out = cli.ok("enqueue", "feed", "--from-jsonl", "-", stdin='{"a": 1}\n\n{"a": 2}\n')
    fed = [int(line) for line in out.split()]
    tasks = cli.fast.json("ls", "--capability", "feed", "--json")
    assert [t["payload"] for t in tasks] == [{"a": 1}, {"a": 2}]
    assert [t["id"] for t in tasks] == fed


def test_claim_prints_the_task_as_json_then_exits_3_with_empty_stdout(cli: Cli) -> None:
    task_id = cli.enqueue("demo", "--payload", '{"n": 1}')
    task = cli.json("claim", "demo", "--worker", "w1", "--lease", "120")
    assert task.keys() >= TASK_KEYS
    assert task["id"] == task_id and task["status"] == "running"
    assert task["worker"] == "w1" and uuid.UUID(task["claim"])
    assert 100 < seconds_from_now(task["lease_expires_at"]) <= 120
    assert task["payload"] == {"n": 1} and task["approval"] is None
    check_failed(cli("claim", "demo", "--worker", "w2"), EMPTY)
    check_failed(cli.fast("claim", "nothing-here", "--worker", "w2"), EMPTY)


def test_claim_prefers_priority_with_the_default_lease_and_heartbeat_extends_it(cli: Cli) -> None:
    cli.enqueue("demo", "--priority", "1")
    high = cli.enqueue("demo", "--priority", "9")
    task = cli.claim("demo", "w1")
    assert task["id"] == high
    assert 250 < seconds_from_now(task["lease_expires_at"]) <= 300
    cli.ok("heartbeat", str(high), "--worker", "w1", "--lease", "900")
    assert 850 < seconds_from_now(cli.show(high)["lease_expires_at"]) <= 900


def test_release_keeps_state_and_delays_the_next_claim(cli: Cli) -> None:
    task_id = cli.enqueue()
    cli.claim()
    cli.ok("release", str(task_id), "--worker", "w1", "--state", '{"step": 2}')
    shown = cli.show(task_id)
    assert shown["status"] == "pending" and shown["state"] == {"step": 2}
    assert shown["worker"] is None and shown["claim"] is None and shown["attempts"] == 0
    again = cli.claim("demo", "w2")
    assert again["id"] == task_id and again["state"] == {"step": 2}
    cli.fast.ok("release", str(task_id), "--worker", "w2", "--delay", "600")
    shown = cli.show(task_id)
    assert shown["state"] == {"step": 2} and shown["attempts"] == 0
    assert 550 < seconds_from_now(shown["run_after"]) <= 600
    check_failed(cli.fast("claim", "demo", "--worker", "w1"), EMPTY)


def test_park_prints_the_approval_id_and_keeps_request_attachments_and_expiry(
        cli: Cli, tmp_path: Path) -> None:
    (tmp_path / "shot.png").write_bytes(PNG)
    (tmp_path / "letter.pdf").write_bytes(PDF)
    (tmp_path / "notes.txt").write_text("Dear hiring manager,\n", "utf-8")
    task_id = cli.enqueue()
    cli.claim()
    out = cli.ok("park", str(task_id), "--worker", "w1", "--question", "Send it?",
                 "--request", '{"to": "jobs@x.test"}', "--expires-in", "600",
                 "--attach", str(tmp_path / "shot.png"), "--attach", str(tmp_path / "letter.pdf"),
                 "--attach", str(tmp_path / "notes.txt"))
    approval_id = last_id(out)
    task = cli.show(task_id)
    assert task["status"] == "needs_approval" and task["worker"] is None
    assert task["lease_expires_at"] is None
    approval = task["approval"]
    assert approval.keys() >= APPROVAL_KEYS
    assert approval["id"] == approval_id and approval["question"] == "Send it?"
    assert approval["request"] == {"to": "jobs@x.test"}
    assert approval["decision"] is None and approval["decided_by"] is None
    assert approval["decided_at"] is None and approval["note"] is None
    assert 550 < seconds_from_now(approval["expires_at"]) <= 600
    assert task["approvals"] == [approval]
    files = {a["filename"]: a for a in approval["attachments"]}
    assert files["shot.png"]["content_type"] == "image/png"
    assert files["letter.pdf"]["content_type"] == "application/pdf"
    assert files["notes.txt"]["content_type"].startswith("text/plain")
    assert files["letter.pdf"]["size_bytes"] == len(PDF)


def test_park_with_an_attachment_over_the_limit_writes_nothing_and_the_ttl_defaults_to_48h(
        cli: Cli, dsn: str, tmp_path: Path) -> None:
    big = tmp_path / "huge.txt"
    big.write_bytes(b"a" * (21 * 1024 * 1024))
    task_id = cli.enqueue()
    token = cli.claim()["claim"]
    line = cli.fails(1, "park", str(task_id), "--worker", "w1", "--question", "Go?",
                     "--attach", str(big))
    assert "huge.txt" in line and "limit" in line
    task = cli.show(task_id)
    assert task["status"] == "running" and task["worker"] == "w1" and task["claim"] == token
    assert count(dsn, "SELECT count(*) FROM approvals") == 0
    # Without it the park goes through, with the default TTL of 48 hours.
    approval_id = last_id(cli.fast.ok("park", str(task_id), "--worker", "w1", "--question", "Go?"))
    approval = cli.show(task_id)["approval"]
    assert approval["id"] == approval_id and approval["request"] == {}
    assert 48 * 3600 - 60 < seconds_from_now(approval["expires_at"]) <= 48 * 3600


def test_complete_stores_the_result_and_fail_retries_then_ends_failed(cli: Cli) -> None:
    done = cli.enqueue("done")
    cli.claim("done")
    cli.ok("complete", str(done), "--worker", "w1", "--result", '{"sent": true}')
    task = cli.show(done)
    assert task["status"] == "succeeded" and task["result"] == {"sent": True}
    assert task["worker"] is None and task["claim"] is None
    task_id = cli.enqueue("demo", "--max-attempts", "3")
    cli.claim()
    cli.ok("fail", str(task_id), "--worker", "w1", "--error", "timeout")
    task = cli.show(task_id)
    assert task["status"] == "pending" and task["attempts"] == 1
    assert task["last_error"] == "timeout" and seconds_from_now(task["run_after"]) > 0
    other = cli.enqueue("other")
    cli.claim("other", "w1")
    cli.fast.ok("fail", str(other), "--worker", "w1", "--error", "bad input", "--no-retry")
    dead = cli.show(other)
    assert dead["status"] == "failed" and dead["last_error"] == "bad input"
    assert dead["attempts"] == 1
    [listed] = cli.fast.json("ls", "--status", "failed", "--json")
    assert listed["id"] == other and listed["last_error"] == "bad input"


@pytest.mark.parametrize("command", ["heartbeat", "release", "park", "complete", "fail"])
def test_worker_calls_fence_on_worker_name_and_claim_token(cli: Cli, command: str) -> None:
    extra = {"park": ["--question", "Go?"], "fail": ["--error", "boom"]}.get(command, [])
    task_id = cli.enqueue()
    stale = cli.claim()["claim"]
    cli.fast.ok("release", str(task_id), "--worker", "w1")
    token = cli.claim()["claim"]
    tid = str(task_id)
    cli.fails(LEASE_LOST, command, tid, "--worker", "w2", *extra)
    cli.fast.fails(LEASE_LOST, command, tid, "--worker", "w2", "--claim", token, *extra)
    cli.fast.fails(LEASE_LOST, command, tid, "--worker", "w1", "--claim", stale, *extra)
    cli.fails(NOT_FOUND, command, "999999", "--worker", "w1", *extra)
    cli.fast.fails(NOT_FOUND, command, "999999", "--worker", "w1", "--claim", token, *extra)
    held = cli.show(task_id)
    assert held["status"] == "running" and held["worker"] == "w1" and held["claim"] == token
    cli.fast.ok(command, tid, "--worker", "w1", "--claim", token, *extra)


def test_approve_resumes_the_task_ahead_of_new_work_and_refuses_a_second_decision(
        cli: Cli) -> None:
    task_id = cli.enqueue()
    cli.claim()
    approval_id = last_id(cli.fast.ok("park", str(task_id), "--worker", "w1", "--question", "Go?"))
    newer = cli.enqueue("demo", "--priority", "9")
    cli.ok("approve", str(task_id), "--by", "alice", "--note", "looks good")
    task = cli.show(task_id)
    assert task["status"] == "approved"
    approval = task["approval"]
    assert approval["id"] == approval_id and approval["decision"] == "approved"
    assert approval["decided_by"] == "alice" and approval["note"] == "looks good"
    assert abs(seconds_from_now(approval["decided_at"])) < 60
    assert "alice" in cli.fails(CONFLICT, "approve", str(task_id), "--by", "bob")
    for again in (["skip", "--by", "bob"], ["revise", "--by", "bob", "--note", "no"]):
        assert "alice" in cli.fast.fails(CONFLICT, again[0], str(task_id), *again[1:])
    resumed = cli.claim("demo", "w2")
    assert resumed["id"] == task_id and resumed["approval"]["decision"] == "approved"
    assert cli.show(newer)["status"] == "pending"


def test_revise_needs_a_note_and_hands_it_to_the_next_claim(cli: Cli) -> None:
    task_id = cli.enqueue()
    cli.claim()
    cli.fast.ok("park", str(task_id), "--worker", "w1", "--question", "Go?")
    cli.fails(USAGE, "revise", str(task_id), "--by", "carol")
    assert cli.show(task_id)["status"] == "needs_approval"
    cli.ok("revise", str(task_id), "--by", "carol", "--note", "shorter, please")
    resumed = cli.claim("demo", "w2")
    assert resumed["id"] == task_id and resumed["status"] == "running"
    assert resumed["approval"]["decision"] == "revised"
    assert resumed["approval"]["note"] == "shorter, please"
    assert resumed["approval"]["decided_by"] == "carol"
    assert "carol" in cli.fast.fails(CONFLICT, "approve", str(task_id), "--by", "dave")


def test_skip_ends_the_task_and_decisions_need_an_existing_parked_task(cli: Cli) -> None:
    task_id = cli.enqueue()
    cli.claim()
    cli.fast.ok("park", str(task_id), "--worker", "w1", "--question", "Go?")
    cli.ok("skip", str(task_id), "--by", "erin")
    task = cli.show(task_id)
    assert task["status"] == "skipped" and task["approval"]["decision"] == "skipped"
    assert task["approval"]["decided_by"] == "erin"
    check_failed(cli.fast("claim", "demo", "--worker", "w1"), EMPTY)
    cli.fails(NOT_FOUND, "approve", "999999", "--by", "alice")
    cli.fast.fails(NOT_FOUND, "skip", "999999", "--by", "alice")
    cli.fast.fails(NOT_FOUND, "revise", "999999", "--by", "alice", "--note", "x")
    pending = cli.enqueue()
    cli.fast.fails(CONFLICT, "approve", str(pending), "--by", "alice")
    assert cli.show(pending)["status"] == "pending"


def test_retry_puts_a_failed_task_back_to_pending_with_attempts_reset(cli: Cli) -> None:
    task_id = cli.enqueue("demo", "--max-attempts", "1")
    cli.claim()
    cli.fast.ok("fail", str(task_id), "--worker", "w1", "--error", "boom")
    assert cli.show(task_id)["status"] == "failed"
    cli.ok("retry", str(task_id))
    task = cli.show(task_id)
    assert task["status"] == "pending" and task["attempts"] == 0
    cli.fails(CONFLICT, "retry", str(task_id))
    cli.fast.fails(NOT_FOUND, "retry", "999999")
    assert cli.claim()["id"] == task_id


def test_cancel_works_on_any_unfinished_task_and_the_worker_then_loses_its_lease(
        cli: Cli) -> None:
    running = cli.enqueue()
    token = cli.claim()["claim"]
    cli.ok("cancel", str(running))
    assert cli.show(running)["status"] == "cancelled"
    cli.fails(LEASE_LOST, "complete", str(running), "--worker", "w1")
    cli.fast.fails(LEASE_LOST, "heartbeat", str(running), "--worker", "w1", "--claim", token)
    parked, approved = cli.enqueue(), cli.enqueue()
    for task_id in (parked, approved):
        cli.claim()
        cli.fast.ok("park", str(task_id), "--worker", "w1", "--question", "Go?")
    cli.fast.ok("approve", str(approved), "--by", "alice")
    pending = cli.enqueue()
    for task_id in (parked, approved, pending):
        cli.fast.ok("cancel", str(task_id))
        assert cli.show(task_id)["status"] == "cancelled"
    check_failed(cli.fast("claim", "demo", "--worker", "w1"), EMPTY)
    done = cli.enqueue("other")
    cli.claim("other")
    cli.fast.ok("complete", str(done), "--worker", "w1")
    cli.fails(CONFLICT, "cancel", str(done))
    assert cli.show(done)["status"] == "succeeded"
    cli.fast.fails(NOT_FOUND, "cancel", "999999")


def test_reap_reports_every_count_even_when_zero_then_reaps_and_expires(cli: Cli) -> None:
    text = cli.ok("reap")
    for key in ("requeued", "orphans_requeued", "failed", "expired"):
        assert f"{key}=0" in text
    report = cli.json("reap", "--json")
    assert {k: report[k] for k in ("requeued", "orphans_requeued", "failed", "expired")} == {
        "requeued": 0, "orphans_requeued": 0, "failed": 0, "expired": 0}
    lapsed = cli.enqueue()
    cli.claim("demo", "w1", "--lease", "0.2")
    parked = cli.enqueue("other")
    cli.claim("other")
    cli.fast.ok("park", str(parked), "--worker", "w1", "--question", "Go?", "--expires-in", "0.2")
    time.sleep(0.4)
    report = cli.fast.json("reap", "--json")
    assert report["requeued"] == 1 and report["expired"] == 1
    assert report["failed"] == 0 and report["orphans_requeued"] == 0
    assert cli.show(lapsed)["status"] == "pending"
    assert cli.show(lapsed)["attempts"] == 1
    expired = cli.show(parked)
    assert expired["status"] == "expired" and expired["approval"]["decision"] == "expired"


def test_signals_json_shape(cli: Cli) -> None:
    doc = cli.json("signals", "--json")
    for name in ("incident", "nudge"):
        signal = doc[name]
        assert signal["firing"] is False and signal["count"] == 0
        assert isinstance(signal["threshold"], int)
        assert isinstance(signal["age_hours"], int | float)
    assert doc["incident"]["threshold"] == 5 and doc["incident"]["age_hours"] == 6
    assert doc["nudge"]["threshold"] == 5 and doc["nudge"]["age_hours"] == 24
    assert doc["expired_approvals"] == 0 and doc["failed_last_day"] == 0
    assert "reaper" in doc
    task_id = cli.enqueue("demo", "--max-attempts", "1")
    cli.claim()
    cli.fast.ok("fail", str(task_id), "--worker", "w1", "--error", "boom")
    cli.fast.ok("reap")
    doc = cli.fast.json("signals", "--json")
    assert doc["failed_last_day"] == 1
    assert doc["reaper"]["at"] is not None
    assert doc["reaper"]["outcome"] == {
        "requeued": 0, "orphans_requeued": 0, "failed": 0, "expired": 0}
    text = cli.fast.ok("signals")
    assert "incident" in text and "nudge" in text


def test_ls_filters_by_status_and_capability(cli: Cli) -> None:
    a = cli.enqueue("alpha")
    b = cli.enqueue("beta")
    c = cli.enqueue("beta")
    cli.claim("beta", "w1")
    assert [t["id"] for t in cli.json("ls", "--json")] == [a, b, c]
    assert [t["id"] for t in cli.fast.json("ls", "--capability", "beta", "--json")] == [b, c]
    running = cli.fast.json("ls", "--status", "running", "--json")
    assert [t["id"] for t in running] == [b] and running[0].keys() >= TASK_KEYS
    assert cli.fast.json("ls", "--status", "pending", "--capability", "beta",
                         "--json")[0]["id"] == c
    assert cli.fast.json("ls", "--status", "failed", "--json") == []
    table = cli.fast.ok("ls")
    assert "alpha" in table and "beta" in table
    cli.fails(1, "ls", "--status", "bogus")


def test_show_json_has_approvals_oldest_first_and_events(cli: Cli) -> None:
    task_id = cli.enqueue()
    cli.claim()
    first = last_id(cli.fast.ok("park", str(task_id), "--worker", "w1", "--question", "One?"))
    cli.fast.ok("revise", str(task_id), "--by", "alice", "--note", "again")
    cli.claim()
    second = last_id(cli.fast.ok("park", str(task_id), "--worker", "w1", "--question", "Two?"))
    doc = cli.json("show", str(task_id), "--json")
    assert doc.keys() >= TASK_KEYS
    assert [a["id"] for a in doc["approvals"]] == [first, second]
    assert all(a.keys() >= APPROVAL_KEYS for a in doc["approvals"])
    assert doc["approval"]["id"] == second and doc["approval"]["decision"] is None
    kinds = [e["kind"] for e in doc["events"]]
    assert kinds[0] == "enqueued" and kinds.count("claimed") == 2 and kinds.count("parked") == 2
    text = cli.fast.ok("show", str(task_id))
    assert "One?" in text and "Two?" in text
    cli.fails(NOT_FOUND, "show", "999999")
    cli.fast.fails(NOT_FOUND, "show", "999999", "--json")


def test_show_prints_a_nested_payload_as_indented_key_value_lines(cli: Cli) -> None:
    task_id = cli.enqueue("demo", "--payload",
                          '{"posting": {"company": "Acme", "tags": ["a", "b"]}, "score": 7}')
    text = cli.fast.ok("show", str(task_id))
    # (jsonb keeps shorter keys first)
    assert ("\npayload:\n  score: 7\n  posting:\n    tags:\n      - a\n      - b\n"
            "    company: Acme\n") in text
    assert "\nstate:       {}\n" in text and "\nresult:      null\n" in text
    assert '{"posting"' not in text  # not one long JSON line


def test_caps_set_and_ls_and_claim_respects_max_running(cli: Cli) -> None:
    assert cli.fast.json("caps", "ls", "--json") == []
    cli.ok("caps", "set", "mail", "--max-running", "1", "--max-parked", "4",
           "--daily-new", "10")
    [cap] = cli.json("caps", "ls", "--json")
    assert cap["capability"] == "mail" and cap["max_running"] == 1
    assert cap["max_parked"] == 4 and cap["daily_new"] == 10
    assert "mail" in cli.fast.ok("caps", "ls")
    first = cli.enqueue("mail")
    cli.enqueue("mail")
    assert cli.claim("mail", "w1")["id"] == first
    check_failed(cli("claim", "mail", "--worker", "w2"), EMPTY)
    cli.fast.ok("complete", str(first), "--worker", "w1")
    assert cli.claim("mail", "w2")["status"] == "running"
