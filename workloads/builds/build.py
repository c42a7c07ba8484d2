"""The build stage: a clean checkout at the commit, the configured command, the artifacts
stored with their checksums. Its result is saved before anything else happens, so a crash
later (parking, publishing) never builds again.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import signal
import socket
from collections.abc import Mapping, Sequence
from pathlib import Path

from taskqueue import CommandError, CommandResult, Fail, Outcome, run_command
from workloads.builds.environment import clean_env
from workloads.builds.git import CheckoutError, checkout
from workloads.builds.job import BuildJob
from workloads.builds.store import Artifact

__all__ = ["build_stage", "expand", "kill_leftover"]

_PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")
PID_FILE = "build.pid"
# Lines of the log's tail that a failure's message carries.
FAIL_LINES = 5


def expand(template: Sequence[str], values: Mapping[str, str]) -> list[str]:
    """The command with `{name}` placeholders filled in; each item stays one argument."""
    return [_PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), item)
            for item in template]


def kill_leftover(folder: Path) -> bool:
    """Kill the process group a dead worker's build left running on this host, if any.

    The build runs in its own session, so a kill -9 of the worker does not stop it; its
    group id is in the pid file (with the host name, since folders can be shared)."""
    try:
        host, pgid_text = (folder / PID_FILE).read_text().split()
        pgid = int(pgid_text)
    except (OSError, ValueError):
        return False
    if host != socket.gethostname() or not _ours(pgid, folder):
        return False
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def _ours(pgid: int, folder: Path) -> bool:
    """Whether `pgid` still leads a group working in `folder` (ids get reused)."""
    try:
        if os.getpgid(pgid) != pgid:
            return False
        cwd = Path(f"/proc/{pgid}/cwd")
        # Where /proc exists (Linux) the leader must be working in this task's checkout;
        # elsewhere (macOS) the group id and the file removed after each build must do.
        return not Path("/proc/self").exists() or folder.resolve() in cwd.resolve().parents
    except (ProcessLookupError, PermissionError, OSError):
        return False


async def _fresh(job: BuildJob) -> tuple[Path, Path]:
    folder = job.folder
    if kill_leftover(folder):
        job.ctx.log.warning("killed a build left running by a dead worker")
    # A checkout with its build products can be gigabytes: off the loop, so heartbeats run.
    await asyncio.to_thread(shutil.rmtree, folder, ignore_errors=True)
    output = folder / "out"
    output.mkdir(parents=True)
    return folder / "src", output


def _last_lines(result: CommandResult) -> str:
    lines = result.text().strip().splitlines()[-FAIL_LINES:]
    return " | ".join(line.strip()[:200] for line in lines) or "no output"


async def _run(job: BuildJob, workspace: Path, output: Path) -> CommandResult:
    s, src = job.settings, job.source
    argv = expand(s.command, {"workspace": str(workspace), "output": str(output),
                              "commit": src.commit, "branch": src.branch or ""})

    pid_file = job.folder / PID_FILE

    def started(pid: int) -> None:
        pid_file.write_text(f"{socket.gethostname()} {pid}\n")

    try:
        return await run_command(
            argv, cwd=workspace, log=job.folder / "build.log", env=clean_env(),
            timeout=s.timeout, cancelled=job.ctx.cancelled, max_log_bytes=s.log_max_bytes,
            tail_bytes=s.log_tail_bytes, heartbeat=job.heartbeat,
            heartbeat_every=job.beat_every, on_start=started)
    finally:  # the group is gone: only a worker killed mid-build leaves the file behind
        pid_file.unlink(missing_ok=True)


def _collect(job: BuildJob, output: Path) -> list[Path] | str:
    """The output's files matching the globs; a message when they cannot be published."""
    # Symlinks are not followed: a build must not hand over a file from outside its output.
    found = sorted({p for g in job.settings.artifacts for p in output.glob(g)
                    if p.is_file() and not p.is_symlink()})
    if not found:
        return f"the build produced no file matching {', '.join(job.settings.artifacts)}"
    too_big = [p.name for p in found if p.stat().st_size > job.settings.max_artifact_bytes]
    if too_big:
        return f"artifacts over {job.settings.max_artifact_bytes} bytes: {', '.join(too_big)}"
    publishable = [p for p in found if p.suffix.lower() in job.publisher.suffixes]
    if len(publishable) != 1:
        return (f"expected exactly one {' or '.join(job.publisher.suffixes)} file, found "
                f"{len(publishable)}: {', '.join(p.name for p in publishable) or 'none'}")
    return [publishable[0], *(p for p in found if p != publishable[0])]


async def build_stage(job: BuildJob) -> Outcome | None:
    """Check out, build, store. None when built (the caller parks); else the outcome."""
    workspace, output = await _fresh(job)
    try:
        head = await checkout(job.source, workspace, timeout=job.settings.git_timeout)
        await job.stage_event("building", commit=head)
        result = await _run(job, workspace, output)
    except CheckoutError as exc:
        await job.stage_event("checkout_failed")
        return Fail(f"checkout failed: {exc}", retryable=exc.retryable)
    except CommandError as exc:
        return Fail(f"build: {exc}", retryable=False)
    if result.stopped == "cancelled":
        return job.release()  # the next slice builds again from a clean workspace
    if not result.ok:
        await job.stage_event("build_failed", exit_code=result.exit_code, why=result.stopped)
        why = (f"timed out after {job.settings.timeout:g} s" if result.stopped
               else f"exited with {result.exit_code}")
        return Fail(f"build {why}: {_last_lines(result)}", retryable=bool(result.stopped))
    return await _store(job, head, output, result)


async def _store(job: BuildJob, head: str, output: Path, result: CommandResult
                 ) -> Outcome | None:
    files = _collect(job, output)
    if isinstance(files, str):
        await job.stage_event("build_failed", why="artifacts")
        return Fail(files, retryable=False)
    stored = [await asyncio.to_thread(job.store.put, p, p.name) for p in files]
    await job.checkpoint("build.middle")
    job.state.update(stage="park", build=_summary(job, head, result, stored))
    await job.save()
    await job.stage_event("built", sha256=stored[0].sha256, seconds=round(result.seconds, 1))
    await job.checkpoint("build.end")
    # The log stays for whoever looks at the host; the checkout goes.
    await asyncio.to_thread(shutil.rmtree, job.folder / "src", ignore_errors=True)
    return None


def _summary(job: BuildJob, head: str, result: CommandResult,
             stored: list[Artifact]) -> dict[str, object]:
    return {
        "commit": head, "branch": job.source.branch, "duration": round(result.seconds, 1),
        "log_bytes": result.log_bytes, "log_truncated": result.truncated,
        "log_tail": result.text(), "artifact": stored[0].to_json(),
        "others": [a.to_json() for a in stored[1:]],
    }
