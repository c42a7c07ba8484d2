"""The whole pipeline in real Chromium, pdflatex and PostgreSQL: scrape to submit."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from playwright.async_api import Browser

from taskqueue import ProducerContext, ProducerJob, Reaper, Status, TaskQueue, read_stats
from workloads.job_applications.handler import make_handler
from workloads.job_applications.producer import ScrapeReport, scrape
from workloads.job_applications.profile import Profile
from workloads.job_applications.settings import JobSettings

from .fake_form_pages import GREENHOUSE_OK, LEVER_OK
from .fake_site import FakeSite
from .pipeline import CAP, assert_invariant, drain, submissions_by_task, tick

pytestmark = pytest.mark.slow

GH_KEY = f"greenhouse:nordwind:{GREENHOUSE_OK}"
LEVER_KEY = f"lever:fjord:{LEVER_OK}"
DATA_KEY = "lever:fjord:7c2d4e6f-1a3b-4c5d-9e8f-0a1b2c3d4e5f"
GONE_KEY = "greenhouse:nordwind:4012399"


async def _by_key(queue: TaskQueue) -> dict[str, int]:
    return {t.dedupe_key or "": t.id for t in await queue.task_list(capability=CAP)}


async def test_scrape_to_submit_with_skip_revise_expiry_and_a_gone_posting(
    queue: TaskQueue, site: FakeSite, settings: JobSettings, profile: Profile, browser: Browser
) -> None:
    async def nightly(q: TaskQueue, ctx: ProducerContext) -> ScrapeReport:
        return await scrape(q, settings, profile, capability=ctx.capability)

    night = datetime(2026, 12, 1, 2, 30, tzinfo=UTC)
    first = await ProducerJob(queue, "nightly-scrape", CAP, nightly).run_once(night)
    assert first.report is not None
    assert sorted(e["key"] for e in first.report["enqueued"]) == sorted(
        [GH_KEY, LEVER_KEY, DATA_KEY, GONE_KEY])
    # The service restarts after the nightly run: the same night enqueues nothing more.
    restarted = ProducerJob(queue, "nightly-scrape", CAP, nightly)
    assert not (await restarted.run_once(night + timedelta(hours=6))).ran
    site.boards.remove(GONE_KEY.rsplit(":", 1)[1])  # taken down between scrape and draft
    handler = make_handler(settings, browser=browser)
    await drain(queue, handler)
    ids = await _by_key(queue)
    gone = await queue.task_get(ids[GONE_KEY])
    assert gone.status == Status.FAILED and gone.attempts == 1
    assert "the posting is gone: the board answers HTTP 404" in (gone.last_error or "")
    assert gone.state.get("draft") is None  # found before drafting, not at the form
    for key in (GH_KEY, LEVER_KEY, DATA_KEY):
        task = await queue.task_get(ids[key])
        assert task.status == Status.NEEDS_APPROVAL and task.approval is not None
    gh = await queue.task_get(ids[GH_KEY])
    assert gh.approval is not None
    assert gh.approval.question == "Submit application to Nordwind Energie GmbH for " \
        "Senior Backend Engineer (Python, PostgreSQL)?"
    request = gh.approval.request
    assert request["kind"] == "job_application" and request["unanswered"] == []
    assert request["score"] > 0 and "PostgreSQL" in request["top_terms"]
    fields = {f["field"]: f["value"] for f in request["fields"]}
    assert fields["First Name"] == "Mara"  # the form's label, not job_application[first_name]
    assert not any("job_application[" in name for name in fields)
    assert len(request["fingerprint"]) == 64 and request["drafter"] == "deterministic"
    assert [a.content_type for a in gh.approval.attachments] == [
        "image/png", "application/pdf", "application/pdf"]
    assert site.forms.submissions == []  # filling never submits

    await queue.approval_decide_for_task(ids[GH_KEY], "approved", "mara")
    await queue.approval_decide_for_task(ids[LEVER_KEY], "skipped", "mara", "too far away")
    await queue.approval_decide_for_task(ids[DATA_KEY], "revised", "mara", "emphasize: Kafka")
    await drain(queue, handler)

    done = await queue.task_get(ids[GH_KEY])
    assert done.status == Status.SUCCEEDED and done.result is not None
    assert "Thank you for applying" in done.result["confirmation_text"]
    assert done.result["approved_by"] == "mara"
    redrafted = await queue.task_get(ids[DATA_KEY])
    assert redrafted.status == Status.NEEDS_APPROVAL and redrafted.approval is not None
    assert redrafted.approval.decision is None
    assert "feedback: emphasized Kafka" in redrafted.approval.request["draft_notes"]
    assert (await queue.task_get(ids[LEVER_KEY])).status == Status.SKIPPED

    async with queue.pool.connection() as conn:
        await conn.execute("UPDATE approvals SET expires_at = now() - interval '1 second' "
                           "WHERE task_id = %s AND decision IS NULL", (ids[DATA_KEY],))
    assert (await Reaper(queue).run_once()).expired == 1
    assert (await queue.task_get(ids[DATA_KEY])).status == Status.EXPIRED

    counts = await assert_invariant(queue, site)
    assert counts == {ids[GH_KEY]: 1}  # skipped, revised, expired and failed: never sent

    again = await restarted.run_once(night + timedelta(days=1))
    assert again.report is not None
    # The posting taken off the board is not listed again.
    assert again.report["enqueued"] == [] and again.report["already_known"] == 3
    assert await tick(queue, handler) is not None
    assert await submissions_by_task(queue, site) == {ids[GH_KEY]: 1}

    stats = (await read_stats(queue, CAP)).to_json()
    assert stats["enqueued"] == 4
    assert stats["by_status"] == {"succeeded": 1, "skipped": 1, "expired": 1, "failed": 1}
    assert stats["stages"]["drafted"] == 3 and stats["stages"]["parked"] == 3
    assert stats["stages"]["gone"] == 1
    assert stats["stages"]["submitted"] == 1 and stats["stages"]["revised"] == 1
    assert stats["skipped_by_reason"] == {"too far away": 1}
    assert stats["filtered_by_reason"]["seniority: principal"] == 2  # two nights
    assert stats["reports"]["runs"] == 2
    assert stats["filtered_by_reason"]["excluded keyword: crypto"] == 2
