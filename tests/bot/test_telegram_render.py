"""Rendering requests per kind, escaping user text for HTML, and compact callback data."""

from __future__ import annotations

import html
from datetime import UTC, datetime, timedelta

from bot.telegram.callback import decode, encode
from bot.telegram.render import MAX_TEXT, body, outcome, render_approval
from taskqueue import Approval, Decision

NOW = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def _approval(request: dict[str, object], question: str = "Go?", **kw: object) -> Approval:
    return Approval(id=7, task_id=42, question=question, request=request, created_at=NOW,
                    expires_at=NOW + timedelta(hours=48), **kw)  # type: ignore[arg-type]


def test_vm_change_shows_the_change_as_a_diff() -> None:
    text = body({"kind": "vm_change", "vm": "db-1", "host": "esx<2>",
                 "before": {"cpus": 2, "memory_gb": 8}, "after": {"cpus": 4, "memory_gb": 8}})
    assert '<pre><code class="language-diff">' in text and "esx&lt;2&gt;" in text
    assert "</code>\n<pre>" in text
    assert '-  "cpus": 2,' in html.unescape(text) and '+  "cpus": 4,' in html.unescape(text)


def test_a_job_application_score_shows_its_scale_or_a_share() -> None:
    request = {"kind": "job_application", "company": "A", "role": "B", "top_terms": ["go"]}
    assert "Match score: <b>73/100</b>" in body(request | {"score": 73, "score_max": 100})
    assert "Match score: <b>1/100</b>" in body(request | {"score": 1, "score_max": 100})
    assert "Match score: <b>87%</b>" in body(request | {"score": 0.87})
    assert "Match score" not in body(request)


def test_code_change_shows_a_diffstat() -> None:
    text = body({"kind": "code_change", "repo": "signoff", "branch": "fix/<x>",
                 "files": [{"path": "a.py", "added": 3, "removed": 1}]})
    assert "a.py | +3 -1" in text and "fix/&lt;x&gt;" in text


def test_unknown_kinds_use_the_generic_template_with_escaping() -> None:
    text = body({"kind": "mystery", "title": "A <b>bold</b> & _odd_ *title*", "size": 3})
    assert "A &lt;b&gt;bold&lt;/b&gt; &amp; _odd_ *title*" in text and "<b>size</b>: 3" in text


def test_the_message_fits_with_room_for_the_outcome() -> None:
    huge = _approval({f"k{i}": "x" * 290 for i in range(40)}, question="Q" * 3000)
    rendered = render_approval(huge, "jobs")
    assert rendered.document is not None and len(rendered.text) <= MAX_TEXT - 500
    decided = _approval({}, decision=Decision.REVISED, decided_by="telegram:1:Al <i>",
                        decided_at=NOW, note="redo & <shorten>")
    line = outcome(decided)
    assert "by Al &lt;i&gt; at 2026-12-01 09:00 UTC" in line and "redo &amp; &lt;shorten" in line


def test_callback_data_round_trips_and_rejects_anything_else() -> None:
    data = encode(9_223_372_036_854_775_807, "a", "0123456789")
    assert len(data.encode()) <= 64
    tap = decode(data)
    assert tap is not None and tap.decision is Decision.APPROVED and tap.token == "0123456789"
    for bad in ("", "so1:1:x:abcdef", "so1:01:a:abcdef", "so1:1:a:ABCDEF", "so2:1:a:abcdef",
                "so1:1:a:abcdef:extra", None):
        assert decode(bad) is None
