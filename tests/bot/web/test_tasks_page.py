"""The Tasks page in Chromium: filters, keyset pages, orders, the Queue page's links, and
bulk Retry / Cancel confirmed with the count, including a bulk cancel racing a worker."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from taskqueue import LeaseLost, Status, TaskQueue
from tests.bot.web.conftest import Server, park, screenshot, sign_in

pytestmark = pytest.mark.slow  # a real Chromium


async def _finished(queue: TaskQueue, capability: str, status: Status, n: int = 1) -> list[int]:
    """`n` tasks driven to succeeded or failed by a claim."""
    ids = []
    for _ in range(n):
        await queue.task_enqueue(capability, {"n": 1}, max_attempts=1)
        task = await queue.task_claim(capability, "w1")
        assert task is not None
        if status is Status.SUCCEEDED:
            await queue.task_complete(task.id, "w1", claim=task.claim)
        else:
            await queue.task_fail(task.id, "w1", "boom", claim=task.claim, retry=False)
        ids.append(task.id)
    return ids


def _ids(page: Page) -> list[int]:
    return [int(x) for x in page.locator("table.tasks tbody tr[data-task]").evaluate_all(
        "rows => rows.map(r => r.dataset.task)")]


def test_filters_pages_and_orders(server: Server, page: Page, shots: Path) -> None:
    done = server.run(_finished(server.queue, "mail", Status.SUCCEEDED, 3))
    failed = server.run(_finished(server.queue, "vm", Status.FAILED, 2))
    payroll = server.run(park(server.queue, "Deploy the Payroll service?", capability="deploy"))
    server.run(server.queue.approval_decide(payroll.id, "approved", "web:alice"))
    pending = [server.run(server.queue.task_enqueue("mail", {"to": f"p{n}@example.com"})).id
               for n in range(52)]
    every = sorted(done + failed + [payroll.task_id] + pending)
    sign_in(page)
    page.goto("/tasks")
    first = _ids(page)
    assert first == sorted(every, reverse=True)[:50]
    page.click("#next-page")
    assert _ids(page) == sorted(every, reverse=True)[50:]  # keyset: no repeat, none lost
    expect(page.locator("#next-page")).to_have_count(0)
    page.goto("/tasks")
    page.select_option("select[name=status]", "failed")
    page.click("form.filters button[type=submit]")
    assert sorted(_ids(page)) == failed and "status=failed" in page.url
    page.goto("/tasks?capability=mail&status=succeeded&sort=oldest")
    assert _ids(page) == done
    page.goto("/tasks?decided_by=ALICE")  # the person, case-folded, not web:alice
    assert _ids(page) == [payroll.task_id]
    expect(page.locator("table.tasks tbody")).to_contain_text("alice")
    page.goto("/tasks")
    page.fill("input[name=q]", "payroll")
    page.click("form.filters button[type=submit]")
    assert _ids(page) == [payroll.task_id]
    page.goto("/tasks?q=p7%40example.com")
    assert _ids(page) == [pending[7]]
    page.goto("/tasks?age=gt7d")
    expect(page.locator("table.tasks")).to_contain_text("No task matches.")
    page.goto("/tasks?status=failed")
    screenshot(page, shots, "41-tasks")
    doc = page.request.get("/tasks.json?status=lost")
    assert doc.status == 400 and "status is one of" in doc.json()["error"]
    listed = page.request.get("/tasks.json?capability=vm").json()
    assert [t["id"] for t in listed["tasks"]] == sorted(failed, reverse=True)
    assert listed["next"] is None


def test_the_queue_page_counts_link_to_the_matching_list(server: Server, page: Page) -> None:
    failed = server.run(_finished(server.queue, "vm", Status.FAILED, 2))
    server.run(_finished(server.queue, "vm", Status.SUCCEEDED))
    sign_in(page)
    page.goto("/queue")
    page.locator("section.cap", has_text="vm").locator("li.status-failed a").click()
    page.wait_for_url("**/tasks?*")
    assert "capability=vm" in page.url and "status=failed" in page.url
    assert sorted(_ids(page)) == failed


def test_bulk_cancel_of_the_selected_confirms_the_count_and_lists_the_refused(
        server: Server, page: Page, shots: Path) -> None:
    [done] = server.run(_finished(server.queue, "mail", Status.SUCCEEDED))
    waiting = [server.run(server.queue.task_enqueue("mail", {"n": n})).id for n in range(2)]
    sign_in(page)
    page.goto("/tasks")
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.check("#select-all")
    page.click("button[data-action=cancel][data-scope=selected]")
    confirm = page.get_by_role("button", name="Confirm cancel of 3 tasks")
    expect(confirm).to_be_visible()
    expect(page.locator(".bulk .ask")).to_have_text(
        "Cancel the 3 tasks selected? Each keeps its own rules.")
    screenshot(page, shots, "41-bulk-confirm")
    assert server.run(server.queue.task_get(waiting[0])).status is Status.PENDING
    confirm.click()
    expect(page.locator("#bulk-done")).to_have_text("2 of 3 tasks were cancelled.")
    expect(page.locator("#bulk-refused")).to_contain_text(f"Task {done}")
    screenshot(page, shots, "41-bulk-done")
    assert not dialogs
    for task_id in waiting:
        detail = server.run(server.queue.task_detail(task_id))
        assert detail.task.status is Status.CANCELLED
        assert (detail.events[-1].kind, detail.events[-1].actor) == ("cancelled", "web:alice")
    assert server.run(server.queue.task_get(done)).status is Status.SUCCEEDED


def test_bulk_retry_of_all_matching_counts_them_first(server: Server, page: Page) -> None:
    failed = server.run(_finished(server.queue, "vm", Status.FAILED, 3))
    other = server.run(_finished(server.queue, "mail", Status.FAILED))
    sign_in(page)
    page.goto("/tasks?capability=vm&status=failed")
    page.click("button[data-action=retry][data-scope=matching]")
    expect(page.locator(".bulk .ask")).to_have_text(
        "Retry all 3 tasks matching these filters? Each keeps its own rules.")
    page.get_by_role("button", name="Confirm retry of 3 tasks").click()
    expect(page.locator("#bulk-done")).to_have_text("3 of 3 tasks were retried.")
    assert {server.run(server.queue.task_get(t)).status for t in failed} == {Status.PENDING}
    assert server.run(server.queue.task_get(other[0])).status is Status.FAILED
    nothing = page.request.post("/tasks/bulk", form={"action": "cancel", "csrf_token": (
        page.locator("meta[name=csrf-token]").get_attribute("content") or "")},
        headers={"Accept": "application/json"})
    assert nothing.status == 400 and "no task was chosen" in nothing.json()["error"]


def _worker(dsn: str, stop: threading.Event, finished: list[int]) -> None:
    """Claims and completes `race` tasks on a connection pool of its own, in its thread."""

    async def work() -> None:
        async with TaskQueue.connect(dsn, max_size=2) as queue:
            while not stop.is_set():
                task = await queue.task_claim("race", "host-b")
                if task is None:
                    await asyncio.sleep(0.01)
                    continue
                try:
                    await queue.task_complete(task.id, "host-b", claim=task.claim)
                    finished.append(task.id)
                except LeaseLost:
                    pass  # cancelled between the claim and the completion

    asyncio.run(work())


def test_a_bulk_cancel_racing_a_worker_leaves_each_task_in_exactly_one_state(
        server: Server, page: Page) -> None:
    ids = [server.run(server.queue.task_enqueue("race", {"n": n})).id for n in range(80)]
    sign_in(page)
    page.goto("/tasks")
    token = page.locator("meta[name=csrf-token]").get_attribute("content") or ""
    stop, finished = threading.Event(), []
    worker = threading.Thread(target=_worker, args=(server.dsn, stop, finished))
    worker.start()
    try:
        answer = page.request.post("/tasks/bulk", form={
            "action": "cancel", "scope": "matching", "capability": "race",
            "csrf_token": token}, headers={"Accept": "application/json"}).json()
    finally:
        stop.set()
        worker.join(30)
    done, refused = set(answer["done"]), {r["id"] for r in answer["refused"]}
    assert done | refused == set(ids) and not done & refused
    for task_id in ids:
        detail = server.run(server.queue.task_detail(task_id))
        kinds = [e.kind for e in detail.events]
        if task_id in done:
            assert detail.task.status is Status.CANCELLED and task_id not in finished
            assert kinds.count("cancelled") == 1
        else:
            assert detail.task.status is Status.SUCCEEDED and task_id in finished
            assert "cancelled" not in kinds
