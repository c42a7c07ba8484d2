"""`ios_build`: build an .ipa (xcodebuild or fastlane, on a macOS host), upload to TestFlight.

The upload is a configured command (default `fastlane pilot upload --ipa {artifact}`). The
App Store Connect API key reaches it only through its environment (SIGNOFF_ASC_KEY_ID,
SIGNOFF_ASC_ISSUER_ID, SIGNOFF_ASC_KEY_PATH), never its arguments, and is never logged.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from taskqueue import CommandError, Outcome, Task, TaskContext, run_command
from workloads.builds.build import expand
from workloads.builds.environment import clean_env
from workloads.builds.handler import make_handler
from workloads.builds.job import BuildJob, PublishError
from workloads.builds.settings import BuildSettings, load_settings
from workloads.builds.store import Artifact, sha256_file

__all__ = ["ASC_ENV", "CAPABILITY", "TestFlight", "handle"]

CAPABILITY = "ios_build"
ASC_ENV = ("SIGNOFF_ASC_KEY_ID", "SIGNOFF_ASC_ISSUER_ID", "SIGNOFF_ASC_KEY_PATH")


class TestFlight:
    """Uploads an .ipa with the configured command."""

    platform = "iOS"
    suffixes: tuple[str, ...] = (".ipa",)

    def target(self, settings: BuildSettings) -> str:
        return "TestFlight"

    async def prepare(self, job: BuildJob, artifact: Artifact) -> tuple[str, Any]:
        missing = [name for name in ASC_ENV if not os.environ.get(name)]
        if missing:
            raise PublishError(f"the App Store Connect key is not set: {', '.join(missing)}",
                               retryable=False)
        path = Path(artifact.path)
        return await asyncio.to_thread(sha256_file, path), path

    async def send(self, job: BuildJob, artifact: Artifact, payload: Any) -> dict[str, Any]:
        s = job.settings
        argv = expand(s.upload_command, {"artifact": str(payload), "commit": job.source.commit,
                                         "branch": job.source.branch or ""})
        job.folder.mkdir(parents=True, exist_ok=True)
        key = {name: os.environ[name] for name in ASC_ENV}
        try:
            result = await run_command(
                argv, cwd=job.folder, log=job.folder / "upload.log", env=clean_env(key),
                timeout=s.upload_timeout, cancelled=job.ctx.cancelled,
                max_log_bytes=s.log_max_bytes, tail_bytes=s.log_tail_bytes,
                heartbeat=job.heartbeat, heartbeat_every=job.beat_every)
        except CommandError as exc:
            raise PublishError(f"upload: {exc}", retryable=False) from None
        last = result.text().strip().splitlines()[-3:]
        if result.stopped:  # killed mid-upload: it may have gone through
            raise PublishError(f"the upload was stopped ({result.stopped})", retryable=True,
                               sent=True)
        if result.exit_code != 0:
            raise PublishError(f"the upload command exited with {result.exit_code}: "
                               + " | ".join(line[:200] for line in last), retryable=False)
        return {"exit_code": 0, "output": "\n".join(line[:200] for line in last)}


def _settings() -> BuildSettings:
    return load_settings(CAPABILITY)


_handler = make_handler(_settings, TestFlight())


async def handle(task: Task, ctx: TaskContext) -> Outcome:
    """The configured handler (`workloads.builds.ios:handle`)."""
    return await _handler(task, ctx)
