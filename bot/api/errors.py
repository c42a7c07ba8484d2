"""How the API refuses: one JSON body `{"error": NAME, "message": ...}` per refusal, the
names those of the CLI's exit codes, and the HTTP status each maps to (docs/api.md)."""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web

from taskqueue import (
    AlreadyApproved,
    AttachmentTooLarge,
    BadInput,
    Conflict,
    LeaseLost,
    NotAnApprover,
    NotFound,
    NothingToClaim,
    SchemaTooNew,
    SignatureInvalid,
    SignatureRequired,
    SignoffError,
    redact,
)

# (error name, HTTP status, the CLI's exit code) of each core error, most specific first.
CORE_ERRORS: tuple[tuple[type[SignoffError], str, int, int], ...] = (
    (SignatureRequired, "signature_required", 403, 8),
    (SignatureInvalid, "signature_invalid", 403, 1),
    (SchemaTooNew, "schema_too_new", 503, 1),
    (AttachmentTooLarge, "too_large", 413, 1),
    (BadInput, "bad_input", 400, 1),
    (NothingToClaim, "nothing_to_claim", 404, 3),
    (LeaseLost, "lease_lost", 409, 4),
    (NotFound, "not_found", 404, 5),
    (NotAnApprover, "not_an_approver", 403, 6),
    (Conflict, "conflict", 409, 6),
    (AlreadyApproved, "already_approved", 409, 7),
)
# The API's own refusals: (error name, HTTP status, what it means).
API_ERRORS: tuple[tuple[str, int, str], ...] = (
    ("bad_json", 400, "the body is not a JSON object (or a field has the wrong type)"),
    ("token_in_url", 400, "a token was sent in the URL's query string; send it only in "
                          "the Authorization header (and revoke it: URLs end up in logs)"),
    ("unauthorized", 401, "no token, or not a live one"),
    ("forbidden", 403, "the token lacks the scope named in `scope`"),
    ("no_person", 403, "the token has no person: it may ask, never decide"),
    ("not_a_person", 403, "the token's person is not among the configured [people.NAME]"),
    ("not_found", 404, "no such path, or no such task, request, approval or attachment"),
    ("method_not_allowed", 405, "the path takes another method"),
    ("too_large", 413, "the body (or a file, or a JSON value) is past the `[limits]`"),
    ("unsupported_media_type", 415, "send application/json (or multipart/form-data to ask)"),
    ("rate_limited", 429, "too many requests for this token; wait Retry-After seconds"),
    ("database_unavailable", 503, "the database cannot be reached; try again"),
)


class ApiError(Exception):
    """A refusal to answer with `status` and the JSON error body."""

    def __init__(self, status: int, name: str, message: str, *,
                 headers: dict[str, str] | None = None, **extra: Any) -> None:
        super().__init__(message)
        self.status, self.name, self.message = status, name, message
        self.headers = headers or {}
        self.extra = extra

    def response(self) -> web.Response:
        body = {"error": self.name, "message": redact(self.message)} | self.extra
        return json_response(body, status=self.status, headers=self.headers)


def from_core(exc: SignoffError) -> ApiError:
    """The ApiError of a core error (its message is one line for the asker)."""
    for kind, name, status, _ in CORE_ERRORS:
        if isinstance(exc, kind):
            # A signed capability's approve is made in the web inbox: say where.
            link = getattr(exc, "link", None) if isinstance(exc, SignatureRequired) else None
            return ApiError(status, name, str(exc), **({"url": link} if link else {}))
    return ApiError(500, "error", str(exc))


def json_response(body: Any, *, status: int = 200,
                  headers: dict[str, str] | None = None) -> web.Response:
    return web.Response(text=json.dumps(body, ensure_ascii=False, default=str), status=status,
                        content_type="application/json", headers=headers)
