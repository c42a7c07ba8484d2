"""`signoff mcp`: an MCP server over stdio (the optional `mcp` package) whose tools ask a
person for a sign-off: `request_approval` and `approval_status` for any agent, and
`permission_prompt` in the shape Claude Code's `--permission-prompt-tool` expects."""

from __future__ import annotations

import argparse
import difflib
import json
from pathlib import Path
from typing import Any

from taskqueue.cli.arguments import positive
from taskqueue.cli.asking import Asker, add_asker_options, open_asker
from taskqueue.cli.inputs import cli_limits, read_attachments
from taskqueue.errors import SignoffError
from taskqueue.extras import require_extra
from taskqueue.store.work_models import NewAttachment

DEFAULT_CAPABILITY = "agent_actions"
# The longest a tool call waits for a decision before it answers "still open".
MAX_WAIT = 3600.0
# A tool's input shown as evidence is cut past this many characters.
MAX_EVIDENCE_CHARS = 200_000


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "mcp", help="serve MCP tools over stdio that ask a person for a sign-off",
        description="An MCP server over stdio (install signoff[mcp]) with the tools "
                    "request_approval, approval_status and permission_prompt (Claude "
                    "Code's --permission-prompt-tool). It asks through the database, or "
                    "through a service's API with --url and SIGNOFF_TOKEN. It has no --json: "
                    "stdout carries the MCP protocol itself.",
        epilog="example: signoff mcp --capability agent_actions (registered with an MCP "
               "client as the server named signoff; see docs/api.md)")
    p.add_argument("--capability", default=DEFAULT_CAPABILITY, metavar="CAP",
                   help=f"the capability requests go to (default {DEFAULT_CAPABILITY})")
    p.add_argument("--wait", type=positive, default=120.0, metavar="SECONDS",
                   help="how long request_approval waits before answering with a pending "
                        "id (default 120)")
    p.add_argument("--permission-wait", type=positive, default=600.0, metavar="SECONDS",
                   help="how long permission_prompt waits before it denies (default 600)")
    add_asker_options(p, "mcp", "who asks, without --url (default mcp)")
    p.set_defaults(func=mcp_cmd)


async def mcp_cmd(args: Any) -> int:
    require_extra("mcp", "signoff mcp", "mcp")
    from mcp.server.mcpserver import MCPServer
    async with open_asker(args.url, args.config, args.by) as asker:
        tools = Tools(asker, args.capability, min(args.wait, MAX_WAIT),
                      min(args.permission_wait, MAX_WAIT))
        server = MCPServer("signoff", instructions=(
            "Ask a person for a sign-off before an action that matters: request_approval "
            "waits for the decision (or gives an id for approval_status)."))
        server.tool()(tools.request_approval)
        server.tool()(tools.approval_status)
        server.tool()(tools.permission_prompt)
        await server.run_stdio_async()
    return 0


class Tools:
    """The MCP tools, over one Asker."""

    def __init__(self, asker: Asker, capability: str, wait: float,
                 permission_wait: float) -> None:
        self.asker, self.capability = asker, capability
        self.wait, self.permission_wait = wait, permission_wait

    async def request_approval(self, question: str, details: str = "",
                               files: list[str] | None = None,
                               capability: str | None = None) -> dict[str, Any]:
        """Ask a person to approve an action and wait (bounded) for the decision. Returns
        the request: status approved, revised (read the note), skipped or expired; or
        needs_approval with an id to poll with approval_status."""
        limits = cli_limits()
        try:
            attachments = read_attachments(list(files or []), limits)
            asked = await self.asker.park(capability or self.capability, question,
                                          request={"details": details},
                                          attachments=attachments)
            return _shown(await self.asker.wait(int(asked["id"]), self.wait))
        except SignoffError as exc:
            return {"error": str(exc)}

    async def approval_status(self, id: int, wait_seconds: float = 0) -> dict[str, Any]:
        """A request's status; waits up to wait_seconds (at most the server's --wait) for
        its decision."""
        try:
            wait = max(0.0, min(float(wait_seconds), self.wait))
            return _shown(await self.asker.wait(int(id), wait) if wait
                          else await self.asker.get(int(id)))
        except SignoffError as exc:
            return {"error": str(exc)}

    async def permission_prompt(self, tool_name: str, input: dict[str, Any],
                                tool_use_id: str | None = None) -> str:
        """Claude Code's permission prompt: a person allows or denies this tool use.
        Answers {"behavior": "allow", "updatedInput": ...} or {"behavior": "deny",
        "message": ...} as JSON text."""
        try:
            asked = await self.asker.park(
                self.capability, f"Allow {tool_name[:100]}?"[:500],
                request={"tool_name": tool_name, "input": _cut(input)},
                attachments=evidence(tool_name, input),
                key=f"tool-use:{tool_use_id}" if tool_use_id else None)
            found = await self.asker.wait(int(asked["id"]), self.permission_wait)
        except SignoffError as exc:
            return json.dumps({"behavior": "deny", "message": f"Signoff: {exc}"})
        return json.dumps(permission_answer(found, input))


def permission_answer(found: dict[str, Any], tool_input: dict[str, Any]) -> dict[str, Any]:
    """The permission prompt's answer for a request as it ended."""
    status = found.get("status")
    if status == "approved":
        return {"behavior": "allow", "updatedInput": tool_input}
    if status == "revised":
        return {"behavior": "deny", "message": str(found.get("note") or "revise it")}
    if status == "needs_approval":
        return {"behavior": "deny", "message": f"no decision yet on request {found.get('id')}"
                                               "; ask again later"}
    by = found.get("decided_by")
    return {"behavior": "deny", "message": f"{status}" + (f" by {by}" if by else "")}


def evidence(tool_name: str, tool_input: dict[str, Any]) -> list[NewAttachment]:
    """What a person should see of a tool use: the exact command, or the diff of an edit."""
    if isinstance(tool_input.get("command"), str):
        return [NewAttachment("command.txt", _text(tool_input["command"]))]
    path = str(tool_input.get("file_path") or "file")
    name = Path(path).name or "file"
    if isinstance(tool_input.get("old_string"), str) and isinstance(
            tool_input.get("new_string"), str):
        diff = difflib.unified_diff(tool_input["old_string"].splitlines(True),
                                    tool_input["new_string"].splitlines(True),
                                    f"a/{path}", f"b/{path}")
        return [NewAttachment(f"{name}.diff", _text("".join(diff)))]
    if isinstance(tool_input.get("content"), str):
        return [NewAttachment(f"{name}.txt", _text(tool_input["content"]))]
    return [NewAttachment(f"{tool_name[:60] or 'tool'}.json".replace("/", "_"),
                          _text(json.dumps(tool_input, indent=2, ensure_ascii=False)))]


def _text(value: str) -> bytes:
    return (value[:MAX_EVIDENCE_CHARS] or "(empty)").encode("utf-8", "replace")


def _cut(value: dict[str, Any]) -> dict[str, Any]:
    text = json.dumps(value, ensure_ascii=False)
    return value if len(text) <= MAX_EVIDENCE_CHARS else {"truncated": text[:2000]}


def _shown(found: dict[str, Any]) -> dict[str, Any]:
    keep = ("id", "status", "decision", "decided_by", "note", "approvals", "required",
            "capability", "question", "expires_at")
    out = {k: found.get(k) for k in keep}
    if out["status"] == "needs_approval":
        out["pending"] = f"no decision yet: call approval_status({out['id']}) later"
    return out
