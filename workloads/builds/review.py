"""What a person sees before a publish: the build summary parked as a `build_publish` request
(commit, duration, artifact name, size and checksum, the log's tail attached), and the
question asked when a worker died around an upload.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from taskqueue import NewAttachment, Outcome, Park
from workloads.builds.git import shown_repository
from workloads.builds.job import BuildJob
from workloads.builds.store import Artifact, sha256_file

__all__ = ["KIND", "LOG_NAME", "park_stage", "republish_park", "shown_repository"]

KIND = "build_publish"
LOG_NAME = "build-log-tail.txt"
# The last lines of the log that go into the message itself (all of the tail is attached).
SHOWN_LINES = 12
PUBLISH_HELP = ("Approve: publish exactly this artifact (its checksum is checked again right "
                "before the upload). Revise: build the commit again. Skip: do not publish.")
REPUBLISH_HELP = ("Approve: upload this artifact again. Revise: do not upload again; the "
                  "earlier upload counts (the task ends succeeded). Skip: drop it.")
UNKNOWN = ("the worker stopped after recording that it was about to publish and before "
           "recording the result; Open Cloud and TestFlight take no idempotency key, so it "
           "will not upload again without you")
def request_for(job: BuildJob, artifact: Artifact, sha256: str, step: str,
                warning: str | None) -> dict[str, Any]:
    """The request's JSON: everything the template shows, and the checksum approved."""
    build = job.state["build"]
    tail = [line[:300] for line in build["log_tail"].strip().splitlines()[-SHOWN_LINES:]]
    request: dict[str, Any] = {
        "kind": KIND, "step": step, "capability": job.task.capability,
        "platform": job.publisher.platform, "target": job.publisher.target(job.settings),
        "repository": shown_repository(job.source.repository), "commit": build["commit"],
        "branch": build.get("branch"), "duration_seconds": build["duration"],
        "artifact": {"name": artifact.name, "size": artifact.size, "sha256": sha256},
        "sha256": sha256,
        "other_artifacts": [{k: a[k] for k in ("name", "size", "sha256")}
                            for a in build.get("others", [])],
        "log_lines": tail, "log_truncated": build.get("log_truncated", False),
        "how_to_answer": PUBLISH_HELP if step == "publish" else REPUBLISH_HELP,
    }
    if warning:
        request["warning"] = warning
    return request


def _log_attachment(job: BuildJob) -> NewAttachment:
    return NewAttachment(LOG_NAME, job.state["build"]["log_tail"].encode("utf-8"), "text/plain")


async def park_stage(job: BuildJob, warning: str | None = None) -> Outcome:
    """Ask whether to publish the stored artifact, showing the checksum read from it now."""
    artifact = Artifact.from_json(job.state["build"]["artifact"])
    try:
        sha256 = await asyncio.to_thread(sha256_file, Path(artifact.path))
    except OSError:
        await job.stage_event("artifact_missing")
        job.state["stage"] = "build"
        return job.release()
    if sha256 != artifact.sha256:
        changed = (f"the stored file changed since the build (built {artifact.sha256[:12]}, "
                   f"now {sha256[:12]})")
        warning = f"{warning}; {changed}" if warning else changed
    request = request_for(job, artifact, sha256, "publish", warning)
    job.state.update(stage="await", parked_sha256=sha256)
    await job.stage_event("parked", sha256=sha256)
    await job.checkpoint("park.middle")
    return Park(f"Publish {artifact.name} ({job.source.commit[:12]}) to "
                f"{request['target']}?", request=request, state=dict(job.state),
                attachments=(_log_attachment(job),),
                required_approvals=job.settings.publish_approvals)


async def republish_park(job: BuildJob, reason: str, started: dict[str, Any]) -> Outcome:
    """The upload may or may not have happened (`started`: the gate's marker, which has no
    result): ask before uploading again."""
    artifact = Artifact.from_json(job.state["build"]["artifact"])
    job.state["publish_started"] = started
    request = request_for(job, artifact, started["sha256"], "republish",
                          f"{reason}; approved by {started['approved_by']} at {started['at']}")
    job.state["stage"] = "await_republish"
    await job.stage_event("republish_asked")
    return Park(f"Did {artifact.name} reach {request['target']}? Upload it again?",
                request=request, state=dict(job.state), attachments=(_log_attachment(job),),
                required_approvals=job.settings.publish_approvals)
