"""Helpers for driving job-application tasks through the queue in tests."""

from __future__ import annotations

from collections import Counter
from typing import Any
from urllib.parse import urlparse

from taskqueue import Decision, Handler, TaskQueue, TickReport
from tests.workloads import crash_counting
from tests.workloads.crash_counting import backdate, reap_dead_worker
from workloads.job_applications.boards import Posting
from workloads.job_applications.codec import payload_for
from workloads.job_applications.rank import Ranked, dedupe_key

from .fake_site import FakeSite

CAP = "job_applications"
__all__ = ["CAP", "assert_invariant", "backdate", "drain", "greenhouse_payload", "lever_payload",
           "reap_dead_worker", "submissions_by_task", "tick"]


async def tick(queue: TaskQueue, handler: Handler, worker: str = "w1",
               lease: float = 60) -> TickReport:
    """One scheduler tick: claim one task, run one slice."""
    return await crash_counting.tick(queue, handler, CAP, worker, lease)


async def drain(queue: TaskQueue, handler: Handler, limit: int = 60) -> list[TickReport]:
    """Tick until nothing is claimable; the reports of the ticks that ran a slice."""
    done = []
    for _ in range(limit):
        report = await tick(queue, handler)
        if report.task_id is None:
            return done
        done.append(report)
    raise AssertionError(f"still claimable after {limit} ticks")


async def submissions_by_task(queue: TaskQueue, site: FakeSite) -> dict[int, int]:
    """How many POSTs the form server received for each task (by its form's path)."""
    paths = Counter(s.path for s in site.forms.submissions)
    tasks = await queue.task_list(capability=CAP)
    by_path = {urlparse(t.payload["posting"]["apply_url"]).path: t.id for t in tasks}
    unknown = set(paths) - set(by_path)
    assert not unknown, f"submissions to forms of no task: {unknown}"
    return {by_path[p]: n for p, n in paths.items()}


async def assert_invariant(queue: TaskQueue, site: FakeSite) -> dict[int, int]:
    """No submission without an approve by a person for the fill that was submitted;
    at most one submission per task."""
    counts = await submissions_by_task(queue, site)
    for task_id, n in counts.items():
        assert n <= 1, f"task {task_id} was submitted {n} times"
        detail = await queue.task_detail(task_id)
        approved = {a.request.get("fingerprint") for a in detail.approvals
                    if a.decision == Decision.APPROVED and (a.decided_by or "").strip()
                    and a.request.get("kind") == "job_application"}
        assert approved, f"task {task_id} was submitted without an approve by a person"
        t = detail.task
        marker = t.state.get("submit_started") or t.result or {}
        if marker.get("fingerprint"):
            assert marker["fingerprint"] in approved, f"task {task_id}: unapproved fill sent"
        for action in await queue.gated_action_list(task_id):  # every click the gate allowed
            assert action.fingerprint in approved, f"task {task_id}: unapproved fill sent"
    return counts


def greenhouse_payload(site: FakeSite, job_id: str, title: str = "Senior Backend Engineer",
                       ) -> dict[str, Any]:
    """A task payload for one of the replica Greenhouse forms, as the producer makes it."""
    url = site.url(f"/greenhouse/nordwind/jobs/{job_id}")
    posting = Posting("greenhouse", "nordwind", job_id, "Nordwind Energie GmbH", title,
                      "Berlin, Germany", False, url, url,
                      "Python and PostgreSQL, Kafka and Kubernetes.")
    return payload_for(Ranked(posting, 70, ("PostgreSQL", "Python"), dedupe_key(posting)))


def lever_payload(site: FakeSite, posting_id: str) -> dict[str, Any]:
    url = site.url(f"/lever/fjord/{posting_id}")
    posting = Posting("lever", "fjord", posting_id, "Fjord Analytics", "Platform Engineer",
                      "Remote", True, url, f"{url}/apply", "Kubernetes and Terraform.")
    return payload_for(Ranked(posting, 60, ("Kubernetes",), dedupe_key(posting)))
