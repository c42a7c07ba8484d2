"""Stage 3: park the commit for a person, with the diffstat, the test outcome and the patch.

The request names the exact commit (`commit`); the push later refuses anything else.
"""

from __future__ import annotations

from typing import Any

from taskqueue import Fail, NewAttachment, Outcome, Park
from workloads.code_changes.change import Change
from workloads.code_changes.git import GitError, git
from workloads.code_changes.payload import web_url

__all__ = ["KIND", "MAX_PATCH_BYTES", "build_request", "park_stage", "patch_bytes"]

KIND = "code_change"
QUESTION = "Push {branch} to {repo}?"
MAX_PATCH_BYTES = 20 * 1024 * 1024  # the queue's attachment limit
MAX_FILES = 200
HOW_TO_REVISE = ("Approve pushes exactly this commit (and opens the pull request when "
                 "configured). Revise with a note: the agent runs again in the same worktree "
                 "with your note added to the instruction. Skip: nothing is pushed.")


def patch_bytes(raw: bytes, size: int, limit: int = MAX_PATCH_BYTES) -> bytes:
    """The patch (`size` bytes in all, `raw` its start) as storable UTF-8 text, cut at
    `limit` bytes with a note saying so."""
    text = raw.decode("utf-8", "replace").replace("\x00", "\\0")
    data = text.encode("utf-8")
    if len(data) <= limit and size <= len(raw):
        return data
    note = (f"\n[signoff: the patch is {size} bytes; cut at {limit} bytes. "
            "The whole change is on the branch.]\n").encode()
    cut = data[: limit - len(note)].decode("utf-8", "ignore").encode("utf-8")
    return cut + note


async def _files(c: Change, base: str, head: str) -> list[dict[str, Any]]:
    out = await git("diff", "--numstat", "--no-renames", base, head, cwd=c.mirror)
    files = []
    for line in out.splitlines()[:MAX_FILES]:
        added, removed, path = ([*line.split("\t", 2), "", "", ""])[:3]
        files.append({"path": path, "added": int(added) if added.isdigit() else 0,
                      "removed": int(removed) if removed.isdigit() else 0,
                      "binary": added == "-"})
    return files


async def build_request(c: Change, base: str, head: str) -> dict[str, Any]:
    """What the person sees: where, which commit, what changed, how the tests went."""
    diffstat = await git("diff", "--stat=100", "--no-color", base, head, cwd=c.mirror)
    lines = diffstat.splitlines()
    if len(lines) > 60:
        diffstat = "\n".join([*lines[:59], f"… {len(lines) - 60} more files", lines[-1]])
    tests = c.state.get("tests") or {"ran": False}
    request: dict[str, Any] = {
        "kind": KIND, "repo": c.payload.repo, "branch": c.branch, "base": c.payload.base,
        "title": c.payload.title, "diffstat": diffstat, "files": await _files(c, base, head),
        "commit": head, "base_commit": base, "round": c.state.get("round", 1),
        "tests": {k: tests.get(k) for k in ("ran", "passed", "exit_code", "timed_out")},
        "tests_tail": (tests.get("tail") or "")[-800:], "how_to_revise": HOW_TO_REVISE,
    }
    if url := web_url(c.payload.repo):
        request["url"] = f"{url}/compare/{c.payload.base}...{c.branch}"
    if c.state.get("unchanged_revise"):
        request["note"] = "The agent changed nothing for your last note; this is the same commit."
    if c.state.get("branch_moved"):
        request["note"] = "The branch moved after your approve; this is its new head."
    return request


async def park_stage(c: Change) -> Outcome:
    """Ask the person, with the whole patch attached as task-<id>.patch."""
    base, head = str(c.state["base_sha"]), str(c.state["head"])
    run_dir = c.ws.run_dir(c.task.id)
    try:
        request = await build_request(c, base, head)
        await git("diff", "--no-color", "--no-ext-diff", "--stat", "-p", base, head,
                  cwd=c.mirror, stdout_to=run_dir / "patch")
    except GitError as exc:
        return Fail(f"cannot read the commit {head[:12]}: {exc}", retryable=True)
    with (run_dir / "patch").open("rb") as f:
        patch = patch_bytes(f.read(MAX_PATCH_BYTES), (run_dir / "patch").stat().st_size)
    c.state.update(stage="await", parked_sha=head)
    c.state.pop("branch_moved", None)
    await c.stage_event("parked", commit=head, files=len(request["files"]))
    await c.checkpoint("park.middle")
    return Park(QUESTION.format(branch=c.branch, repo=c.payload.repo), request=request,
                state=dict(c.state),
                attachments=(NewAttachment(f"task-{c.task.id}.patch", patch, "text/x-diff"),))
