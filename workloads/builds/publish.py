"""The publish stage: only the artifact a person approved, checked twice, sent at most once.

Right before the upload the approval is read again from the database (an approve, by a
person, of a `build_publish` request naming this checksum) and the checksum is computed
again from the stored file; a mismatch parks again with a new summary. `publish_started`
is saved (fenced on the claim) before anything is sent. A slice that finds it without a
recorded result cannot know whether the upload happened, and neither Open Cloud nor
TestFlight takes an idempotency key, so it never uploads again: it asks the person.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from taskqueue import Approval, Decision, Done, Fail, Outcome, Status
from workloads.builds.job import BuildJob, PublishError
from workloads.builds.review import KIND, UNKNOWN, park_stage, republish_park
from workloads.builds.store import Artifact

__all__ = ["NotApproved", "approval_problem", "done", "publish_stage", "resume_after_publish"]


class NotApproved(Exception):
    """The database does not show a person's approve of this exact artifact."""


def approval_problem(job: BuildJob, fresh_status: Status, fresh_claim: str | None,
                     a: Approval | None, expected: str) -> str | None:
    """Why the latest approval does not allow this upload; None when it does."""
    if fresh_status != Status.RUNNING or fresh_claim != job.task.claim:
        return f"this worker no longer holds the task (it is {fresh_status.value})"
    if a is None or a.decision != Decision.APPROVED:
        return f"the latest decision is {a.decision.value if a and a.decision else 'none'}"
    if not (a.decided_by or "").strip():
        return "the approval names no person"
    if a.request.get("kind") != KIND:
        return f"the latest approval is a {a.request.get('kind')!r} question, not a publish"
    if a.request.get("sha256") != expected:
        return "the approved checksum differs from the artifact about to be published"
    return None


async def _verify(job: BuildJob, expected: str) -> Approval:
    fresh = await job.ctx.queue.task_get(job.task.id)
    problem = approval_problem(job, fresh.status, fresh.claim, fresh.approval, expected)
    if problem is not None or fresh.approval is None:
        raise NotApproved(problem)
    return fresh.approval


async def publish_stage(job: BuildJob) -> Outcome:
    """Verify the approve and the checksum, mark, upload once, record the result."""
    approved = job.state["approved"]
    artifact = Artifact.from_json(job.state["build"]["artifact"])
    try:
        approval = await _verify(job, approved["sha256"])
        sha256, payload = await job.publisher.prepare(job, artifact)
    except NotApproved as exc:
        await job.stage_event("publish_refused", reason=str(exc))
        return Fail(f"refusing to publish: {exc}", retryable=False)
    except OSError:  # the stored file is gone: build again; the new one needs a new approve
        await job.stage_event("artifact_missing")
        job.state.pop("approved")
        job.state.update(stage="build")
        return job.release()
    except PublishError as exc:  # not ready to send (no key, no place id): nothing was sent
        return await _failed(job, exc)
    if sha256 != approved["sha256"]:
        await job.stage_event("checksum_mismatch", approved=approved["sha256"], now=sha256)
        job.state.pop("approved")
        return await park_stage(job, warning="the artifact's checksum no longer matched "
                                              f"the approved one ({approved['sha256'][:12]})")
    await job.checkpoint("publish.verified")
    return await _send(job, artifact, approval, payload)


async def _send(job: BuildJob, artifact: Artifact, approval: Approval, payload: Any) -> Outcome:
    job.state["publish_started"] = {
        "sha256": job.state["approved"]["sha256"], "approval_id": approval.id,
        "approved_by": approval.decided_by, "at": datetime.now(UTC).isoformat()}
    await job.save()
    await job.stage_event("publish_started")
    await job.checkpoint("publish.marked")
    try:
        result = await job.publisher.send(job, artifact, payload)
    except PublishError as exc:
        return await _failed(job, exc)
    await job.checkpoint("publish.sent")
    job.state["publish_result"] = result
    await job.save()
    await job.checkpoint("publish.end")
    return await done(job, confirmed_by=None)


async def _failed(job: BuildJob, exc: PublishError) -> Outcome:
    """Maybe sent: ask. Certainly not sent: clear the marker; retry later or fail."""
    if exc.sent:
        await job.stage_event("publish_uncertain")
        return await republish_park(job, f"{UNKNOWN} ({exc})")
    job.state.pop("publish_started", None)
    retries = int(job.state.get("publish_retries", 0)) + 1
    if exc.retryable and retries <= job.settings.max_publish_retries:
        job.state["publish_retries"] = retries
        delay = min(exc.retry_after if exc.retry_after is not None else 2.0 ** retries,
                    job.settings.retry_after_cap)
        await job.stage_event("publish_retry", retries=retries, delay=delay)
        return job.release(delay)
    job.state["publish_retries"] = 0  # the queue's own backoff and max_attempts take over
    await job.save()
    await job.stage_event("publish_failed", retryable=exc.retryable)
    return Fail(f"publish failed: {exc}", retryable=exc.retryable)


async def resume_after_publish(job: BuildJob, answer: Approval | None) -> Outcome | None:
    """A slice of a task whose upload may have happened: never upload again unasked.

    None when the person approved another upload (the caller runs the publish stage)."""
    if job.state.get("publish_result") is not None:
        return await done(job, confirmed_by=None)
    if answer is None or answer.request.get("step") != "republish":
        return await republish_park(job, UNKNOWN)
    if answer.decision == Decision.REVISED:
        job.state["publish_result"] = {"unconfirmed": True, "note": answer.note}
        return await done(job, confirmed_by=answer.decided_by)
    job.state.pop("publish_started")
    job.state.update(stage="publish", approved={
        "sha256": answer.request.get("sha256"), "approval_id": answer.id})
    await job.stage_event("republish_approved")
    return None


async def done(job: BuildJob, confirmed_by: str | None) -> Done:
    build, started = job.state["build"], job.state["publish_started"]
    await job.stage_event("published", confirmed_by=confirmed_by)
    artifact = build["artifact"]
    return Done({
        "status": "published", "platform": job.publisher.platform,
        "target": job.publisher.target(job.settings), "commit": build["commit"],
        "artifact": {k: artifact[k] for k in ("name", "size", "sha256")},
        "approved_by": started["approved_by"], "approval_id": started["approval_id"],
        "published": job.state["publish_result"], "confirmed_by": confirmed_by,
    })
