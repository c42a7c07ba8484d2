"""Opening a pull request through the GitHub REST API (or anything speaking it).

`POST {api}/repos/{owner}/{repo}/pulls` answers 201 with `number` and `html_url`; 422 when a
pull request for that head exists already, which is then looked up and treated as opened.
The token goes only into the Authorization header, never into messages or logs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from workloads.code_changes.settings import GitHubSettings

if TYPE_CHECKING:
    import aiohttp

__all__ = ["PullRequest", "PullRequestError", "open_pull_request"]


class PullRequestError(Exception):
    """The API refused or failed; `retryable` says whether trying later may help."""

    def __init__(self, message: str, retryable: bool) -> None:
        super().__init__(message)
        self.retryable = retryable


@dataclass(frozen=True)
class PullRequest:
    number: int
    url: str
    created: bool  # False: it existed already (a repeat after a crash, or opened by hand)


async def open_pull_request(gh: GitHubSettings, repo: str, *, head: str, base: str,
                            title: str, body: str) -> PullRequest:
    """Open the pull request for branch `head`, or find the one that is open already."""
    if not gh.token:
        raise PullRequestError("no GitHub token: set SIGNOFF_GITHUB_TOKEN", retryable=False)
    headers = {"Authorization": f"Bearer {gh.token}", "Accept": "application/vnd.github+json",
               "X-GitHub-Api-Version": "2022-11-28", "User-Agent": "signoff"}
    url = f"{gh.api_url}/repos/{repo}/pulls"
    import aiohttp  # the 'code' extra, checked when the handler loads

    timeout = aiohttp.ClientTimeout(total=gh.timeout)
    try:
        async with aiohttp.ClientSession(headers=headers, timeout=timeout) as http:
            async with http.post(url, json={"title": title, "head": head, "base": base,
                                            "body": body}) as resp:
                doc = await _json(resp)
                if resp.status == 201:
                    return PullRequest(int(doc["number"]), str(doc["html_url"]), True)
                if resp.status != 422:
                    raise _error("opening the pull request", resp.status, doc)
            owner = repo.split("/", 1)[0]
            async with http.get(url, params={"head": f"{owner}:{head}", "state": "all"}) as resp:
                found = await _json(resp)
                if resp.status != 200:
                    raise _error("looking up the pull request", resp.status, found)
    except (aiohttp.ClientError, TimeoutError) as exc:
        raise PullRequestError(f"GitHub API unreachable: {type(exc).__name__}: {exc}",
                               retryable=True) from None
    if isinstance(found, list) and found and isinstance(found[0], dict):
        return PullRequest(int(found[0]["number"]), str(found[0]["html_url"]), False)
    raise PullRequestError(f"GitHub answered 422 and has no pull request for {head}: "
                           f"{_message(doc)}", retryable=False)


async def _json(resp: aiohttp.ClientResponse) -> Any:
    try:
        return await resp.json(content_type=None)
    except ValueError:
        return {}


def _message(doc: Any) -> str:
    return str(doc.get("message", ""))[:300] if isinstance(doc, dict) else ""


def _error(what: str, status: int, doc: Any) -> PullRequestError:
    # Rate limits and server trouble pass; bad credentials or a wrong repository do not.
    retryable = status >= 500 or status == 429
    return PullRequestError(f"GitHub answered {status} {what}: {_message(doc)}", retryable)
