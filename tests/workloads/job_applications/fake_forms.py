"""Serving the replica application forms and recording every submission they receive.

The server records every POST in `FormState.submissions`, so tests can prove that filling
never submits and that an approved submit posts exactly once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from .fake_form_pages import (
    GREENHOUSE_GONE,
    GREENHOUSE_SERVER_ERROR,
    LEVER_INVALID,
    generic_form,
    greenhouse_form,
    lever_form,
    page,
)


@dataclass
class Submission:
    path: str
    fields: dict[str, Any]  # name -> value (str) or {"filename", "size", "content_type"}


@dataclass
class FormState:
    submissions: list[Submission] = field(default_factory=list)
    changed: set[str] = field(default_factory=set)  # form paths that grew a new question

    def change_form(self, path: str) -> None:
        """From now on, the form at `path` asks one more required question."""
        self.changed.add(path)


def _html(text: str, status: int = 200) -> web.Response:
    return web.Response(text=text, status=status, content_type="text/html")


async def _record(request: web.Request, state: FormState) -> Submission:
    fields: dict[str, Any] = {}
    for name, value in (await request.post()).items():
        if isinstance(value, web.FileField):
            data = value.file.read()
            fields[name] = {
                "filename": value.filename,
                "size": len(data),
                "content_type": value.content_type,
            }
        elif name in fields:  # a checkbox group posts one value per checked box
            fields[name] = [
                *([fields[name]] if isinstance(fields[name], str) else fields[name]),
                value,
            ]
        else:
            fields[name] = value
    submission = Submission(request.path, fields)
    state.submissions.append(submission)
    return submission


def add_form_routes(app: web.Application, state: FormState) -> None:
    """Greenhouse under /greenhouse, Lever under /lever, the plain form under /careers."""

    async def greenhouse_get(request: web.Request) -> web.Response:
        job_id = request.match_info["job"]
        if job_id == GREENHOUSE_GONE:
            return _html(page("Not found", "<h1>This job is no longer available</h1>"), 404)
        return _html(greenhouse_form(request.path, job_id, request.path in state.changed))

    async def greenhouse_post(request: web.Request) -> web.StreamResponse:
        await _record(request, state)
        if request.match_info["job"] == GREENHOUSE_SERVER_ERROR:
            return _html(page("Error", "<h1>We're sorry, but something went wrong (500)</h1>"
                                        "<p>Please try again later.</p>"), 500)
        raise web.HTTPSeeOther(f"{request.path}/confirmation")

    async def greenhouse_done(request: web.Request) -> web.Response:
        return _html(
            page(
                "Thank you",
                "<h1>Thank you for applying to Nordwind Energie GmbH!</h1>"
                "<p>Your application has been received.</p>",
            )
        )

    async def lever_get(request: web.Request) -> web.Response:
        return _html(lever_form(request.path, changed=request.path in state.changed))

    async def lever_post(request: web.Request) -> web.StreamResponse:
        await _record(request, state)
        if request.match_info["posting"] == LEVER_INVALID:
            return _html(
                lever_form(
                    request.path,
                    error="Please correct the highlighted fields: the resume could not be read.",
                )
            )
        raise web.HTTPSeeOther(request.path.replace("/apply", "/thanks"))

    async def lever_done(request: web.Request) -> web.Response:
        return _html(
            page(
                "Thanks",
                "<h2>Application submitted!</h2><p>Thanks for applying to "
                "Fjord Analytics. We will review your application shortly.</p>",
            )
        )

    async def generic_get(request: web.Request) -> web.Response:
        return _html(generic_form(request.path, request.path in state.changed))

    async def generic_post(request: web.Request) -> web.StreamResponse:
        await _record(request, state)
        raise web.HTTPSeeOther("/careers/acme/received")

    async def generic_done(request: web.Request) -> web.Response:
        return _html(page("Received", "<p>Application received — we'll be in touch.</p>"))

    router = app.router
    router.add_get("/greenhouse/{token}/jobs/{job}", greenhouse_get)
    router.add_post("/greenhouse/{token}/jobs/{job}", greenhouse_post)
    router.add_get("/greenhouse/{token}/jobs/{job}/confirmation", greenhouse_done)
    router.add_get("/lever/{company}/{posting}/apply", lever_get)
    router.add_post("/lever/{company}/{posting}/apply", lever_post)
    router.add_get("/lever/{company}/{posting}/thanks", lever_done)
    router.add_get("/careers/acme/apply", generic_get)
    router.add_post("/careers/acme/apply", generic_post)
    router.add_get("/careers/acme/received", generic_done)
