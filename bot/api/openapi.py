"""The OpenAPI 3.1 document of /api/v1/, generated from the route table, and its route."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from bot.api.app import BASE, Route, api_of
from bot.api.errors import API_ERRORS, CORE_ERRORS, json_response

# Every answer that any authenticated route may give besides its own.
_SHARED = {400: "bad_input, bad_json or token_in_url", 401: "unauthorized",
           403: "forbidden (the missing scope in `scope`)", 413: "too_large",
           415: "unsupported_media_type", 429: "rate_limited (see Retry-After)",
           503: "database_unavailable"}
_ERROR_SCHEMA = {"type": "object", "required": ["error", "message"],
                 "properties": {"error": {"type": "string"}, "message": {"type": "string"},
                                "scope": {"type": "string"}}}


def document(routes: list[Route]) -> dict[str, Any]:
    paths: dict[str, dict[str, Any]] = {}
    for r in routes:
        paths.setdefault(BASE + r.path, {})[r.method.lower()] = _operation(r)
    names = sorted({n for _, n, _, _ in CORE_ERRORS} | {n for n, _, _ in API_ERRORS})
    return {
        "openapi": "3.1.0",
        "info": {"title": "Signoff API", "version": "1",
                 "description": "Ask for a person's sign-off, decide, work and read. "
                                "Error names: " + ", ".join(names) + " (docs/api.md)."},
        "paths": paths,
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "schemas": {"Error": _ERROR_SCHEMA}},
    }


def _operation(r: Route) -> dict[str, Any]:
    op: dict[str, Any] = {"operationId": r.operation_id, "summary": r.summary,
                          "responses": {}}
    params = [{"name": p.name, "in": "query", "required": False, "schema": dict(p.schema),
               "description": p.description} for p in r.query]
    if "{id}" in r.path:
        params.insert(0, {"name": "id", "in": "path", "required": True,
                          "schema": {"type": "integer"}})
    if params:
        op["parameters"] = params
    if r.body is not None:
        content: dict[str, Any] = {"application/json": {"schema": dict(r.body)}}
        if r.multipart:
            content["multipart/form-data"] = {"schema": {"type": "object"}}
        op["requestBody"] = {"required": True, "content": content}
    for status, text in sorted(r.answers.items()):
        op["responses"][str(status)] = _answer(status, text)
    if r.scopes:
        op["security"] = [{"bearer": []}]
        op["description"] = "Scopes: " + " or ".join(r.scopes) + "."
        for status, text in _SHARED.items():
            op["responses"].setdefault(str(status), _answer(status, text))
    return op


def _answer(status: int, text: str) -> dict[str, Any]:
    if status == 204:
        return {"description": text}
    schema = {"$ref": "#/components/schemas/Error"} if status >= 400 else {}
    return {"description": text, "content": {"application/json": {"schema": schema}}}


async def openapi_json(request: web.Request) -> web.StreamResponse:
    return json_response(document(list(api_of(request).routes.values())))


ROUTES = [Route("GET", "/openapi.json", openapi_json, (), "This document",
                answers={200: "the OpenAPI 3.1 document"})]
