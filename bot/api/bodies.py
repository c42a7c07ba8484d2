"""Reading a request's body within the queue's `[limits]`: JSON objects, the fields asked
of them, and files (multipart parts or base64 in JSON). Past a limit: 413, nothing read on."""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from typing import Any

from aiohttp import BodyPartReader, web

from bot.api.errors import ApiError
from taskqueue import NewAttachment

# Room for a body's fields besides its JSON values (a question, a note, names).
FIELDS_BYTES = 64 * 1024
# The most files one ask or park may carry.
MAX_FILES = 20


@dataclass(frozen=True)
class Bounds:
    """What one body may hold: its JSON values' bytes and each file's bytes."""

    max_json_bytes: int
    max_attachment_bytes: int

    @property
    def json_body(self) -> int:
        """A JSON body with files as base64 (4 bytes per 3)."""
        return FIELDS_BYTES + self.max_json_bytes + MAX_FILES * (
            self.max_attachment_bytes * 4 // 3 + 1024)

    @property
    def plain_body(self) -> int:
        """A JSON body with no files."""
        return FIELDS_BYTES + self.max_json_bytes


def too_large(what: str, limit: int) -> ApiError:
    return ApiError(413, "too_large", f"{what} is over the limit of {limit} bytes")


async def read_bytes(request: web.Request, limit: int) -> bytes:
    """The whole body, refused (413) past `limit` before or while it is read."""
    if request.content_length is not None and request.content_length > limit:
        raise too_large("the body", limit)
    data = await request.content.read(limit + 1)
    while len(data) <= limit and not request.content.at_eof():
        data += await request.content.read(limit + 1 - len(data))
    if len(data) > limit:
        raise too_large("the body", limit)
    return data


async def read_object(request: web.Request, limit: int, *, empty_ok: bool = True
                      ) -> dict[str, Any]:
    """The body as a JSON object (an empty body is {} when `empty_ok`)."""
    if request.content_type not in ("application/json", "application/octet-stream") and (
            request.content_length or request.can_read_body):
        raise ApiError(415, "unsupported_media_type", "send the body as application/json")
    data = await read_bytes(request, limit)
    if not data.strip() and empty_ok:
        return {}
    try:
        value = json.loads(data)
    except (ValueError, UnicodeDecodeError):
        raise ApiError(400, "bad_json", "the body is not valid JSON") from None
    if not isinstance(value, dict):
        raise ApiError(400, "bad_json", "the body must be a JSON object")
    return value


def text_field(body: dict[str, Any], name: str, *, required: bool = False) -> str | None:
    value = body.get(name)
    if value is None:
        if required:
            raise ApiError(400, "bad_input", f"`{name}` is required")
        return None
    if not isinstance(value, str):
        raise ApiError(400, "bad_json", f"`{name}` must be a string")
    return value


def number_field(body: dict[str, Any], name: str, *, whole: bool = False) -> float | None:
    value = body.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or (
            whole and not isinstance(value, int)):
        raise ApiError(400, "bad_json", f"`{name}` must be a {'whole ' if whole else ''}number")
    return value


def json_field(body: dict[str, Any], name: str, bounds: Bounds, *,
               obj: bool = True) -> Any:
    """A JSON value of the body, refused (413) past `max_json_bytes`."""
    value = body.get(name)
    if value is None:
        return None
    if obj and not isinstance(value, dict):
        raise ApiError(400, "bad_json", f"`{name}` must be a JSON object")
    size = len(json.dumps(value, separators=(",", ":"), ensure_ascii=False)
               .encode("utf-8", "surrogatepass"))
    if size > bounds.max_json_bytes:
        raise too_large(f"`{name}`", bounds.max_json_bytes)
    return value


def base64_files(body: dict[str, Any], bounds: Bounds) -> list[NewAttachment]:
    """`files: [{filename, content_base64, content_type?}]` as attachments."""
    files = body.get("files")
    if files is None:
        return []
    if not isinstance(files, list) or len(files) > MAX_FILES:
        raise ApiError(400, "bad_json", f"`files` must be a list of at most {MAX_FILES}")
    out = []
    for item in files:
        if not isinstance(item, dict):
            raise ApiError(400, "bad_json", "each file is {filename, content_base64}")
        name = text_field(item, "filename", required=True)
        encoded = text_field(item, "content_base64", required=True)
        assert name is not None and encoded is not None
        if len(encoded) > bounds.max_attachment_bytes * 4 // 3 + 4:
            raise too_large(f"file {name[:60]!r}", bounds.max_attachment_bytes)
        try:
            data = base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError):
            raise ApiError(400, "bad_input", f"file {name[:60]!r} is not base64") from None
        out.append(NewAttachment(name, data, text_field(item, "content_type")))
    return out


async def multipart_fields(request: web.Request, bounds: Bounds
                           ) -> tuple[dict[str, Any], list[NewAttachment]]:
    """A multipart form: its text fields (`request` parsed as JSON) and its files, each
    part read within its bound."""
    reader = await request.multipart()
    fields: dict[str, Any] = {}
    files: list[NewAttachment] = []
    budget = bounds.json_body
    while (part := await reader.next()) is not None:
        if not isinstance(part, BodyPartReader):
            raise ApiError(400, "bad_input", "nested multipart bodies are not taken")
        if part.filename is not None:
            if len(files) >= MAX_FILES:
                raise ApiError(400, "bad_input", f"at most {MAX_FILES} files")
            data = await _part_bytes(part, bounds.max_attachment_bytes,
                                     f"file {part.filename[:60]!r}")
            files.append(NewAttachment(part.filename, data,
                                       part.headers.get("Content-Type")))
            continue
        limit = min(bounds.max_json_bytes + FIELDS_BYTES, budget)
        raw = await _part_bytes(part, limit, f"field {str(part.name)[:40]!r}")
        budget -= len(raw)
        try:
            fields[str(part.name)] = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise ApiError(400, "bad_input", f"field {part.name!r} is not UTF-8") from None
    return _typed(fields), files


async def _part_bytes(part: BodyPartReader, limit: int, what: str) -> bytes:
    data = bytearray()
    while chunk := await part.read_chunk(64 * 1024):
        data += chunk
        if len(data) > limit:
            raise too_large(what, limit)
    return bytes(data)


def _typed(fields: dict[str, str]) -> dict[str, Any]:
    """A form's text fields as the JSON body's types."""
    out: dict[str, Any] = dict(fields)
    if "request" in fields:
        try:
            out["request"] = json.loads(fields["request"])
        except ValueError:
            raise ApiError(400, "bad_json", "the `request` field is not valid JSON") from None
    for name in ("expires_in", "required_approvals"):
        if name in fields:
            try:
                out[name] = float(fields[name]) if name == "expires_in" else int(fields[name])
            except ValueError:
                raise ApiError(400, "bad_json", f"`{name}` must be a number") from None
    return out
