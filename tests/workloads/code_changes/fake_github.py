"""A stand-in for GitHub's pull-request API (aiohttp on 127.0.0.1): checks the token, counts
creations, answers 422 for a head that has a pull request already, lists by `head`."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

TOKEN = "ghp-test-token-123"


@dataclass
class FakeGitHub:
    """The server's record: every pull request created and every request's auth header."""

    base_url: str = ""
    pulls: list[dict[str, Any]] = field(default_factory=list)
    creations: int = 0
    posts: int = 0  # every authorized creation request, answered 201 or 422
    refused: int = 0  # requests with a wrong or missing token
    fail_next: list[int] = field(default_factory=list)  # statuses to answer once, in order

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/repos/{owner}/{repo}/pulls", self.create)
        app.router.add_get("/repos/{owner}/{repo}/pulls", self.list)
        return app

    def _authorized(self, request: web.Request) -> bool:
        ok = request.headers.get("Authorization") == f"Bearer {TOKEN}"
        self.refused += not ok
        return ok

    async def create(self, request: web.Request) -> web.Response:
        if not self._authorized(request):
            return web.json_response({"message": "Bad credentials"}, status=401)
        self.posts += 1
        if self.fail_next:
            return web.json_response({"message": "try later"}, status=self.fail_next.pop(0))
        body = await request.json()
        if not all(isinstance(body.get(k), str) for k in ("title", "head", "base", "body")):
            return web.json_response({"message": "Validation Failed"}, status=422)
        repo = f"{request.match_info['owner']}/{request.match_info['repo']}"
        if any(p["repo"] == repo and p["head"] == body["head"] for p in self.pulls):
            return web.json_response({"message": "Validation Failed", "errors": [
                {"message": f"A pull request already exists for {body['head']}."}]}, status=422)
        self.creations += 1
        number = len(self.pulls) + 1
        pull = {**body, "repo": repo, "number": number,
                "html_url": f"https://github.example/{repo}/pull/{number}"}
        self.pulls.append(pull)
        return web.json_response({"number": number, "html_url": pull["html_url"]}, status=201)

    async def list(self, request: web.Request) -> web.Response:
        if not self._authorized(request):
            return web.json_response({"message": "Bad credentials"}, status=401)
        repo = f"{request.match_info['owner']}/{request.match_info['repo']}"
        owner, _, head = request.query.get("head", "").partition(":")
        found = [{"number": p["number"], "html_url": p["html_url"]} for p in self.pulls
                 if p["repo"] == repo and p["head"] == head
                 and owner == request.match_info["owner"]]
        return web.json_response(found)


@asynccontextmanager
async def running_github() -> AsyncIterator[FakeGitHub]:
    fake = FakeGitHub()
    runner = web.AppRunner(fake.app())
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    fake.base_url = f"http://127.0.0.1:{port}"
    try:
        yield fake
    finally:
        await runner.cleanup()
