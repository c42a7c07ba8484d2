"""`roblox_build`: `rojo build` a place, then publish it through Roblox Open Cloud.

`POST {base_url}/universes/v1/{universeId}/places/{placeId}/versions?versionType=Published`
with the `x-api-key` header (SIGNOFF_ROBLOX_API_KEY, from the environment only) and the
place file as the body; success answers `{"versionNumber": N}`.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any

from taskqueue import Outcome, Task, TaskContext, require_extra
from workloads.builds.handler import make_handler
from workloads.builds.job import BuildJob, PublishError
from workloads.builds.settings import BuildSettings, load_settings
from workloads.builds.store import Artifact

__all__ = ["CAPABILITY", "KEY_ENV", "OpenCloud", "handle"]

CAPABILITY = "roblox_build"
KEY_ENV = "SIGNOFF_ROBLOX_API_KEY"
CONTENT_TYPES = {".rbxl": "application/octet-stream", ".rbxlx": "application/xml"}
MAX_MESSAGE = 300
MAX_BODY = 64 * 1024  # of an answer read (a success is a few bytes)
_UNSAFE = re.compile(r"[^\x20-\x7e]+")

# Loading the handler checks its library (aiohttp, loaded when it first publishes).
require_extra("builds", "the roblox_build workload", "aiohttp")


def sanitized(text: str, secret: str) -> str:
    """A server's message fit for an error line: printable, bounded, without the key."""
    if secret:
        text = text.replace(secret, "[key]")
    text = _UNSAFE.sub(" ", text).strip()
    return text if len(text) <= MAX_MESSAGE else text[:MAX_MESSAGE - 1] + "…"


def retry_after(value: str | None) -> float | None:
    """Retry-After in seconds (the date form is treated as absent)."""
    try:
        return max(float(value), 0.0) if value else None
    except ValueError:
        return None


class OpenCloud:
    """Publishes a place file to one place of one universe."""

    platform = "Roblox"
    suffixes: tuple[str, ...] = tuple(CONTENT_TYPES)

    def target(self, settings: BuildSettings) -> str:
        return f"Roblox place {settings.place_id} (universe {settings.universe_id})"

    async def prepare(self, job: BuildJob, artifact: Artifact) -> tuple[str, Any]:
        """The file's bytes, read once: the checksum compared is that of the bytes sent."""
        s = job.settings
        if s.universe_id is None or s.place_id is None:
            raise PublishError(f"workloads.{CAPABILITY}: universe_id and place_id are required "
                               "to publish", retryable=False)
        if not os.environ.get(KEY_ENV):
            raise PublishError(f"{KEY_ENV} is not set", retryable=False)
        data = await asyncio.to_thread(Path(artifact.path).read_bytes)
        return hashlib.sha256(data).hexdigest(), data

    async def send(self, job: BuildJob, artifact: Artifact, payload: Any) -> dict[str, Any]:
        s, key = job.settings, os.environ.get(KEY_ENV, "")
        url = f"{s.base_url}/universes/v1/{s.universe_id}/places/{s.place_id}/versions"
        headers = {"x-api-key": key,
                   "Content-Type": CONTENT_TYPES[Path(artifact.name).suffix.lower()]}
        import aiohttp

        timeout = aiohttp.ClientTimeout(total=s.publish_timeout)
        try:
            # No redirects: the key must not follow a 3xx to another host.
            async with aiohttp.ClientSession(timeout=timeout) as session, session.post(
                    url, params={"versionType": s.version_type}, data=payload,
                    headers=headers, allow_redirects=False) as resp:
                body = (await resp.content.read(MAX_BODY)).decode("utf-8", "replace")
                return _answer(resp.status, resp.headers.get("Retry-After"), body, key)
        except aiohttp.ClientConnectorError as exc:  # no connection: nothing was sent
            raise PublishError(f"cannot connect to {s.base_url}: {sanitized(str(exc), key)}",
                               retryable=True) from None
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise PublishError(f"no answer from Open Cloud: {type(exc).__name__}",
                               retryable=True, sent=True) from None


def _answer(status: int, after: str | None, body: str, key: str) -> dict[str, Any]:
    if 200 <= status < 300:
        try:
            number = json.loads(body).get("versionNumber")
        except (ValueError, AttributeError):
            number = None
        return {"versionNumber": number if isinstance(number, int) else None,
                "http_status": status}
    message = f"Open Cloud answered {status}: {sanitized(body, key) or 'no message'}"
    if status == 429 or status >= 500:
        raise PublishError(message, retryable=True, retry_after=retry_after(after))
    raise PublishError(message, retryable=False)


def _settings() -> BuildSettings:
    return load_settings(CAPABILITY)


_handler = make_handler(_settings, OpenCloud())


async def handle(task: Task, ctx: TaskContext) -> Outcome:
    """The configured handler (`workloads.builds.roblox:handle`)."""
    return await _handler(task, ctx)
