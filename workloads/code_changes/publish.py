"""Stages 4 and 5: push the approved commit, then open the pull request; never twice.

The push is the gated action (taskqueue's Gate, kind `code_change`, fingerprint `commit`):
it happens only after a person's approve of exactly the commit the branch points at, read
again from the database right before; the branch head and the worktree are checked first,
and the refspec `<sha>:refs/heads/<branch>` can push nothing else. A slice that finds the
push started and never recorded asks the remote (`git ls-remote`, the gate's verify) whether
the branch is there at that commit before pushing again; git takes no idempotency key, but
pushing the same commit twice changes nothing. A repeated pull-request call answers 422 and
the open one is looked up, so a crash between the call and the save opens nothing twice.
"""

from __future__ import annotations

from typing import Any

from taskqueue import Done, Fail, GatedAction, NotApproved, Outcome, rename_points
from workloads.code_changes.change import Change
from workloads.code_changes.git import GitError, git
from workloads.code_changes.github import PullRequestError, open_pull_request
from workloads.code_changes.review import KIND

__all__ = ["done_stage", "pr_stage", "push_stage"]

# The gate's steps under this workload's crash-point names.
POINT_NAMES = {"marked": "push.marked", "acted": "push.pushed"}


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
    """Check the branch, then push the approved commit through the gate (at most once)."""
    sha = str(c.state["parked_sha"])
    gh = c.settings.github
    if gh is not None and (not gh.token or not _github_repo(c)):
        return Fail("pull requests are configured but SIGNOFF_GITHUB_TOKEN or the GitHub "
                    "repository (owner/name) is missing; nothing was pushed", retryable=False)
    gate = c.ctx.gate(KIND, field="commit", checkpoint=rename_points(c.checkpoint, POINT_NAMES))

    async def on_remote(action: GatedAction) -> bool:  # pushed before a crash?
        return await _remote_sha(c) == sha

    try:
        if (outcome := await _moved_or_dirty(c, sha)) is not None:
            return outcome
        pushed = await gate.run(sha, lambda action: _push(c, sha), verify=on_remote)
    except NotApproved as exc:
        await c.stage_event("push_refused", reason=str(exc))
        return Fail(f"refusing to push: {exc}", retryable=False)
    except GitError as exc:
        retryable = "rejected" not in exc.stderr and "non-fast-forward" not in exc.stderr
        return Fail(f"push failed: {exc}", retryable=retryable)
    if not pushed.acted_now:
        await c.stage_event("push_found", commit=sha)
    a = pushed.action
    c.state.update(pushed=sha, stage="pr" if gh is not None else "done", push_started={
        "sha": sha, "approval_id": a.approval_id, "approved_by": a.approved_by,
        "at": a.started_at.isoformat()})
    await c.save()
    return await (pr_stage(c) if gh is not None else done_stage(c))


async def _push(c: Change, sha: str) -> None:
    await c.stage_event("push_started", commit=sha)
    await git("push", "-q", c.payload.repo, f"{sha}:refs/heads/{c.branch}", cwd=c.mirror,
              timeout=c.settings.git_timeout)
    await c.stage_event("pushed", commit=sha)


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
