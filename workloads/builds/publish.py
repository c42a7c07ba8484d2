"""The publish stage: only the artifact a person approved, checked twice, sent at most once.

Right before the upload the checksum is computed again from the stored file (a mismatch
parks again with a new summary), then the upload runs as the core's gated action (kind
`build_publish`, fingerprint `sha256`): the approval is read again from the database (an
approve, by a person, of a request naming this checksum) and the gate's started marker is
saved under the claim before anything is sent. A slice that finds the marker without a
recorded result cannot know whether the upload happened, and neither Open Cloud nor
TestFlight takes an idempotency key, so it never uploads again: it asks the person.
"""

from __future__ import annotations

from typing import Any

from taskqueue import (
    ActionUncertain,
    Approval,
    Backoff,
    Decision,
    Done,
    Fail,
    Gate,
    GatedAction,
    NotApproved,
    NothingHappened,
    Outcome,
    rename_points,
)
from workloads.builds.job import BuildJob, PublishError
from workloads.builds.review import KIND, UNKNOWN, park_stage, republish_park
from workloads.builds.store import Artifact

__all__ = ["done", "publish_stage", "resume_after_publish"]

# The gate's steps under this workload's crash-point names.
POINT_NAMES = {"verified": "publish.verified", "marked": "publish.marked",
               "acted": "publish.sent"}


def _gate(job: BuildJob) -> Gate:
    return job.ctx.gate(KIND, field="sha256",
                        checkpoint=rename_points(job.checkpoint, POINT_NAMES))


async def publish_stage(job: BuildJob) -> Outcome:
    """Check the checksum, then upload once through the gate and record the result."""
    approved = job.state["approved"]
    artifact = Artifact.from_json(job.state["build"]["artifact"])
    try:
        sha256, payload = await job.publisher.prepare(job, artifact)
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
    return await _send(job, artifact, sha256, payload)


async def _send(job: BuildJob, artifact: Artifact, sha256: str, payload: Any) -> Outcome:
    async def upload(action: GatedAction) -> dict[str, Any]:
        await job.stage_event("publish_started")
        try:
            return await job.publisher.send(job, artifact, payload)
        except PublishError as exc:
            if not exc.sent:  # the server refused it or was never reached
                raise NothingHappened(str(exc)) from exc
            raise

    gate = _gate(job)
    try:
        sent = await gate.run(sha256, upload, state=job.state)
    except NotApproved as exc:
        await job.stage_event("publish_refused", reason=str(exc))
        return Fail(f"refusing to publish: {exc}", retryable=False)
    except ActionUncertain as exc:  # started before a crash, never recorded
        return await republish_park(job, UNKNOWN, _started(exc.action))
    except NothingHappened as exc:
        assert isinstance(exc.__cause__, PublishError)
        return await _failed(job, exc.__cause__)
    except PublishError as exc:  # maybe sent: ask
        await job.stage_event("publish_uncertain")
        started = await gate.started()
        assert started is not None
        return await republish_park(job, f"{UNKNOWN} ({exc})", _started(started))
    job.state.update(publish_started=_started(sent.action), publish_result=sent.result)
    await job.save()
    await job.checkpoint("publish.end")
    return await done(job, confirmed_by=None)


def _started(action: GatedAction) -> dict[str, Any]:
    return {"sha256": action.fingerprint, "approval_id": action.approval_id,
            "approved_by": action.approved_by, "at": action.started_at.isoformat()}


async def _failed(job: BuildJob, exc: PublishError) -> Outcome:
    """Certainly not sent (the gate dropped its marker): retry later or fail."""
    retries = int(job.state.get("publish_retries", 0)) + 1
    if exc.retryable and retries <= job.settings.max_publish_retries:
        job.state["publish_retries"] = retries
        # A Retry-After as asked (capped); else full jitter under 2**retries seconds.
        backoff = Backoff(2.0, job.settings.retry_after_cap)
        delay = (min(exc.retry_after, job.settings.retry_after_cap)
                 if exc.retry_after is not None else backoff.delay(retries))
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
        return await republish_park(job, UNKNOWN, job.state["publish_started"])
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
