"""Four-eyes in the web inbox (real Chromium): the card shows the progress after the first
approve, a second approve by the same person is counted once, a person outside the
capability's `approvers` is refused, and accounts named by `[people.NAME]` decide as that
person."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from bot.web.settings import WebSettings
from taskqueue import Reminders, Status, TaskQueue
from tests.bot.web.conftest import Server, live, sign_in


async def _parked(queue: TaskQueue, required: int) -> int:
    await queue.task_enqueue("vm", {"n": 1})
    task = await queue.task_claim("vm", "w1")
    assert task is not None
    approval = await queue.task_park(task.id, "w1", "Delete vm-1?", claim=task.claim,
                                     request={"kind": "delete"}, required_approvals=required)
    return approval.id


def test_two_people_approve_in_the_web(server: Server, page: Page) -> None:
    server.webapp.settings = WebSettings(people={"alice": "alice", "bob": "bob"})
    approval_id = server.run(_parked(server.queue, 2))
    sign_in(page)
    live(page)
    card = page.locator(f"#approval-{approval_id}")
    expect(card.locator(".four-eyes")).to_contain_text("Needs 2 approves")
    card.locator("button[value=approve]").click()
    expect(card.locator(".four-eyes")).to_have_text(
        "Approved by alice (1 of 2): waiting for a second person")
    expect(card.locator("button[value=approve]")).to_be_visible()
    approval = server.run(server.queue.approval_get(approval_id))
    assert approval.is_open and [v.by for v in approval.approvals] == ["alice"]
    token = page.locator("meta[name=csrf-token]").get_attribute("content") or ""
    again = page.request.post(f"/approvals/{approval_id}/decide",
                              form={"decision": "approve", "csrf_token": token},
                              headers={"Accept": "application/json"})
    assert again.status == 409 and "counts once" in again.json()["error"]
    page.reload()
    expect(page.locator(f"#approval-{approval_id} .four-eyes")).to_contain_text("(1 of 2)")
    state = page.request.get(f"/approvals/{approval_id}.json").json()
    assert state["required"] == 2 and [a["by"] for a in state["approvals"]] == ["alice"]
    done = server.run(server.queue.approval_decide(approval_id, "approved", "bob"))
    assert done.decided_by == "bob"
    assert server.run(server.queue.task_get(done.task_id)).status is Status.APPROVED


def test_an_approve_from_telegram_or_the_cli_updates_an_open_page(
        server: Server, page: Page) -> None:
    approval_id = server.run(_parked(server.queue, 2))
    sign_in(page)
    live(page)
    card = page.locator(f"#approval-{approval_id}")
    expect(card.locator(".four-eyes")).to_contain_text("Needs 2 approves")
    server.run(server.queue.approval_decide(approval_id, "approved", "bob"))  # not this page
    expect(card.locator(".four-eyes")).to_have_text(
        "Approved by bob (1 of 2): waiting for a second person")
    expect(card.locator("button[value=approve]")).to_be_visible()


def test_someone_outside_approvers_is_refused_in_the_web(server: Server, page: Page) -> None:
    server.run(server.queue.capability_set("vm", approvers=["bob"]))
    approval_id = server.run(_parked(server.queue, 1))
    sign_in(page)
    live(page)
    token = page.locator("meta[name=csrf-token]").get_attribute("content") or ""
    for choice in ("approve", "skip"):
        refused = page.request.post(f"/approvals/{approval_id}/decide",
                                    form={"decision": choice, "csrf_token": token},
                                    headers={"Accept": "application/json"})
        assert refused.status == 403 and "not on the list" in refused.json()["error"]
    assert server.run(server.queue.approval_get(approval_id)).is_open


def test_a_reminded_then_escalated_approval_says_so(server: Server, page: Page) -> None:
    server.run(server.queue.capability_set("vm", remind_after_seconds=60,
                                           escalate_after_seconds=3600, escalate_to=["bob"]))
    approval_id = server.run(_parked(server.queue, 2))
    sign_in(page)
    card = page.locator(f"#approval-{approval_id}")
    expect(card.locator(".four-eyes")).to_be_visible()
    expect(card.locator(".reminded, .escalated")).to_have_count(0)

    async def unanswered_for(age: str) -> None:
        async with server.queue.pool.connection() as conn:
            await conn.execute(f"UPDATE approvals SET created_at = now() - interval '{age}'"
                               " WHERE id = %s", (approval_id,))
        await Reminders(server.queue).run_once()

    server.run(unanswered_for("2 minutes"))
    page.reload()
    expect(card.locator(".reminded")).to_contain_text("Reminded")
    expect(card.locator(".escalated")).to_have_count(0)
    state = page.request.get(f"/approvals/{approval_id}.json").json()
    assert state["reminded_at"] and state["escalated_at"] is None
    server.run(unanswered_for("2 hours"))
    page.reload()
    expect(card.locator(".escalated")).to_contain_text("Escalated")
    expect(card.locator(".reminded")).to_have_count(0)
    assert page.request.get(f"/approvals/{approval_id}.json").json()["escalated_at"]


def test_with_people_configured_an_account_of_no_person_is_refused(
        server: Server, page: Page) -> None:
    server.webapp.settings = WebSettings(people={"alice": "alice"})
    approval_id = server.run(_parked(server.queue, 1))
    sign_in(page, "bob")
    live(page)
    card = page.locator(f"#approval-{approval_id}")
    card.locator("button[value=approve]").click()
    expect(card.locator(".error")).to_contain_text("not one of the configured people")
    assert server.run(server.queue.approval_get(approval_id)).approvals == ()


def test_progress_names_the_person_not_the_channels_actor_string(
        server: Server, page: Page) -> None:
    approval_id = server.run(_parked(server.queue, 3))
    sign_in(page)  # alice, named by no [people.*] table: recorded as web:alice
    live(page)
    card = page.locator(f"#approval-{approval_id}")
    card.locator("button[value=approve]").click()
    expect(card.locator(".four-eyes")).to_have_text(
        "Approved by alice (1 of 3): waiting for 2 more people")
    recorded = server.run(server.queue.approval_get(approval_id))
    assert [v.by for v in recorded.approvals] == ["web:alice"]  # the record keeps its actor
    server.run(server.queue.approval_decide(approval_id, "approved", "telegram:7:Bob"))
    expect(card.locator(".four-eyes")).to_have_text(
        "Approved by alice, Bob (2 of 3): waiting for a third person")
    [shown] = page.request.get("/inbox.json").json()["approvals"]
    assert shown["progress"].startswith("Approved by alice, Bob (2 of 3)")
    page.reload()
    expect(card.locator(".four-eyes")).to_contain_text("Approved by alice, Bob (2 of 3)")
    state = page.request.get(f"/approvals/{approval_id}.json").json()
    assert "web:" not in state["progress"] and "telegram:" not in state["progress"]
