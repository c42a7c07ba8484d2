"""Every refusal of the API: no token, a bad or revoked one, a missing scope, the rate,
bodies past the limits, bad JSON and bad files, and a token in a URL (refused, never
logged). Nothing is written by a refused call."""

from __future__ import annotations

import base64
import logging

import pytest

from taskqueue import redact
from taskqueue.store.checks import Limits
from tests.bot.api.conftest import Api
from tests.taskqueue.factories import value

ASK = {"capability": "deploys", "question": "Go?"}


async def _tasks(api: Api) -> int:
    return int(await value(api.queue, "SELECT count(*) FROM tasks"))


async def test_no_token_a_bad_one_and_a_revoked_one_are_401(api: Api) -> None:
    token = await api.token("ci", None, ("ask",))
    for headers in ({}, {"Authorization": "Bearer signoff_nope"},
                    {"Authorization": f"Basic {token}"}, {"Authorization": "Bearer "}):
        status, body, got = await api.call("POST", "/api/v1/requests", json=ASK,
                                           headers=headers)
        assert (status, body["error"]) == (401, "unauthorized")
        assert got["WWW-Authenticate"].startswith("Bearer")
    assert (await api.call("POST", "/api/v1/requests", token, json=ASK))[0] == 201
    assert await api.app.store.token_revoke("ci")
    status, body, _ = await api.call("POST", "/api/v1/requests", token, json=ASK)
    assert (status, body["error"]) == (401, "unauthorized")
    assert await _tasks(api) == 1


@pytest.mark.parametrize(("method", "path", "scope"), [
    ("POST", "/api/v1/requests", "ask"),
    ("GET", "/api/v1/requests/1", "ask"),
    ("POST", "/api/v1/requests/1/done", "ask"),
    ("GET", "/api/v1/approvals", "read"),
    ("POST", "/api/v1/approvals/1/decision", "decide"),
    ("GET", "/api/v1/tasks", "read"),
    ("GET", "/api/v1/tasks/1", "read"),
    ("GET", "/api/v1/attachments/1", "read"),
    ("POST", "/api/v1/work/claim", "work"),
    ("POST", "/api/v1/tasks/1/heartbeat", "work"),
    ("POST", "/api/v1/tasks/1/state", "work"),
    ("POST", "/api/v1/tasks/1/release", "work"),
    ("POST", "/api/v1/tasks/1/park", "work"),
    ("POST", "/api/v1/tasks/1/complete", "work"),
    ("POST", "/api/v1/tasks/1/fail", "work"),
])
async def test_each_route_names_the_scope_it_misses(api: Api, method: str, path: str,
                                                    scope: str) -> None:
    others = tuple(s for s in ("ask", "decide", "read", "work") if s != scope
                   and not (scope == "read" and s == "decide" and "approvals" in path)
                   and not (scope == "ask" and s == "read" and method == "GET"))
    token = await api.token("partial", "ada", others)
    status, body, _ = await api.call(method, path, token, json={})
    assert (status, body["error"], body["scope"]) == (403, "forbidden", scope)
    assert scope in body["message"]


async def test_bodies_past_the_limits_are_413(api: Api) -> None:
    api.queue.limits = Limits(max_json_bytes=1000, max_attachment_bytes=2000)
    token = await api.token("ci", None, ("ask", "work"))
    status, body, _ = await api.call("POST", "/api/v1/requests", token, json=ASK | {
        "request": {"blob": "x" * 2000}})
    assert (status, body["error"]) == (413, "too_large")
    big = base64.b64encode(b"a" * 3000).decode()
    status, body, _ = await api.call("POST", "/api/v1/requests", token, json=ASK | {
        "files": [{"filename": "big.txt", "content_base64": big}]})
    assert (status, body["error"]) == (413, "too_large")
    status, body, _ = await api.call("POST", "/api/v1/requests", token,
                                     data=b"{" + b" " * 200_000 + b"}",
                                     headers={"Content-Type": "application/json"})
    assert (status, body["error"]) == (413, "too_large")
    status, body, _ = await api.call("POST", "/api/v1/work/claim", token,
                                     data=b"{" + b" " * 80_000 + b"}",
                                     headers={"Content-Type": "application/json"})
    assert (status, body["error"]) == (413, "too_large")
    assert await _tasks(api) == 0


@pytest.mark.parametrize(("data", "content_type", "status", "error"), [
    (b"{not json", "application/json", 400, "bad_json"),
    (b"[1, 2]", "application/json", 400, "bad_json"),
    (b"", "application/json", 400, "bad_json"),
    (b'{"capability": 5, "question": "Go?"}', "application/json", 400, "bad_json"),
    (b'{"capability": "deploys"}', "application/json", 400, "bad_input"),
    (b'{"capability": "deploys", "question": ""}', "application/json", 400, "bad_input"),
    (b'{"capability": "deploys", "question": "Go?", "expires_in": "soon"}',
     "application/json", 400, "bad_json"),
    (b'{"capability": "deploys", "question": "Go?", "request": [1]}', "application/json",
     400, "bad_json"),
    (b"capability=deploys", "application/x-www-form-urlencoded", 415,
     "unsupported_media_type"),
])
async def test_bad_bodies_are_refused_and_write_nothing(api: Api, data: bytes,
                                                        content_type: str, status: int,
                                                        error: str) -> None:
    token = await api.token("ci", None, ("ask",))
    got, body, _ = await api.call("POST", "/api/v1/requests", token, data=data,
                                  headers={"Content-Type": content_type})
    assert (got, body["error"]) == (status, error), body
    assert await _tasks(api) == 0


@pytest.mark.parametrize(("files", "message"), [
    ([{"filename": "x.png", "content_base64": "@@not base64@@"}], "not base64"),
    ([{"filename": "../etc/passwd", "content_base64": "aGVsbG8="}], "plain file name"),
    ([{"filename": "x.bin", "content_base64": base64.b64encode(b"\x00\xff\x00").decode()}],
     "not PNG"),
    ([{"filename": "x.txt"}], "content_base64"),
    ("x.txt", "list"),
])
async def test_bad_files_are_refused(api: Api, files: object, message: str) -> None:
    token = await api.token("ci", None, ("ask",))
    status, body, _ = await api.call("POST", "/api/v1/requests", token,
                                     json=ASK | {"files": files})
    assert status == 400 and message in body["message"], body
    assert await _tasks(api) == 0


async def test_a_token_in_the_url_is_refused_and_never_logged(
        api: Api, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    token = await api.token("ci", None, ("ask", "read"))
    for query in (f"token={token}", f"access_token={token}", f"x={token}", "api_key=abc"):
        status, body, _ = await api.call("GET", f"/api/v1/tasks?{query}", token)
        assert (status, body["error"]) == (400, "token_in_url")
        assert token not in str(body)
    status, _, _ = await api.call("GET", f"/api/v1/requests/1?wait=0&token={token}")
    assert status == 400
    await api.call("POST", "/api/v1/requests", token, json=ASK)
    await api.call("POST", "/api/v1/requests", f"{token}x", json=ASK)
    assert token not in caplog.text and token[8:20] not in caplog.text
    assert "api: GET /tasks -> 400 token=-" in caplog.text
    # Once used, the token is a registered secret: masked wherever it would be written.
    assert token not in redact(f"GET /api/v1/tasks?token={token} HTTP/1.1")


async def test_unknown_paths_ids_and_methods(api: Api) -> None:
    token = await api.token("all", "ada")
    for method, path, status, error in (
            ("GET", "/api/v1/nothing", 404, "not_found"),
            ("GET", "/api/v1/tasks/999999", 404, "not_found"),
            ("GET", "/api/v1/requests/999999", 404, "not_found"),
            ("GET", "/api/v1/attachments/999999", 404, "not_found"),
            ("DELETE", "/api/v1/tasks/1", 405, "method_not_allowed"),
            ("GET", "/api/v1/requests/1?wait=61", 400, "bad_input"),
            ("GET", "/api/v1/tasks?limit=0", 400, "bad_input"),
            ("GET", "/api/v1/tasks?status=nope", 400, "bad_input"),
            ("GET", "/api/v1/approvals?open=false", 400, "bad_input")):
        got, body, _ = await api.call(method, path, token)
        assert (got, body["error"]) == (status, error), (method, path, body)
