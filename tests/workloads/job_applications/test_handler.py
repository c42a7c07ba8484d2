"""The handler's revise, form-change and submit-error paths, in real Chromium and pdflatex."""

from __future__ import annotations

from dataclasses import replace

import pytest
from playwright.async_api import Browser

from bot.telegram.render import render_approval
from taskqueue import Status, TaskQueue
from workloads.job_applications.boards import BoardConfig
from workloads.job_applications.handler import make_handler, split_note
from workloads.job_applications.settings import JobSettings

from .fake_form_pages import GREENHOUSE_EXTRA_QUESTION, GREENHOUSE_OK, GREENHOUSE_SERVER_ERROR
from .fake_site import FakeSite
from .pipeline import CAP, assert_invariant, drain, greenhouse_payload, tick

ANSWERS = "job_application[answers_attributes]"


def test_a_revise_note_splits_into_field_answers_and_drafting_feedback() -> None:
    answers, feedback = split_note(
        "Why do you want to join: grids\nemphasize: Kafka\nmore about on-call please\n"
        "Portfolio: https://example.org/a:b")
    assert answers == {"Why do you want to join": "grids", "Portfolio": "https://example.org/a:b"}
    assert feedback == "emphasize: Kafka\nmore about on-call please"


async def _stage_counts(queue: TaskQueue, task_id: int) -> dict[str, int]:
    counts: dict[str, int] = {}
    for event in (await queue.task_detail(task_id)).events:
        if event.kind == "stage":
            counts[event.detail["stage"]] = counts.get(event.detail["stage"], 0) + 1
    return counts


@pytest.mark.slow
async def test_field_answers_refill_and_a_changed_form_is_parked_again_not_submitted(
    queue: TaskQueue, site: FakeSite, settings: JobSettings, browser: Browser
) -> None:
    handler = make_handler(settings, browser=browser)
    task_id = (await queue.task_enqueue(CAP, greenhouse_payload(
        site, GREENHOUSE_EXTRA_QUESTION))).id
    await drain(queue, handler)
    task = await queue.task_get(task_id)
    assert task.approval is not None
    assert [u["label"] for u in task.approval.request["unanswered"]] == [
        "Why do you want to join Nordwind?"]

    await queue.approval_decide_for_task(task_id, "revised", "mara",
                                         "Why do you want to join Nordwind: Grids matter.")
    await drain(queue, handler)
    task = await queue.task_get(task_id)
    assert task.approval is not None and task.approval.decision is None
    assert task.approval.request["unanswered"] == []
    assert (await _stage_counts(queue, task_id))["drafted"] == 1  # refilled, not redrafted

    site.forms.change_form(f"/greenhouse/nordwind/jobs/{GREENHOUSE_EXTRA_QUESTION}")
    first = task.approval.request["fingerprint"]
    await queue.approval_decide_for_task(task_id, "approved", "mara")
    await drain(queue, handler)
    task = await queue.task_get(task_id)
    assert task.status == Status.NEEDS_APPROVAL and task.approval is not None
    assert task.approval.request["fingerprint"] != first
    assert "the form changed" in task.approval.request["form_changed"]
    assert [u["label"] for u in task.approval.request["unanswered"]] == [
        "Are you willing to relocate to Hamburg?"]
    assert site.forms.submissions == []

    await queue.approval_decide_for_task(task_id, "revised", "mara", "relocate to Hamburg: No")
    await drain(queue, handler)
    await queue.approval_decide_for_task(task_id, "approved", "mara")
    await drain(queue, handler)
    assert (await queue.task_get(task_id)).status == Status.SUCCEEDED
    [sent] = site.forms.submissions
    assert sent.fields[f"{ANSWERS}[8][text_value]"] == "Grids matter."
    assert sent.fields[f"{ANSWERS}[9][boolean_value]"] == "0"
    await assert_invariant(queue, site)


@pytest.mark.slow
async def test_a_submit_that_errors_after_the_click_is_never_clicked_again(
    queue: TaskQueue, site: FakeSite, settings: JobSettings, browser: Browser
) -> None:
    handler = make_handler(settings, browser=browser)
    task_id = (await queue.task_enqueue(CAP, greenhouse_payload(
        site, GREENHOUSE_SERVER_ERROR))).id
    await drain(queue, handler)
    await queue.approval_decide_for_task(task_id, "approved", "mara")
    await drain(queue, handler)
    task = await queue.task_get(task_id)
    assert task.status == Status.NEEDS_APPROVAL and task.approval is not None
    assert task.approval.question.startswith("Did the application to Nordwind")
    assert "HTTP 500" in task.approval.request["reason"]
    summary = task.approval.request["summary"]  # the page's own "try again later." ends it
    assert "later. Approve: it went through" in summary and ".." not in summary
    assert [a.filename for a in task.approval.attachments] == ["after_submit.png"]
    assert len(site.forms.submissions) == 1

    await queue.approval_decide_for_task(task_id, "approved", "mara", "it did, got an email")
    await drain(queue, handler)
    task = await queue.task_get(task_id)
    assert task.status == Status.SUCCEEDED and task.result is not None
    assert task.result["confirmed_by"] == "mara"
    assert len(site.forms.submissions) == 1
    await assert_invariant(queue, site)


async def test_a_payload_that_is_not_a_posting_fails_for_good(
    queue: TaskQueue, settings: JobSettings
) -> None:
    task_id = (await queue.task_enqueue(CAP, {"url": "https://example.org"})).id
    await drain(queue, make_handler(settings))
    task = await queue.task_get(task_id)
    assert task.status == Status.FAILED and task.attempts == 1  # not retried
    assert "the payload is not a posting" in (task.last_error or "")


@pytest.mark.slow
async def test_an_approve_with_unanswered_fields_is_asked_again_naming_the_real_cause(
    queue: TaskQueue, site: FakeSite, settings: JobSettings, browser: Browser
) -> None:
    handler = make_handler(settings, browser=browser)
    task_id = (await queue.task_enqueue(CAP, greenhouse_payload(
        site, GREENHOUSE_EXTRA_QUESTION))).id
    await drain(queue, handler)
    task = await queue.task_get(task_id)
    assert task.approval is not None
    blocked = ("cannot be submitted until you answer Why do you want to join Nordwind?: "
               "reply with Revise")
    assert task.approval.request["cannot_submit"].startswith(blocked)
    assert task.approval.request["summary"].startswith("C" + blocked[1:])  # said up front
    assert task.approval.question.startswith("Answer the open questions")
    shown = render_approval(task.approval, CAP)  # what the chat shows, first thing after scores
    assert "Cannot be submitted until you answer Why do you want to join Nordwind?" in (
        shown.text)

    await queue.approval_decide_for_task(task_id, "approved", "mara")
    await drain(queue, handler)
    task = await queue.task_get(task_id)
    assert task.status == Status.NEEDS_APPROVAL and task.approval is not None
    request = task.approval.request
    assert request["not_submitted"].startswith("you approved, but it " + blocked)
    assert "form_changed" not in request and "form changed" not in request["summary"]
    assert site.forms.submissions == [] and (await _stage_counts(queue, task_id)).get(
        "approve_blocked") == 1

    await queue.approval_decide_for_task(task_id, "revised", "mara",
                                         "Why do you want to join Nordwind: Grids matter.")
    await drain(queue, handler)
    task = await queue.task_get(task_id)
    assert task.approval is not None and "cannot_submit" not in task.approval.request
    assert "not_submitted" not in task.approval.request
    assert task.approval.question.startswith("Submit application to Nordwind")
    await queue.approval_decide_for_task(task_id, "approved", "mara")
    await drain(queue, handler)
    assert (await queue.task_get(task_id)).status == Status.SUCCEEDED
    assert len(site.forms.submissions) == 1
    await assert_invariant(queue, site)


async def test_a_posting_taken_off_the_board_ends_before_drafting(
    queue: TaskQueue, site: FakeSite, settings: JobSettings
) -> None:
    handler = make_handler(settings)
    site.boards.remove(GREENHOUSE_OK)
    task_id = (await queue.task_enqueue(CAP, greenhouse_payload(site, GREENHOUSE_OK))).id
    await drain(queue, handler)
    task = await queue.task_get(task_id)
    assert task.status == Status.FAILED and task.attempts == 1  # final: not retried
    assert (task.last_error or "").startswith("the posting is gone: the board answers HTTP 404")
    assert await _stage_counts(queue, task_id) == {"gone": 1}  # nothing drafted or compiled


async def test_a_live_posting_or_an_unreachable_board_still_drafts(
    queue: TaskQueue, site: FakeSite, settings: JobSettings
) -> None:
    closed = BoardConfig("greenhouse", "nordwind", "", "http://127.0.0.1:9")
    for current in (settings, replace(settings, boards=(closed,), board_timeout=2)):
        payload = greenhouse_payload(site, GREENHOUSE_OK)
        task_id = (await queue.task_enqueue(CAP, payload, dedupe_key=None)).id
        await tick(queue, make_handler(current))
        assert await _stage_counts(queue, task_id) == {"drafted": 1}
        await queue.task_cancel(task_id)
