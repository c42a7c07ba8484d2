"""`signoff token add|list|revoke`: the token printed once, alone on stdout's last line;
stored hashed; listed without it; revoked and refused at once."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.bot.api.conftest import Api
from tests.taskqueue.factories import sql


def _signoff(api: Api, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "taskqueue", *args], env=api.env(),
                          capture_output=True, text=True, timeout=120)


async def test_add_list_revoke(api: Api) -> None:
    made = _signoff(api, "token", "add", "laptop", "--person", "ada", "--scopes",
                    "read,ask,decide")
    assert made.returncode == 0, made.stderr
    token = made.stdout.splitlines()[-1]
    assert token.startswith("signoff_") and token == token.strip() and len(token) > 40
    rows = await sql(api.queue, "SELECT * FROM api_tokens")
    assert token not in json.dumps(rows, default=str)
    assert rows[0]["scopes"] == ["ask", "decide", "read"] and rows[0]["person"] == "ada"
    assert (await api.call("GET", "/api/v1/tasks", token))[0] == 200

    listed = _signoff(api, "token", "list", "--json")
    assert json.loads(listed.stdout)[0] | {"created_at": None, "last_used_at": None} == {
        "name": "laptop", "person": "ada", "scopes": ["ask", "decide", "read"],
        "created_at": None, "last_used_at": None, "revoked": False}
    assert token not in listed.stdout and "laptop  ada  ask,decide,read  live" in _signoff(
        api, "token", "list").stdout

    gone = _signoff(api, "token", "revoke", "laptop")
    assert gone.returncode == 0 and "revoked" in gone.stdout
    assert (await api.call("GET", "/api/v1/tasks", token))[0] == 401
    assert _signoff(api, "token", "revoke", "laptop").returncode == 5


async def test_bad_token_commands_write_nothing(api: Api) -> None:
    for args, code, message in (
            (["add", "x y", "--scopes", "ask"], 1, "token name"),
            (["add", "ci", "--scopes", "ask,fly"], 1, "'fly'"),
            (["add", "ci", "--scopes", ""], 1, "--scopes"),
            (["add", "ci", "--scopes", "decide"], 1, "needs --person"),
            (["add", "ci", "--person", "agent:x", "--scopes", "ask"], 1, "--person"),
            (["add", "ci"], 2, "--scopes")):
        done = _signoff(api, "token", *args)
        assert done.returncode == code and message in done.stderr, (args, done.stderr)
        assert len(done.stderr.strip().splitlines()) == 1 and done.stdout == ""
    assert await sql(api.queue, "SELECT * FROM api_tokens") == []
    assert _signoff(api, "token", "add", "ci", "--scopes", "ask").returncode == 0
    again = _signoff(api, "token", "add", "ci", "--scopes", "ask")
    assert again.returncode == 6 and "exists" in again.stderr
