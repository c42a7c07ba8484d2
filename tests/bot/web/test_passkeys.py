"""Passkey-signed approvals in real Chromium (issue 39), with the DevTools virtual
authenticator: registering a passkey on /account, a signed approve that resumes the task and
acts once, an assertion over another request refused, an approve forged with SQL refused by
the gate (the far side never called), removing a passkey, and the page at an IP address."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from playwright.sync_api import Browser, Page, expect

from bot.web.settings import WebSettings
from taskqueue import (
    Decision,
    Gate,
    GatedAction,
    NotApproved,
    Status,
    TaskQueue,
    approval_challenge,
)
from tests.bot.web.conftest import Server, live, screenshot, sign_in
from tests.far_side import running_far_side
from tests.timing import limit

CAP = "vm"
SEND = {"kind": "send", "fingerprint": "msg-1", "summary": "Send the message"}
SHOTS = Path("/work/notes/shots")


@pytest.fixture
def local(browser: Browser, server: Server) -> Iterator[Page]:
    """A page at http://localhost:PORT (a secure context whose host can be a passkey's
    domain) with a virtual authenticator attached."""
    server.webapp.settings = WebSettings(people={"alice": "alice", "bob": "bob"})
    context = browser.new_context(viewport={"width": 1280, "height": 900},
                                  base_url=server.url.replace("127.0.0.1", "localhost"))
    context.set_default_timeout(20_000)
    tab = context.new_page()
    cdp = context.new_cdp_session(tab)
    cdp.send("WebAuthn.enable")
    cdp.send("WebAuthn.addVirtualAuthenticator", {"options": {
        "protocol": "ctap2", "transport": "internal", "hasResidentKey": True,
        "hasUserVerification": True, "isUserVerified": True}})
    yield tab
    context.close()


def _shots() -> Path:
    SHOTS.mkdir(parents=True, exist_ok=True)
    return SHOTS


def _add_passkey(page: Page, label: str = "laptop") -> None:
    page.goto("/account")
    page.wait_for_selector("body[data-live=ready]", state="attached")
    page.fill("#add-passkey input[name=label]", label)
    page.get_by_role("button", name="Add a passkey").click()
    expect(page.locator(".passkey-list .passkey")).to_have_count(1)
    expect(page.locator(".passkey .label")).to_have_text(label)


async def _parked(queue: TaskQueue, request: dict[str, Any] = SEND) -> tuple[int, int]:
    await queue.capability_set(CAP, signed_approvals=True)
    await queue.task_enqueue(CAP, {"n": 1}, actor="producer:test")
    task = await queue.task_claim(CAP, "w1")
    assert task is not None
    approval = await queue.task_park(task.id, "w1", "Send msg-1?", claim=task.claim,
                                     request=request)
    return task.id, approval.id


async def _gate_run(queue: TaskQueue) -> tuple[int, list[Any]]:
    """Claim the approved task and run its gated action against the far side twice; the far
    side's count of calls, and what each run came to (Gated or the refusal)."""
    # The web channel marks the park's notification shown meanwhile; its event row's key
    # lock on the task makes a SKIP LOCKED claim miss it for that moment, so claim again.
    deadline = time.monotonic() + limit(10)
    while (task := await queue.task_claim(CAP, "w2")) is None and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    assert task is not None
    outcomes: list[Any] = []
    async with running_far_side() as far, aiohttp.ClientSession() as http:
        async def act(action: GatedAction) -> int:
            async with http.post(f"{far.url}/messages", json={"to": "x"},
                                 headers={"Idempotency-Key": action.key}) as r:
                return r.status

        for _ in range(2):
            try:
                outcomes.append(await Gate(queue, task, "w2", "send").run("msg-1", act))
            except NotApproved as exc:
                outcomes.append(exc)
        return far.requests, outcomes


def test_register_then_a_signed_approve_resumes_and_acts_once(
        server: Server, local: Page) -> None:
    sign_in(local)
    _add_passkey(local)
    screenshot(local, _shots(), "account-passkey")
    [key] = server.run(server.queue.passkey_list("alice"))
    assert key.rp_id == "localhost" and key.label == "laptop"
    task_id, approval_id = server.run(_parked(server.queue))
    local.goto("/")
    live(local)
    card = local.locator(f"#approval-{approval_id}")
    expect(card.locator(".signed-note")).to_contain_text("asks your passkey")
    screenshot(local, _shots(), "inbox-signed")
    card.locator("button[value=approve]").click()
    expect(card.locator(".decided")).to_contain_text("Approved by alice")
    state = local.request.get(f"/approvals/{approval_id}.json").json()
    assert [(a["by"], a["signed"]) for a in state["approvals"]] == [("alice", True)]
    assert server.run(server.queue.task_get(task_id)).status is Status.APPROVED
    requests, outcomes = server.run(_gate_run(server.queue))
    assert requests == 1  # acted once: the second run finds the recorded result
    assert outcomes[0].acted_now and not outcomes[1].acted_now


def test_an_assertion_over_another_request_is_refused(server: Server, local: Page) -> None:
    sign_in(local)
    _add_passkey(local)
    task_id, approval_id = server.run(_parked(server.queue))
    other = dict(SEND, fingerprint="msg-2")
    local.goto("/")
    live(local)
    challenge = approval_challenge(approval_id, other)  # another fingerprint's challenge
    assertion = local.evaluate("""async ([challenge, rpId]) => {
        const bytes = Uint8Array.from(atob(challenge), (c) => c.charCodeAt(0));
        const cred = await navigator.credentials.get({publicKey: {
            challenge: bytes, rpId, userVerification: "preferred"}});
        return JSON.stringify(cred.toJSON());
    }""", [__import__("base64").b64encode(challenge).decode(), "localhost"])
    token = local.locator("meta[name=csrf-token]").get_attribute("content") or ""
    refused = local.request.post(f"/approvals/{approval_id}/decide", form={
        "decision": "approve", "csrf_token": token, "assertion": assertion},
        headers={"Accept": "application/json"})
    assert refused.status == 403 and "does not verify" in refused.json()["error"]
    approval = server.run(server.queue.approval_get(approval_id))
    assert approval.is_open and approval.approvals == ()  # nothing recorded
    # No assertion at all on a signed capability: refused too, nothing recorded.
    bare = local.request.post(f"/approvals/{approval_id}/decide", form={
        "decision": "approve", "csrf_token": token}, headers={"Accept": "application/json"})
    assert bare.status == 403 and "passkey" in bare.json()["error"]
    assert server.run(server.queue.task_get(task_id)).status is Status.NEEDS_APPROVAL


def test_an_approve_forged_with_sql_never_reaches_the_far_side(
        server: Server, local: Page) -> None:
    sign_in(local)
    _add_passkey(local)
    task_id, approval_id = server.run(_parked(server.queue))

    async def forge() -> None:
        async with server.queue.pool.connection() as conn:
            # A vote naming alice's real credential, with made-up signature bytes, and the
            # decision written by hand: no authenticator was involved.
            [key] = await server.queue.passkey_list("alice")
            await conn.execute(
                "INSERT INTO approval_votes (approval_id, person, credential_id, "
                "authenticator_data, client_data, signature, origin) "
                "VALUES (%s, 'alice', %s, '\\x00', '\\x00', '\\x00', 'http://localhost')",
                (approval_id, key.credential_id))
            await conn.execute("UPDATE approvals SET decision = 'approved', decided_by = "
                               "'alice', decided_at = now() WHERE id = %s", (approval_id,))
            await conn.execute("UPDATE tasks SET status = 'approved' WHERE id = %s",
                               (task_id,))

    server.run(forge())
    requests, outcomes = server.run(_gate_run(server.queue))
    assert requests == 0
    assert all(isinstance(o, NotApproved) for o in outcomes)
    assert "passkey signature" in str(outcomes[0])


def test_a_passkey_can_be_removed(server: Server, local: Page) -> None:
    sign_in(local)
    _add_passkey(local)
    local.get_by_role("button", name="Remove").click()
    expect(local.locator(".passkey-list .passkey")).to_have_count(0)
    expect(local.locator(".passkeys .empty")).to_have_text("You have no passkey yet.")
    assert server.run(server.queue.passkey_list("alice")) == []


def test_at_an_ip_address_the_page_says_why_not(server: Server, page: Page) -> None:
    sign_in(page)
    page.goto("/account")
    expect(page.locator(".passkeys .error")).to_contain_text(
        "browsers take a domain name (such as localhost) but no IP address")
    expect(page.get_by_role("button", name="Add a passkey")).to_have_count(0)
    screenshot(page, _shots(), "account-ip")
    token = page.locator("meta[name=csrf-token]").get_attribute("content") or ""
    refused = page.request.post("/account/passkeys/options", headers={
        "Accept": "application/json", "X-CSRF-Token": token})
    assert refused.status == 400 and "IP address" in json.loads(refused.text())["error"]


def test_unsigned_capabilities_keep_working(server: Server, local: Page) -> None:
    sign_in(local)

    async def plain() -> int:
        await server.queue.task_enqueue("jobs", {"n": 1})
        task = await server.queue.task_claim("jobs", "w1")
        assert task is not None
        return (await server.queue.task_park(task.id, "w1", "Go?", claim=task.claim)).id

    approval_id = server.run(plain())
    local.goto("/")
    live(local)
    card = local.locator(f"#approval-{approval_id}")
    expect(card.locator(".signed-note")).to_have_count(0)
    card.locator("button[value=approve]").click()
    expect(card.locator(".decided")).to_contain_text("Approved by alice")
    approval = server.run(server.queue.approval_get(approval_id))
    assert approval.decision is Decision.APPROVED
    assert [v.signed for v in approval.approvals] == [False]


def test_bad_registrations_and_removals_are_refused(server: Server, local: Page) -> None:
    sign_in(local)
    local.goto("/account")
    token = local.locator("meta[name=csrf-token]").get_attribute("content") or ""
    headers = {"Accept": "application/json", "X-CSRF-Token": token}
    not_json = local.request.post("/account/passkeys", form={"credential": "{"},
                                  headers=headers)
    assert not_json.status == 400 and "not JSON" in not_json.json()["error"]
    made_up = local.request.post("/account/passkeys", headers=headers, form={
        "credential": json.dumps({"id": "AA", "rawId": "AA", "type": "public-key",
                                  "response": {"clientDataJSON": "AA",
                                               "attestationObject": "AA"}})})
    assert made_up.status == 400 and "not registered" in made_up.json()["error"]
    gone = local.request.post("/account/passkeys/abcd/remove", headers=headers)
    assert gone.status == 404
    no_csrf = local.request.post("/account/passkeys/options",
                                 headers={"Accept": "application/json"})
    assert no_csrf.status == 403
    assert server.run(server.queue.passkey_list("alice")) == []


def test_a_counter_behind_the_stored_one_is_refused(server: Server, local: Page) -> None:
    """An authenticator whose signature counter does not move past the stored one may be a
    clone: the approve is refused and nothing recorded."""
    sign_in(local)
    _add_passkey(local)
    _, approval_id = server.run(_parked(server.queue))

    async def ahead() -> None:
        async with server.queue.pool.connection() as conn:
            await conn.execute("UPDATE passkeys SET sign_count = 1000000")

    server.run(ahead())
    local.goto("/")
    live(local)
    card = local.locator(f"#approval-{approval_id}")
    card.locator("button[value=approve]").click()
    expect(card.locator(".error")).to_contain_text("does not verify")
    approval = server.run(server.queue.approval_get(approval_id))
    assert approval.is_open and approval.approvals == ()
