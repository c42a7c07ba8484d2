"""Stages 1 and 2: the agent edits a worktree and the change is committed; then the tests run.

A slice that dies while the agent runs leaves `work_started` in the state: the next slice
stops what is left of that run, removes the worktree and starts it again from the same
commit. An agent that changes nothing fails the task for good on the first round (there is
nothing to review); on a revise round the unchanged commit is parked again, saying so.
"""

from __future__ import annotations

from taskqueue import CommandResult, Fail, Outcome
from workloads.code_changes.change import Change
from workloads.code_changes.git import GitError, git
from workloads.code_changes.marked import Interrupted

__all__ = ["test_stage", "work_stage"]

TAIL_IN_ERROR = 600


async def _fresh_start(c: Change) -> str:
    """Fetch, resolve the base branch, and return its commit (the first round's start)."""
    mirror = await c.ws.fetch(c.payload.repo)
    base = await c.ws.sha(mirror, f"refs/remotes/origin/{c.payload.base}")
    if base is None:
        raise LookupError(f"the repository has no branch {c.payload.base!r}")
    c.state["base_sha"] = base
    return base


async def _reusable(c: Change, start: str) -> bool:
    """The worktree is the parked one, untouched: a revise runs the agent in it again."""
    if c.state.get("work_started") or not c.worktree.exists():
        return False
    try:
        head = await git("rev-parse", "HEAD", cwd=c.worktree)
        dirty = await git("status", "--porcelain", cwd=c.worktree)
    except GitError:
        return False
    return head == start and not dirty


async def prepare(c: Change) -> str:
    """A worktree at the round's start commit; returns that commit."""
    start = c.state.get("head")
    if start is None:
        start = await _fresh_start(c)
    elif await _reusable(c, start):
        return str(start)
    await c.ws.add_worktree(c.mirror, c.task.id, start)
    return str(start)


def agent_failure(result: CommandResult, what: str, timeout: float) -> Fail:
    if result.timed_out:
        return Fail(f"the {what} timed out after {timeout:g} s", retryable=True)
    tail = result.text().strip()[-TAIL_IN_ERROR:]
    return Fail(f"the {what} exited with {result.exit_code}: {tail}", retryable=True)


async def work_stage(c: Change) -> Outcome:
    """Run the agent with the instruction (and notes), then commit what it changed."""
    if not c.settings.agent_command:
        return Fail("workloads.code_changes.agent_command is not set", retryable=False)
    try:
        start = await prepare(c)
    except LookupError as exc:
        return Fail(str(exc), retryable=False)
    except GitError as exc:
        return Fail(f"cannot prepare the worktree: {exc}", retryable=True)
    rounds = int(c.state.get("round", 0)) + 1
    c.state["work_started"] = {"start": start, "round": rounds}
    await c.save()
    await c.stage_event("prepared", round=rounds)
    try:
        result = await c.run(c.settings.agent_command, f"agent-{rounds}",
                             c.settings.agent_timeout)
    except Interrupted:
        return c.release()  # the marker stays: the next slice starts this round again
    await c.stage_event("agent_ran", round=rounds, exit_code=result.exit_code,
                        seconds=round(result.seconds, 1), output_bytes=result.output_bytes)
    if not result.ok:
        return agent_failure(result, "agent", c.settings.agent_timeout)
    await c.checkpoint("work.agent_done")
    return await _commit_stage(c, start, rounds)


async def _commit_stage(c: Change, start: str, rounds: int) -> Outcome:
    try:
        head = await commit(c, rounds)
    except GitError as exc:
        return Fail(f"cannot commit the agent's change: {exc}", retryable=True)
    except ValueError as exc:
        return Fail(str(exc), retryable=False)
    await c.checkpoint("work.committed")
    c.state.pop("work_started", None)
    c.state["round"] = rounds
    if head == start:
        if rounds == 1:
            await c.stage_event("empty_diff", round=rounds)
            await c.ws.remove_worktree(c.mirror, c.task.id)
            return Fail("the agent changed nothing: there is no change to review",
                        retryable=False)
        c.state["unchanged_revise"] = True
        c.state["stage"] = "park"
    else:
        c.state.update(head=head, stage="test", unchanged_revise=False)
        await c.stage_event("committed", round=rounds, commit=head)
    await c.save()
    return c.release()


async def commit(c: Change, rounds: int) -> str:
    """Commit everything in the worktree as the configured author; the branch's head."""
    wt = c.worktree
    branch = await git("symbolic-ref", "-q", "HEAD", cwd=wt)
    if branch != f"refs/heads/{c.branch}":
        raise ValueError(f"the agent left the worktree on {branch or 'a detached HEAD'}, "
                         f"not on {c.branch}")
    await git("add", "-A", cwd=wt)
    if await git("status", "--porcelain", cwd=wt):
        s = c.settings
        who = {"GIT_AUTHOR_NAME": s.author_name, "GIT_AUTHOR_EMAIL": s.author_email,
               "GIT_COMMITTER_NAME": s.author_name, "GIT_COMMITTER_EMAIL": s.author_email}
        message = f"{c.payload.title}\n\nSignoff task {c.task.id}, round {rounds}."
        await git("commit", "-q", "--no-verify", "-m", message, cwd=wt, env=who)
    return await git("rev-parse", "HEAD", cwd=wt)


async def _start_over(c: Change) -> Outcome:
    """The commit is gone from the workspace (wiped, or collected): run the rounds again."""
    for key in ("head", "tests", "base_sha", "work_started"):
        c.state.pop(key, None)
    c.state["stage"] = "work"
    await c.save()
    await c.stage_event("started_over")
    return c.release()


async def test_stage(c: Change) -> Outcome:
    """Run the configured tests on the committed tree; the outcome goes into the request.

    Also the way back after an expiry or a janitor run: the worktree and the branch are
    made again at the commit, so a retried task can be parked and pushed."""
    head = str(c.state["head"])
    if await c.ws.sha(c.mirror, head) is None:
        return await _start_over(c)
    try:
        if not await _reusable(c, head):
            await c.ws.add_worktree(c.mirror, c.task.id, head)
    except GitError as exc:
        return Fail(f"cannot prepare the worktree for the tests: {exc}", retryable=True)
    if not c.settings.test_command:
        c.state.update(tests={"ran": False}, stage="park")
        await c.save()
        return c.release()
    try:
        result = await c.run(c.settings.test_command, f"test-{c.state.get('round', 1)}",
                             c.settings.test_timeout)
        # Whatever the tests wrote stays out of the commit and the next round.
        await git("reset", "-q", "--hard", head, cwd=c.worktree)
        await git("clean", "-q", "-fd", cwd=c.worktree)
    except Interrupted:
        return c.release()
    except GitError as exc:
        return Fail(f"cannot prepare the worktree for the tests: {exc}", retryable=True)
    c.state.update(stage="park", tests={
        "ran": True, "passed": result.ok, "exit_code": result.exit_code,
        "timed_out": result.timed_out, "seconds": round(result.seconds, 1),
        "tail": result.text()[-1500:]})
    await c.save()
    await c.stage_event("tested", passed=result.ok, exit_code=result.exit_code)
    return c.release()
