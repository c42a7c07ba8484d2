"""THE INVARIANT: no submission without an approve by a person for the current fill, and at
most one per approved task, whatever point the worker dies at.

Two ways to die: in-process, a checkpoint stops the slice forever and the test cancels it
(nothing after that point runs, no outcome is applied, the lease lapses), at every named
point; and as real processes killed with SIGKILL at the points around the click.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest
from playwright.async_api import Browser

from taskqueue import Handler, Status, Task, TaskQueue
from tests.workloads.crash_counting import Crasher, forced, run_to_the_end
from workloads.job_applications.checkpoints import CRASH_DIR_ENV, CRASH_ENV, POINTS
from workloads.job_applications.handler import make_handler
from workloads.job_applications.settings import JobSettings

from .fake_form_pages import GREENHOUSE_OK, LEVER_OK
from .fake_site import FakeSite
from .pipeline import (
    CAP,
    assert_invariant,
    backdate,
    greenhouse_payload,
    lever_payload,
    reap_dead_worker,
    submissions_by_task,
    tick,
)

pytestmark = pytest.mark.slow


async def _answer(queue: TaskQueue, site: FakeSite, task_id: int) -> None:
    """A truthful person: approve the application; on "did it go through?", say what the
    form server saw."""
    task = await queue.task_get(task_id)
    assert task.approval is not None
    if task.approval.request["kind"] == "job_application":
        await queue.approval_decide_for_task(task_id, "approved", "mara")
    elif (await submissions_by_task(queue, site)).get(task_id):
        await queue.approval_decide_for_task(task_id, "approved", "mara", "it went through")
    else:
        await queue.approval_decide_for_task(task_id, "revised", "mara", "it did not")


async def _run_to_the_end(queue: TaskQueue, site: FakeSite, handler: Handler,
                          crasher: Crasher, task_id: int) -> None:
    async def check() -> None:  # after every slice, crashed or not
        await assert_invariant(queue, site)

    async def answer(task: Task) -> None:
        await _answer(queue, site, task_id)

    await run_to_the_end(queue, handler, CAP, task_id, crasher, check=check, answer=answer,
                         limit=80)


async def test_a_worker_dying_at_any_point_never_submits_without_approval(
    queue: TaskQueue, site: FakeSite, settings: JobSettings, browser: Browser
) -> None:
    everywhere = [p for p in POINTS if p != "submit.end"]
    crasher = Crasher(everywhere)
    handler = make_handler(settings, browser=browser, checkpoint=crasher)
    first = (await queue.task_enqueue(CAP, greenhouse_payload(site, GREENHOUSE_OK),
                                      max_attempts=50)).id
    await _run_to_the_end(queue, site, handler, crasher, first)
    assert crasher.fired == everywhere
    # Died after saving `submit_started` (not clicked): asked, told "no", approved again;
    # died after the click: asked, told "yes". One submission in all.
    assert await assert_invariant(queue, site) == {first: 1}
    result = (await queue.task_get(first)).result
    assert result is not None and result["confirmed_by"] == "mara"

    crasher = Crasher(["submit.end"])  # the outcome was saved: no need to ask
    handler = make_handler(settings, browser=browser, checkpoint=crasher)
    second = (await queue.task_enqueue(CAP, lever_payload(site, LEVER_OK), max_attempts=50)).id
    await _run_to_the_end(queue, site, handler, crasher, second)
    assert crasher.fired == ["submit.end"]
    assert await assert_invariant(queue, site) == {first: 1, second: 1}
    result = (await queue.task_get(second)).result
    assert result is not None and result["confirmed_by"] is None
    assert "Application submitted" in result["confirmation_text"]


SLICE = """
import asyncio, sys
from taskqueue import CapabilityRun, TaskQueue, Tick
from workloads.job_applications.handler import handle

async def main(dsn):
    async with TaskQueue.connect(dsn) as queue:
        run = CapabilityRun("job_applications", handle, lease=60)
        report = await Tick(queue, run, "process-worker").run_once()
        print(report.outcome)

asyncio.run(main(sys.argv[1]))
"""


def _config(settings: JobSettings, folder: Path) -> Path:
    boards = "".join(
        f'\n[[workloads.job_applications.boards]]\nkind = "{b.kind}"\ntoken = "{b.token}"\n'
        f'base_url = "{b.base_url}"\n' for b in settings.boards)
    path = folder / "signoff.toml"
    path.write_text(
        f'[workloads.job_applications]\nprofile = "{settings.profile}"\n'
        f'artifacts = "{settings.artifacts}"\nbrowser_timeout_seconds = 15\n{boards}', "utf-8")
    return path


async def _process_slice(dsn: str, config: Path, crash_dir: Path) -> int:
    env = {**os.environ, "SIGNOFF_CONFIG": str(config), CRASH_DIR_ENV: str(crash_dir),
           CRASH_ENV: "submit.marked,submit.clicked"}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", SLICE, dsn, env=env, cwd=Path(__file__).parents[3],
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL)
    return await proc.wait()


async def _until_application_parked(queue: TaskQueue, site: FakeSite, handler: Handler,
                                    task_id: int) -> None:
    for _ in range(10):
        task = await queue.task_get(task_id)
        if task.status != Status.NEEDS_APPROVAL:
            await tick(queue, handler)
        elif task.approval is not None and task.approval.request["kind"] == "job_application":
            return
        else:
            await _answer(queue, site, task_id)
    raise AssertionError("never parked with the application")


async def test_a_worker_killed_around_the_click_never_clicks_again(
    queue: TaskQueue, dsn: str, site: FakeSite, settings: JobSettings, browser: Browser,
    tmp_path: Path
) -> None:
    config, crash_dir = _config(settings, tmp_path), tmp_path / "crashed"
    crash_dir.mkdir()
    handler = make_handler(settings, browser=browser)
    task_id = (await queue.task_enqueue(CAP, greenhouse_payload(site, GREENHOUSE_OK))).id
    for expected in (0, 1):  # killed before the click, then killed after it
        await _until_application_parked(queue, site, handler, task_id)
        await queue.approval_decide_for_task(task_id, "approved", "mara")
        assert await _process_slice(dsn, config, crash_dir) == -9  # SIGKILL
        await reap_dead_worker(queue)
        assert await assert_invariant(queue, site) == ({task_id: 1} if expected else {})
        await tick(queue, handler)  # resumed: it asks instead of clicking
        task = await queue.task_get(task_id)
        assert task.approval is not None and task.approval.request["kind"] == \
            "job_application_confirm"
    assert sorted(p.name for p in crash_dir.iterdir()) == ["submit.clicked", "submit.marked"]
    await _answer(queue, site, task_id)
    await tick(queue, handler)
    assert (await queue.task_get(task_id)).status == Status.SUCCEEDED
    assert await assert_invariant(queue, site) == {task_id: 1}


async def _refused(queue: TaskQueue, handler: Handler, task_id: int, reason: str) -> None:
    await tick(queue, handler)
    task = await queue.task_get(task_id)
    assert task.status == Status.FAILED, task.status
    assert reason in (task.last_error or ""), task.last_error


async def test_the_submit_checks_the_approval_in_the_database_right_before_the_click(
    queue: TaskQueue, site: FakeSite, settings: JobSettings, browser: Browser
) -> None:
    handler = make_handler(settings, browser=browser)
    task_id = (await queue.task_enqueue(CAP, greenhouse_payload(site, GREENHOUSE_OK))).id
    await _until_application_parked(queue, site, handler, task_id)
    # A state that says "submit" proves nothing: the approval is still open.
    await backdate(queue, "UPDATE tasks SET status = 'pending', state = state || "
                          "'{\"stage\": \"submit\"}' WHERE id = %s", task_id)
    await _refused(queue, handler, task_id, "the latest decision is none")
    # Approved, but by nobody.
    await forced(queue, "UPDATE approvals SET decision = 'approved', decided_at = now() "
                          "WHERE task_id = %s", task_id)
    await queue.task_retry(task_id)
    await _refused(queue, handler, task_id, "the approval names no person")
    # Approved by a person, but for another fill.
    await backdate(queue, "UPDATE approvals SET decided_by = 'mara', request = request || "
                          "'{\"fingerprint\": \"0000\"}' WHERE task_id = %s", task_id)
    await queue.task_retry(task_id)
    await _refused(queue, handler, task_id, "fingerprint differs")
    assert site.forms.submissions == []


async def test_a_worker_that_lost_its_task_before_the_click_does_not_click(
    queue: TaskQueue, site: FakeSite, settings: JobSettings, browser: Browser
) -> None:
    stolen: list[str] = []

    async def reaped_meanwhile(name: str) -> None:
        if name == "submit.filled" and not stolen:  # the lease lapsed while the form loaded
            stolen.append(name)
            await reap_dead_worker(queue)

    handler = make_handler(settings, browser=browser, checkpoint=reaped_meanwhile)
    task_id = (await queue.task_enqueue(CAP, greenhouse_payload(site, GREENHOUSE_OK))).id
    await _until_application_parked(queue, site, handler, task_id)
    await queue.approval_decide_for_task(task_id, "approved", "mara")
    assert (await tick(queue, handler)).outcome == "lease_lost"
    assert site.forms.submissions == [] and stolen
    assert (await tick(queue, handler, worker="w2")).outcome == "done"
    assert await assert_invariant(queue, site) == {task_id: 1}
