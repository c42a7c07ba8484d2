"""The task, queue and signals pages in Chromium, their JSON, and the evidence kinds."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from taskqueue import NewAttachment, Reaper, Status
from tests.bot.web.conftest import Server, park, screenshot, sign_in

pytestmark = pytest.mark.slow  # a real Chromium

PATCH = b"""diff --git a/app.py b/app.py
--- a/app.py
+++ b/app.py
@@ -1,2 +1,2 @@
-print('old')
+print('new')
"""
VM = {"kind": "vm_change", "vm": "web-1", "host": "vc.example", "action": "Resize web-1",
      "before": {"cpus": 2, "memory_mb": 2048}, "after": {"cpus": 4, "memory_mb": 2048},
      "reason": "load"}
BUILD = {"kind": "build_publish", "platform": "Roblox", "target": "place 42",
         "commit": "abc123", "duration_seconds": 12,
         "artifact": {"name": "game.rbxl", "size": 1234, "sha256": "f" * 64},
         "log_lines": ["step 1", "built ok"]}


def test_a_code_change_patch_is_coloured_and_a_vm_change_is_a_before_after_table(
        server: Server, page: Page, shots: Path) -> None:
    code = server.run(park(server.queue, "Push this commit?", capability="code", request={
        "kind": "code_change", "repo": "acme/app", "branch": "fix", "title": "Fix it",
        "files": [{"path": "app.py", "added": 1, "removed": 1}]},
        attachments=(NewAttachment("task.patch", PATCH, "text/x-diff"),)))
    vm = server.run(park(server.queue, "Resize web-1?", capability="vm", request=VM))
    build = server.run(park(server.queue, "Publish?", capability="build", request=BUILD))
    sign_in(page)
    patch = page.locator(f"#approval-{code.id} .patch .highlight")
    expect(patch.locator(".gi").last).to_have_text("+print('new')")
    expect(patch.locator(".gd").last).to_have_text("-print('old')")
    changed = page.locator(f"#approval-{vm.id} table.change tr.changed")
    expect(changed).to_have_count(1)
    expect(changed).to_contain_text("cpus")
    expect(changed).to_contain_text("→ 4")
    card = page.locator(f"#approval-{build.id}")
    expect(card.locator("code.sum").first).to_have_text("f" * 64)
    expect(card.locator("pre.log")).to_contain_text("built ok")
    screenshot(page, shots, "inbox-kinds")
    inbox = page.request.get("/?format=json").json()
    assert [a["id"] for a in inbox["approvals"]] == [code.id, vm.id, build.id]  # oldest first


def test_the_task_page_shows_history_and_decisions_and_cancel_works(
        server: Server, page: Page, shots: Path) -> None:
    approval = server.run(park(server.queue, "Send it?"))
    server.run(server.queue.approval_decide(approval.id, "approved", "telegram:7:Alice"))
    sign_in(page)
    page.goto(f"/tasks/{approval.task_id}")
    expect(page.locator("h1")).to_contain_text("approved")
    expect(page.locator(".approval .meta")).to_contain_text("approved by Alice")
    expect(page.locator(".history")).to_contain_text("parked: Send it?")
    expect(page.locator(".history")).to_contain_text("approved by Alice")
    expect(page.locator(".moves button")).to_have_text(["Cancel"])
    screenshot(page, shots, "task")
    page.click(".moves button")
    expect(page.locator("h1")).to_contain_text("cancelled")
    expect(page.locator(".moves button")).to_have_text(["Retry"])
    task = server.run(server.queue.task_get(approval.task_id))
    assert task.status is Status.CANCELLED
    doc = page.request.get(f"/tasks/{approval.task_id}.json").json()
    assert doc["status"] == "cancelled" and doc["allowed"] == ["retry"]
    assert doc["approvals"][0]["decided_by"] == "telegram:7:Alice"


def test_queue_and_signals_pages_in_words_and_json(server: Server, page: Page,
                                                   shots: Path) -> None:
    server.run(server.queue.capability_set("jobs", max_running=2, max_parked=4))
    server.run(park(server.queue, "One?"))
    server.run(server.queue.task_enqueue("jobs", {"n": 2}))
    server.run(Reaper(server.queue).run_once())
    sign_in(page)
    page.goto("/queue")
    section = page.locator("section.cap", has_text="jobs")
    expect(section.locator(".gauge")).to_have_count(2)
    expect(section).to_contain_text("Waiting for a person: 1 of at most 4")
    screenshot(page, shots, "queue")
    doc = page.request.get("/queue.json").json()
    [jobs] = [c for c in doc["capabilities"] if c["capability"] == "jobs"]
    assert jobs["counts"] == {"needs_approval": 1, "pending": 1}
    assert jobs["max_parked"] == {"cap": 4, "used": 1, "percent": 25}
    page.goto("/signals")
    expect(page.locator("main")).to_contain_text("The system is keeping up")
    expect(page.locator("main")).to_contain_text("The reaper last ran")
    expect(page.locator("main")).not_to_contain_text("orphans_requeued")
    screenshot(page, shots, "signals")
    signals = page.request.get("/signals?format=json").json()
    assert signals["open_approvals"] == 1 and "keeping up" in signals["words"]["incident"]
    assert signals["words"]["open"] == "1 question is waiting for an answer now."
    assert signals["words"]["expired"].startswith("0 questions expired")


def test_the_history_reads_in_words_with_the_detail_folded(server: Server, page: Page,
                                                           shots: Path) -> None:
    approval = server.run(park(server.queue, "Submit the form?"))
    server.run(server.queue.approval_decide(approval.id, "revised", "web:bob", "Shorter"))
    sign_in(page)
    page.goto(f"/tasks/{approval.task_id}")
    lines = page.locator(".history > li .what")
    expect(lines.first).to_have_text("enqueued")
    # The web channel's "shown in web" lands wherever its delivery happened to run.
    said = [t for t in lines.all_inner_texts() if t != "shown in web"]
    assert said == ["enqueued", "claimed by w1", "parked: Submit the form?",
                    "sent back for a revision by bob: “Shorter”"]
    detail = page.locator(".history > li details").nth(1)
    expect(detail.locator("code")).to_be_hidden()  # folded away
    detail.locator("summary").click()
    expect(detail.locator("code")).to_contain_text('"from": "pending"')
    screenshot(page, shots, "41-task-history")


def test_an_open_approval_is_decided_on_its_task_page(server: Server, page: Page,
                                                      shots: Path) -> None:
    async def two_eyes() -> int:
        await server.queue.task_enqueue("vm", {"n": 1})
        task = await server.queue.task_claim("vm", "host-a")
        assert task is not None
        parked = await server.queue.task_park(task.id, "host-a", "Delete vm-1?",
                                              claim=task.claim, required_approvals=2)
        return parked.id

    approval_id = server.run(two_eyes())
    task_id = server.run(server.queue.approval_get(approval_id)).task_id
    sign_in(page)
    page.goto(f"/tasks/{task_id}")
    section = page.locator(f"#approval-{approval_id}")
    section.locator("button[value=approve]").click()
    expect(section.locator(".four-eyes")).to_have_text(
        "Approved by alice (1 of 2): waiting for a second person")
    page.reload()
    expect(page.locator(".history")).to_contain_text("approved by alice (1 of 2)")
    expect(page.locator(".history")).to_contain_text("claimed by host-a")
    screenshot(page, shots, "41-task-decide")
    server.run(server.queue.approval_decide(approval_id, "approved", "bob"))
    page.goto(f"/tasks/{task_id}")
    expect(page.locator("h1")).to_contain_text("approved")
    expect(page.locator(".decide")).to_have_count(0)  # decided: no buttons any more
    other = server.run(park(server.queue, "Skip from here?"))
    page.goto(f"/tasks/{other.task_id}")
    page.locator("button.skip").click()
    page.get_by_role("button", name="Confirm skip").click()
    expect(page.locator("h1")).to_contain_text("skipped")
    assert server.run(server.queue.task_get(other.task_id)).status is Status.SKIPPED
