"""The briefing end to end through the worker runtime against a seeded database."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

from taskqueue import Status, TaskQueue
from tests.taskqueue.factories import sql
from tests.taskqueue.worker_helpers import events, run_of, running_pool, wait_status
from workloads.briefing.handler import handle

from .flow import TAGS, TELEGRAM_TAGS, enqueue, messages, run_briefing, untagged
from .seed import CAP, HOSTILE, Seeded


async def test_the_briefing_reports_the_seeded_day_through_the_outbox(
        queue: TaskQueue, config_file: Path, seeded: Seeded, today: date) -> None:
    task = await run_briefing(queue, today)

    assert task.status == Status.SUCCEEDED, task.last_error
    [message] = await messages(queue, task.id)
    body = message["body"]
    html, text = body["html"], body["text"]
    assert body["subject"] == f"Briefing · {today:%a} {today.day} {today:%b %Y}"
    ids = seeded.ids
    for shown in (html, text):
        assert "job_applications: 2 succeeded · 1 skipped" in untagged(shown)
        assert "vm_ops: 1 expired · 1 failed" in untagged(shown)
        assert "ios_build: 1 cancelled" in untagged(shown)
        assert f"#{ids['sent_a']} Backend Engineer at Nordwind" in shown
        assert f"#{ids['sent_b']} Data Engineer at Fjord" in shown
        assert f"#{ids['skipped']} Submit application to Lumen for SRE?" in shown  # question
        assert f"#{ids['expired']} k3s-2" in shown and f"#{ids['failed']} pihole" in shown
        assert f"#{ids['cancelled']} signoff-ios" in shown
        assert "Old news" not in shown and "not-yet" not in shown  # other days
        for key in ("waits_long", "waits_short"):
            assert f"signoff approve {ids[key]} --by you" in shown
            assert f"signoff show {ids[key]}" in shown
        assert f"#{ids['waits_short']} vm_ops: Resize k3s-1 to 4 CPUs? · 3 h" in shown
        assert "🔥 nudge: 1 " in shown and "🟢 incident: 0 " in shown
        assert "reaper: last ran" in shown and "0 orphans requeued" in shown
        assert "03:15 nightly_demo/scrape" in shown and "07:30 briefing/daily" in shown
    assert html.index(f"#{ids['waits_long']} ") < html.index(f"#{ids['waits_short']} ")
    assert f"#{ids['waits_long']} job_applications: SRE at Acme &amp; Co &lt;b&gt; · 2 d 2 h" \
        in html
    assert task.result is not None
    assert {k: task.result[k] for k in ("succeeded", "skipped", "expired", "failed",
                                        "cancelled", "open_approvals")} == {
        "succeeded": 2, "skipped": 1, "expired": 1, "failed": 1, "cancelled": 1,
        "open_approvals": 2}
    assert task.result["notification_id"] == message["id"] and task.result["nudge"] is True
    stages = [e.detail["stage"] for e in await events(queue, task.id, "stage")]
    assert stages == ["gathered", "sent"]


async def test_database_text_is_escaped_and_only_telegram_tags_are_used(
        queue: TaskQueue, config_file: Path, seeded: Seeded, today: date) -> None:
    task = await run_briefing(queue, today)
    [message] = await messages(queue, task.id)
    html, text = message["body"]["html"], message["body"]["text"]

    assert set(TAGS.findall(html)) <= TELEGRAM_TAGS
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "SRE at Acme &amp; Co &lt;b&gt;" in html
    assert "\x1b" not in html and "\x1b" not in text
    assert "\\x1b[31mred\\x1b[0m" in html and "\\x1b[31mred\\x1b[0m" in text
    assert "boom <script>alert(1)</script>" in text  # plain text is not markup
    assert HOSTILE not in text


async def test_an_empty_day_says_so_in_one_line(
        queue: TaskQueue, config_file: Path, today: date) -> None:
    task = await run_briefing(queue, today)

    [message] = await messages(queue, task.id)
    for shown in (message["body"]["html"], message["body"]["text"]):
        assert "\n" not in shown and "a quiet day" in shown
        assert f"nothing finished on {today - timedelta(days=1):%a}" in shown
    assert task.result is not None and task.result["empty"] is True


async def _long_day(queue: TaskQueue, today: date) -> None:
    """40 workloads, each with 12 tasks of every outcome and long names, and 60 open
    questions: far past one message."""
    yesterday = today - timedelta(days=1)
    await sql(queue, """
        INSERT INTO tasks (capability, status, payload, last_error, finished_at)
        SELECT 'workload_' || (g %% 40), s, jsonb_build_object('title', repeat('name ', 30) || g),
               CASE WHEN s = 'failed' THEN repeat('<error> ', 60) END,
               %s::date + time '12:00'
        FROM generate_series(1, 480) g,
             unnest(ARRAY['succeeded', 'skipped', 'expired', 'failed']) s""", yesterday)
    await sql(queue, """
        WITH t AS (
            INSERT INTO tasks (capability, status, payload)
            SELECT 'vm_ops', 'needs_approval', jsonb_build_object('vm', 'vm-' || g)
            FROM generate_series(1, 60) g RETURNING id)
        INSERT INTO approvals (task_id, question, expires_at)
        SELECT id, 'Resize it?', now() + interval '1 day' FROM t""")


async def test_a_very_long_day_fits_one_telegram_message(
        queue: TaskQueue, config_file: Path, today: date) -> None:
    await _long_day(queue, today)
    task = await run_briefing(queue, today)

    [message] = await messages(queue, task.id)
    html, text = message["body"]["html"], message["body"]["text"]
    assert len(html) <= 4000 < 4096
    assert "… and " in html and "more workloads" in html
    assert "Waiting on you (60)" in html and "signoff ls --status needs_approval" in html
    assert html.count("signoff approve ") == 8  # what waits on you is cut last
    assert set(TAGS.findall(html)) <= TELEGRAM_TAGS
    assert html.count("<b>") == html.count("</b>") and html.count("<code>") == html.count(
        "</code>")
    assert "07:30 briefing/daily" in html  # the end survives the shortening
    assert task.result is not None and task.result["succeeded"] == 480
    assert task.result["items"] < 8 and len(text) < 6000


async def test_a_resumed_slice_finds_its_message_and_sends_no_second(
        queue: TaskQueue, config_file: Path, today: date) -> None:
    task_id = await enqueue(queue, today)
    # A crash right after the send: the message is in the outbox, the marker never saved.
    sent = await queue.notification_send("Briefing", "sent before the crash", task_id=task_id)
    async with running_pool(queue, run_of(handle, CAP)):
        task = await wait_status(queue, task_id, Status.SUCCEEDED, Status.FAILED)

    assert [m["id"] for m in await messages(queue)] == [sent]
    assert task.result is not None and task.result["recovered"] is True
    assert task.result["notification_id"] == sent


async def test_a_payload_without_a_day_fails_without_retry(
        queue: TaskQueue, config_file: Path) -> None:
    task_id = (await queue.task_enqueue(CAP, {"day": "yesterday"})).id
    async with running_pool(queue, run_of(handle, CAP)):
        task = await wait_status(queue, task_id, Status.FAILED)
    assert "payload.day must be a date" in (task.last_error or "")
    assert await messages(queue) == []
