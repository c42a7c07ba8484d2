"""Stages 4 and 5: push the approved commit, then open the pull request; never twice.

The push happens only after a person's approve of exactly the commit the branch points at:
the approval is read again from the database, the branch head and the worktree are checked,
and the refspec `<sha>:refs/heads/<branch>` can push nothing else. `push_started` is saved
before the push; a slice that finds it asks the remote (`git ls-remote`) whether the branch
is there at that commit before pushing again. A repeated pull-request call answers 422 and
the open one is looked up, so a crash between the call and the save opens nothing twice.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from taskqueue import Decision, Done, Fail, Outcome, Status
from workloads.code_changes.change import Change
from workloads.code_changes.git import GitError, git
from workloads.code_changes.github import PullRequestError, open_pull_request
from workloads.code_changes.review import KIND

__all__ = ["approval_problem", "done_stage", "pr_stage", "push_stage"]


async def approval_problem(c: Change, sha: str) -> str | None:
    """Why the task's latest approval does not allow pushing `sha`; None when it does."""
    fresh = await c.ctx.queue.task_get(c.task.id)
    a = fresh.approval
    if fresh.status != Status.RUNNING or fresh.claim != c.task.claim:
        return f"this worker no longer holds the task (it is {fresh.status.value})"
    if a is None or a.decision != Decision.APPROVED:
        return f"the latest decision is {a.decision.value if a and a.decision else 'none'}"
    if not (a.decided_by or "").strip():
        return "the approval names no person"
    if a.request.get("kind") != KIND or a.request.get("commit") != sha:
        return f"the approved request is not for commit {sha[:12]}"
    return None


def _github_repo(c: Change) -> str | None:
    gh = c.settings.github
    return None if gh is None else (c.payload.github_repo or gh.repo)


async def _remote_sha(c: Change) -> str | None:
    out = await git("ls-remote", "origin", f"refs/heads/{c.branch}", cwd=c.mirror,
                    timeout=c.settings.git_timeout)
    return out.split()[0] if out else None


async def _moved_or_dirty(c: Change, sha: str) -> Outcome | None:
    """Re-park when the branch moved since the park; refuse a worktree with edits in it."""
    head = await c.ws.sha(c.mirror, f"refs/heads/{c.branch}")
    if head is None:
        return Fail(f"the branch {c.branch} is gone; nothing to push", retryable=False)
    if head != sha:
        c.state.update(head=head, stage="test", branch_moved=True)
        await c.save()
        await c.stage_event("branch_moved", parked=sha, head=head)
        return c.release()
    if c.worktree.exists() and await git("status", "--porcelain", cwd=c.worktree):
        return Fail("the worktree has uncommitted edits since the park; refusing to push "
                    "(retry the task to have them reviewed, or clean the worktree)",
                    retryable=False)
    return None


async def push_stage(c: Change) -> Outcome:
    """Verify the approve, then push the approved commit (at most once, across crashes)."""
    sha = str(c.state["parked_sha"])
    if (problem := await approval_problem(c, sha)) is not None:
        await c.stage_event("push_refused", reason=problem)
        return Fail(f"refusing to push: {problem}", retryable=False)
    gh = c.settings.github
    if gh is not None and (not gh.token or not _github_repo(c)):
        return Fail("pull requests are configured but SIGNOFF_GITHUB_TOKEN or the GitHub "
                    "repository (owner/name) is missing; nothing was pushed", retryable=False)
    try:
        if (outcome := await _moved_or_dirty(c, sha)) is not None:
            return outcome
        started = c.state.get("push_started") or {}
        if started.get("sha") == sha and await _remote_sha(c) == sha:
            await c.stage_event("push_found", commit=sha)  # pushed before a crash
        else:
            await _push(c, sha)
    except GitError as exc:
        retryable = "rejected" not in exc.stderr and "non-fast-forward" not in exc.stderr
        return Fail(f"push failed: {exc}", retryable=retryable)
    c.state.update(pushed=sha, stage="pr" if gh is not None else "done")
    await c.save()
    return await (pr_stage(c) if gh is not None else done_stage(c))


async def _push(c: Change, sha: str) -> None:
    a = c.task.approval
    c.state["push_started"] = {"sha": sha, "approval_id": a.id if a else None,
                               "approved_by": a.decided_by if a else None,
                               "at": datetime.now(UTC).isoformat()}
    await c.save()
    await c.stage_event("push_started", commit=sha)
    await c.checkpoint("push.marked")
    await git("push", "-q", c.payload.repo, f"{sha}:refs/heads/{c.branch}", cwd=c.mirror,
              timeout=c.settings.git_timeout)
    await c.stage_event("pushed", commit=sha)
    await c.checkpoint("push.pushed")


def _body(c: Change) -> str:
    tests = c.state.get("tests") or {}
    outcome = ("not run" if not tests.get("ran") else "passed" if tests.get("passed")
               else f"failed (exit {tests.get('exit_code')})")
    who = (c.state.get("push_started") or {}).get("approved_by") or "a reviewer"
    instruction = c.instruction()
    if len(instruction) > 6000:
        instruction = instruction[:6000] + "\n…"
    return (f"{instruction}\n\n---\nTests: {outcome}. Approved by {who} in Signoff "
            f"(task {c.task.id}, commit {c.state.get('pushed')}).")


async def pr_stage(c: Change) -> Outcome:
    """Open the pull request for the pushed branch (or find the one already open)."""
    gh, repo = c.settings.github, _github_repo(c)
    if gh is None or repo is None:
        return await done_stage(c)
    try:
        pr = await open_pull_request(gh, repo, head=c.branch, base=c.payload.base,
                                     title=c.payload.title, body=_body(c))
    except PullRequestError as exc:
        return Fail(str(exc), retryable=exc.retryable)
    await c.checkpoint("pr.opened")
    c.state.update(pr={"number": pr.number, "url": pr.url}, stage="done")
    await c.save()
    await c.stage_event("pr_opened", number=pr.number, created=pr.created)
    return await done_stage(c)


async def done_stage(c: Change) -> Outcome:
    """Remove the worktree and the local branch (the remote has it), then finish."""
    await c.checkpoint("done.before")
    await c.ws.remove_worktree(c.mirror, c.task.id)
    await c.ws.delete_branch(c.mirror, c.task.id)
    result: dict[str, Any] = {
        "status": "pushed", "repo": c.payload.repo, "branch": c.branch,
        "commit": c.state.get("pushed"), "approved_by":
            (c.state.get("push_started") or {}).get("approved_by"), "pr": c.state.get("pr")}
    await c.stage_event("done", commit=c.state.get("pushed"))
    return Done(result)
