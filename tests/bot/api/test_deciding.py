"""Deciding over HTTP as the token's person: approve, revise with a note, skip, four
eyes, and who may not decide."""

from __future__ import annotations

from dataclasses import replace

from taskqueue import Status
from tests.bot.api.conftest import Api
from tests.taskqueue.factories import parked


async def test_a_person_decides_an_open_approval(api: Api) -> None:
    task, approval = await parked(api.queue, "mail")
    ada = await api.token("ada-laptop", "ada", ("decide", "read"))
    status, listed, _ = await api.call("GET", "/api/v1/approvals?open=true", ada)
    assert status == 200 and [a["id"] for a in listed] == [approval.id]
    status, decided, _ = await api.call("POST", f"/api/v1/approvals/{approval.id}/decision",
                                        ada, json={"decision": "approve", "note": "ok"})
    assert (status, decided["decision"], decided["decided_by"]) == (200, "approved", "ada")
    assert (await api.queue.task_get(task.id)).status is Status.APPROVED
    status, again, _ = await api.call("POST", f"/api/v1/approvals/{approval.id}/decision",
                                      ada, json={"decision": "skip"})
    assert (status, again["error"]) == (409, "conflict")


async def test_revise_needs_a_note_and_an_asked_request_hears_it(api: Api) -> None:
    asker = await api.token("ci", None, ("ask",))
    ada = await api.token("ada", "ada", ("decide",))
    _, made, _ = await api.call("POST", "/api/v1/requests", asker, json={
        "capability": "deploys", "question": "Go?"})
    approval_id = (await api.queue.task_get(made["id"])).approval.id  # type: ignore[union-attr]
    status, refused, _ = await api.call("POST", f"/api/v1/approvals/{approval_id}/decision",
                                        ada, json={"decision": "revise"})
    assert (status, refused["error"]) == (400, "bad_input")
    status, _, _ = await api.call("POST", f"/api/v1/approvals/{approval_id}/decision", ada,
                                  json={"decision": "revise", "note": "canary first"})
    assert status == 200
    _, polled, _ = await api.call("GET", f"/api/v1/requests/{made['id']}?wait=5", asker)
    assert (polled["status"], polled["note"], polled["decided_by"]) == (
        "revised", "canary first", "ada")


async def test_four_eyes_over_the_api(api: Api) -> None:
    _, approval = await parked(api.queue, "mail", required_approvals=2)
    ada = await api.token("ada", "ada", ("decide",))
    bob = await api.token("bob", "Bob", ("decide",))
    _, first, _ = await api.call("POST", f"/api/v1/approvals/{approval.id}/decision", ada,
                                 json={"decision": "approve"})
    assert first["decision"] is None and len(first["approvals"]) == 1
    status, twice, _ = await api.call("POST", f"/api/v1/approvals/{approval.id}/decision",
                                      ada, json={"decision": "approve"})
    assert (status, twice["error"]) == (409, "already_approved")
    _, second, _ = await api.call("POST", f"/api/v1/approvals/{approval.id}/decision", bob,
                                  json={"decision": "approve"})
    assert second["decision"] == "approved"


async def test_a_token_without_a_person_never_decides(api: Api) -> None:
    _, approval = await parked(api.queue, "mail")
    agent = await api.token("agent", None, ("ask", "decide"))
    status, refused, _ = await api.call("POST", f"/api/v1/approvals/{approval.id}/decision",
                                        agent, json={"decision": "approve"})
    assert (status, refused["error"]) == (403, "no_person")
    assert (await api.queue.approval_get(approval.id)).decision is None


async def test_a_person_not_among_the_approvers_is_refused(api: Api) -> None:
    await api.queue.capability_set("mail", approvers=["carol"])
    _, approval = await parked(api.queue, "mail")
    ada = await api.token("ada", "ada", ("decide",))
    status, refused, _ = await api.call("POST", f"/api/v1/approvals/{approval.id}/decision",
                                        ada, json={"decision": "approve"})
    assert (status, refused["error"]) == (403, "not_an_approver")


async def test_a_signed_capability_refuses_an_api_approve_with_the_web_address(
        api: Api) -> None:
    """The API cannot sign: an approve of a signed_approvals capability is refused, nothing
    recorded, and the answer names the card's address in the web inbox."""
    await api.queue.capability_set("mail", signed_approvals=True)
    await api.queue.signing_link_set("web", "https://inbox.example/tasks/{task_id}")
    task, approval = await parked(api.queue, "mail")
    ada = await api.token("ada", "ada", ("decide",))
    status, refused, _ = await api.call("POST", f"/api/v1/approvals/{approval.id}/decision",
                                        ada, json={"decision": "approve"})
    assert (status, refused["error"]) == (403, "signature_required")
    assert refused["url"] == f"https://inbox.example/tasks/{task.id}"
    assert refused["url"] in refused["message"]
    after = await api.queue.approval_get(approval.id)
    assert after.decision is None and after.approvals == ()
    # A skip needs no signature: the same person may still decide that way.
    status, skipped, _ = await api.call("POST", f"/api/v1/approvals/{approval.id}/decision",
                                        ada, json={"decision": "skip"})
    assert (status, skipped["decision"]) == (200, "skipped")


async def test_with_people_configured_only_a_configured_person_decides(api: Api) -> None:
    api.app.settings = replace(api.app.settings, people=frozenset({"ada"}))
    _, approval = await parked(api.queue, "mail")
    eve = await api.token("eve", "eve", ("decide",))
    status, refused, _ = await api.call("POST", f"/api/v1/approvals/{approval.id}/decision",
                                        eve, json={"decision": "approve"})
    assert (status, refused["error"]) == (403, "not_a_person")
    assert (await api.queue.approval_get(approval.id)).approvals == ()
    ada = await api.token("ada", " ADA ", ("decide",))  # the same person, as spelled elsewhere
    status, decided, _ = await api.call("POST", f"/api/v1/approvals/{approval.id}/decision",
                                        ada, json={"decision": "approve"})
    assert (status, decided["decision"]) == (200, "approved")
