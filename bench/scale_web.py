"""bench.scale's served pages: `signoff web` on the loaded database, signed in over plain
HTTP (no browser: only the server's time is wanted), and the first byte of the inbox's first
page and of a filtered Tasks page, each the median of repeated requests."""

from __future__ import annotations

import html
import http.client
import re
import statistics
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import urlencode

from bench.web_inbox import PASSWORD, free_port, serve, signoff, ttfb_ms

ACCOUNT = "bench"
PATHS = ("/", "/tasks?capability=vm&status=failed")
_CSRF = re.compile(r'name="csrf_token" value="([^"]*)"')


def _cookies(answer: http.client.HTTPResponse) -> dict[str, str]:
    jar: SimpleCookie = SimpleCookie()
    for header in answer.headers.get_all("Set-Cookie") or []:
        jar.load(header)
    return {name: morsel.value for name, morsel in jar.items()}


def sign_in(port: int, account: str, password: str) -> str:
    """The sign-in form's round trip (its pre-session cookie and CSRF token, then the
    POST); the Cookie header that the signed-in session's requests carry."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        conn.request("GET", "/login")
        form = conn.getresponse()
        found = _CSRF.search(form.read().decode())
        if found is None:
            raise RuntimeError("the sign-in page has no CSRF token")
        pre = _cookies(form)
        body = urlencode({"name": account, "password": password, "next": "/",
                          "csrf_token": html.unescape(found.group(1))})
        conn.request("POST", "/login", body=body, headers={
            "Content-Type": "application/x-www-form-urlencoded",
            "Cookie": "; ".join(f"{k}={v}" for k, v in pre.items())})
        answer = conn.getresponse()
        answer.read()
    finally:
        conn.close()
    session = _cookies(answer)
    if answer.status != 303 or not session:
        raise RuntimeError(f"signing in answered {answer.status}")
    return "; ".join(f"{k}={v}" for k, v in (pre | session).items())


def served_pages(dsn: str, runs: int) -> dict[str, Any]:
    """Serve, add the account, sign in, then time each of PATHS `runs` times after one
    untimed request (the process's first page compiles its templates)."""
    port = free_port()
    server = serve(dsn, port)
    try:
        signoff(dsn, "web", "user", "add", ACCOUNT, "--password-stdin", stdin=PASSWORD + "\n")
        cookie = sign_in(port, ACCOUNT, PASSWORD)
        times: dict[str, list[float]] = {}
        sizes: dict[str, int] = {}
        for path in PATHS:
            ttfb_ms(port, path, cookie)
            got = [ttfb_ms(port, path, cookie) for _ in range(runs)]
            times[path] = [t for t, _ in got]
            sizes[path] = got[0][1]
    finally:
        server.terminate()
        server.wait(30)
    return {"command": "signoff web --listen 127.0.0.1:PORT",
            "ttfb_ms": {p: round(statistics.median(t), 1) for p, t in times.items()},
            "ttfb_max_ms": {p: round(max(t), 1) for p, t in times.items()},
            "bytes": sizes}
