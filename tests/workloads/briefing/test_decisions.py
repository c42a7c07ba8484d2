"""The briefing's decisions section: yesterday's answers by decision, the median time to
decide, what expired (escaped); absent when nothing was answered or expired yesterday."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

from psycopg.types.json import Jsonb

from taskqueue import TaskQueue, load_config
from tests.taskqueue.factories import sql
from workloads.briefing.handler import compose

from .seed import Seeded, write_config, yesterday_at

HOSTILE_VM = "<b>k3s</b> & \x1b[31m"


async def _answered_yesterday(queue: TaskQueue, s: Seeded) -> None:
    """Move the seed's two settled questions into yesterday, with exact times to decide
    (skipped after 90 s; the expiry after an hour), and add an approve after 30 s."""
    asked = yesterday_at(s.today, 9)
    for key, seconds in (("skipped", 90), ("expired", 3600)):
        await sql(queue, "UPDATE approvals SET created_at = %s, decided_at = %s "
                         "WHERE task_id = %s", asked, asked + timedelta(seconds=seconds),
                  s.ids[key])
    # An approve as a real one is recorded: its vote, then the decision (migration 0020).
    [row] = await sql(queue, "INSERT INTO approvals (task_id, question, created_at, "
                             "expires_at) VALUES (%s, 'Send it?', %s, %s) RETURNING id",
                      s.ids["sent_a"], asked, asked + timedelta(days=1))
    approved = asked + timedelta(seconds=30)
    await sql(queue, "INSERT INTO approval_votes (approval_id, person, decided_at) "
                     "VALUES (%s, 'mara', %s)", row["id"], approved)
    await sql(queue, "UPDATE approvals SET decision = 'approved', decided_by = 'mara', "
                     "decided_at = %s WHERE id = %s", approved, row["id"])
    await sql(queue, "UPDATE tasks SET payload = %s WHERE id = %s",
              Jsonb({"vm": HOSTILE_VM}), s.ids["expired"])


def _section(text: str, head: str) -> list[str]:
    lines = text.splitlines()
    start = lines.index(head)
    return lines[start + 1: lines.index("", start)]


async def test_yesterdays_decisions_their_median_and_what_expired(
        queue: TaskQueue, seeded: Seeded, tmp_path: Path) -> None:
    await _answered_yesterday(queue, seeded)
    config = load_config(write_config(tmp_path), imports=False)
    briefing, rendered = await compose(queue, seeded.today, config=config)
    assert briefing.decisions is not None and briefing.decisions.decided == 2
    # Times to decide [30, 90]: the median is (30 + 90) / 2 = 60 s.
    assert briefing.decisions.p50_seconds == 60
    expired = seeded.ids["expired"]
    text = _section(rendered.text, "DECISIONS")
    assert text[0] == "1 approved · 1 skipped · 1 expired; median time to decide 1 min"
    assert text[1].startswith(f"  ⌛ #{expired} vm_ops") and "\x1b" not in rendered.text
    html = _section(rendered.html, "<b>Decisions</b>")
    assert html[0] == text[0]
    assert html[1].startswith(f"⌛ #{expired} vm_ops")
    assert "<b>k3s" not in rendered.html and "&lt;b&gt;k3s&lt;/b&gt; &amp;" in rendered.html


async def test_no_section_when_nothing_was_decided_yesterday(
        queue: TaskQueue, seeded: Seeded, tmp_path: Path) -> None:
    # The seed's skip and expiry happened today (when it ran): yesterday has none.
    config = load_config(write_config(tmp_path), imports=False)
    briefing, rendered = await compose(queue, seeded.today, config=config)
    assert briefing.decisions is not None and briefing.decisions.decided == 0
    assert "DECISIONS" not in rendered.text and "<b>Decisions</b>" not in rendered.html
    assert "WAITING ON YOU" in rendered.text  # the rest of the briefing is unchanged


async def test_a_quiet_day_stays_one_line(queue: TaskQueue, tmp_path: Path) -> None:
    config = load_config(write_config(tmp_path), imports=False)
    _, rendered = await compose(queue, date(2026, 12, 2), config=config)
    assert "quiet day" in rendered.text and "DECISIONS" not in rendered.text
