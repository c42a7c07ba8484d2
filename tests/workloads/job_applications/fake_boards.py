"""A fake Greenhouse job-board API and Lever postings API, speaking their real JSON shapes."""

from __future__ import annotations

import asyncio
import html
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from .fake_form_pages import GREENHOUSE_SERVER_ERROR, LEVER_INVALID

# Every LaTeX special character, in a title and a description, to prove escaping end to end.
LATEX_TITLE = "C# & R&D Engineer – 100% $ _ {} ~ ^ \\ (Zürich)"

GREENHOUSE_COMPANY = "Nordwind Energie GmbH"
LEVER_COMPANY = "Fjord Analytics"

# id, title, location, description HTML (unescaped; the API escapes it)
_GREENHOUSE_JOBS: list[tuple[int, str, str, str]] = [
    (
        4012345,
        "Senior Backend Engineer (Python, PostgreSQL)",
        "Berlin, Germany",
        "<p><strong>About us</strong></p><p>Nordwind balances Germany&rsquo;s grid in real "
        "time. Our backend runs on <em>Python</em> and <em>PostgreSQL</em>.</p>"
        "<h3>What you&#39;ll do</h3><ul><li>Own our PostgreSQL job queue and its "
        "observability</li><li>Run services on Kubernetes with Terraform</li>"
        "<li>Mentor engineers &amp; review designs</li></ul><p>Salary: 80.000&nbsp;€ – "
        "95.000&nbsp;€ · Python, PostgreSQL, Kafka</p>",
    ),
    (
        4012346,
        LATEX_TITLE,
        "Zürich, Switzerland",
        "<p>Work on C# tooling &amp; R&amp;D: 100% $ _ {} ~ ^ \\ are all in this text.</p>"
        "<p>Grüße aus Zürich — “quotes” and ‘single’ ones.</p>",
    ),
    (
        4012347,
        "Principal Platform Engineer",
        "Remote - Europe",
        "<p>Lead our Kubernetes platform and Terraform modules across Europe.</p>",
    ),
    (
        4012348,
        "Backend Engineer, Trading",
        "Berlin, Germany",
        "<p>Build our crypto trading backend in Go and PostgreSQL.</p>",
    ),
    (
        4012399,
        "Data Engineer (position closed)",
        "Berlin, Germany",
        "<p>Kafka and Python data pipelines. This posting was taken down.</p>",
    ),
]

_LEVER_POSTINGS: list[dict[str, Any]] = [
    {
        "id": "5f1c2a4e-8d7b-4c1e-9a3f-2b6d8e0f1a2c",
        "text": "Platform Engineer (Kubernetes)",
        "categories": {
            "commitment": "Full-time",
            "department": "Engineering",
            "location": "Stockholm or Remote",
            "team": "Platform",
            "allLocations": ["Stockholm", "Remote"],
        },
        "createdAt": 1764000000000,
        "descriptionPlain": "Fjord Analytics runs a data platform for Nordic retailers.\n"
        "We run everything on Kubernetes & Terraform.",
        "description": "<div>Fjord Analytics runs a data platform for Nordic retailers.</div>"
        "<div>We run everything on Kubernetes &amp; Terraform.</div>",
        "lists": [
            {
                "text": "What you'll do",
                "content": "<li>Operate Kubernetes clusters with Terraform</li>"
                "<li>Improve CI/CD and observability with Prometheus</li>",
            },
            {
                "text": "About you",
                "content": "<li>Python or Go</li><li>Calm during on-call &amp; incidents</li>",
            },
        ],
        "additional": "<div>Salary range 700 000 – 820 000 SEK.</div>",
        "additionalPlain": "Salary range 700 000 – 820 000 SEK.",
        "workplaceType": "remote",
        "country": "SE",
    },
    {
        "id": "0b9e6c1d-3f2a-4e8b-8c7d-6a5b4c3d2e1f",
        "text": "Junior Frontend Developer",
        "categories": {"commitment": "Full-time", "location": "Berlin", "team": "Web"},
        "createdAt": 1764100000000,
        "descriptionPlain": "React and TypeScript for our dashboards.",
        "description": "<div>React and TypeScript for our dashboards.</div>",
        "lists": [],
        "additionalPlain": "",
        "workplaceType": "on-site",
    },
    {
        "id": "7c2d4e6f-1a3b-4c5d-9e8f-0a1b2c3d4e5f",
        "text": "Staff Data Engineer",
        "categories": {"commitment": "Full-time", "location": "Berlin", "team": "Data"},
        "createdAt": 1764200000000,
        "descriptionPlain": "Kafka, Python and data pipelines feeding PostgreSQL.",
        "description": "<div>Kafka, Python and data pipelines feeding PostgreSQL.</div>",
        "lists": [
            {"text": "Requirements", "content": "<li>Kafka in production</li><li>Python, SQL</li>"}
        ],
        "additionalPlain": "Hybrid: two days a week in our Berlin office.",
        "workplaceType": "hybrid",
    },
]


# A second Greenhouse board ("polaris") whose postings each meet or break one of the newer
# hard requirements; pay ranges (yearly, EUR) are served only per job, as Greenhouse does.
POLARIS_COMPANY = "Polaris Systems"
_POLARIS_JOBS: list[tuple[int, str, str, str]] = [
    (5010001, "Senior Backend Engineer (US)", "Remote - US", "<p>Python and PostgreSQL.</p>"),
    (5010002, "Backend Engineer, Defence", "Berlin, Germany",
     "<p>Python services. An active security clearance is required.</p>"),
    (5010003, "Research Engineer", "Berlin, Germany",
     "<p>Python and Kafka. A PhD in Computer Science is required.</p>"),
    (5010004, "Backend Engineer, Marketplace", "Berlin, Germany",
     "<p>Go and PostgreSQL. Fluent French is required for this role.</p>"),
    (5010005, "Backend Engineer, Campus", "Berlin, Germany",
     "<p>Python. You must be currently enrolled at a German university.</p>"),
    (5010006, "Backend Engineer, Payments", "Berlin, Germany",
     "<p>Go and Kafka. You must be authorized to work in the United States. "
     "We are unable to offer visa sponsorship.</p>"),
    (5010007, "Senior Python Engineer", "Berlin, Germany", "<p>Python and PostgreSQL.</p>"),
    (5010008, "Senior PostgreSQL Engineer", "Berlin, Germany",
     "<p>PostgreSQL, Python and Kafka. A master's degree or equivalent experience.</p>"),
    (5010009, "Platform Engineer", "Remote - Europe", "<p>Kubernetes and Terraform.</p>"),
    (5010010, "Senior Data Engineer", "Berlin, Germany",
     "<p>Kafka and Python. Fluent English is required; German is a plus.</p>"),
    (5010011, "Office Manager", "Berlin, Germany", "<p>Organise our office and events.</p>"),
]
POLARIS_PAY = {5010007: (50_000, 65_000), 5010008: (90_000, 110_000)}


@dataclass
class BoardState:
    """Postings taken down since the scrape: gone from the list, HTTP 404 one by one."""

    removed: set[str] = field(default_factory=set)
    # Still in the board's list, but the one-job view answers this status (a lagging list).
    view_gone: dict[str, int] = field(default_factory=dict)

    def remove(self, external_id: str) -> None:
        self.removed.add(external_id)


def _greenhouse_job(base: str, token: str, job: tuple[int, str, str, str]) -> dict[str, Any]:
    job_id, title, location, description = job
    return {
        "id": job_id,
        "internal_job_id": job_id - 4000000,
        "title": title,
        "updated_at": "2026-11-20T10:12:03-05:00",
        "requisition_id": f"ENG-{job_id % 1000}",
        "location": {"name": location},
        "absolute_url": f"{base}/greenhouse/{token}/jobs/{job_id}",
        "metadata": None,
        "data_compliance": [{"type": "gdpr", "requires_consent": True, "retention_period": None}],
        "content": html.escape(description, quote=True),
        "departments": [{"id": 11, "name": "Engineering", "parent_id": None, "child_ids": []}],
        "offices": [{"id": 5, "name": location.split(",")[0], "location": location,
                     "parent_id": None, "child_ids": []}],
    }


def _pay_ranges(job_id: int) -> list[dict[str, Any]]:
    if job_id not in POLARIS_PAY:
        return []
    low, high = POLARIS_PAY[job_id]
    return [{"min_cents": low * 100, "max_cents": high * 100, "currency_type": "EUR",
             "title": "Berlin", "blurb": "Base salary; the offer depends on experience."}]


def polaris_jobs(base: str) -> dict[str, Any]:
    """The body of GET /v1/boards/polaris/jobs?content=true (no pay ranges in the list)."""
    jobs = [_greenhouse_job(base, "polaris", job) for job in _POLARIS_JOBS]
    return {"jobs": jobs, "meta": {"total": len(jobs)}}


def greenhouse_jobs(base: str) -> dict[str, Any]:
    """The body of GET /v1/boards/nordwind/jobs?content=true."""
    jobs = []
    for job_id, title, location, description in _GREENHOUSE_JOBS:
        jobs.append(
            {
                "id": job_id,
                "internal_job_id": job_id - 4000000,
                "title": title,
                "updated_at": "2026-11-20T10:12:03-05:00",
                "requisition_id": f"ENG-{job_id % 1000}",
                "location": {"name": location},
                "absolute_url": f"{base}/greenhouse/nordwind/jobs/{job_id}",
                "metadata": None,
                "data_compliance": [
                    {"type": "gdpr", "requires_consent": True, "retention_period": None}
                ],
                "content": html.escape(description, quote=True),
                "departments": [
                    {"id": 11, "name": "Engineering", "parent_id": None, "child_ids": []}
                ],
                "offices": [
                    {
                        "id": 5,
                        "name": location.split(",")[0],
                        "location": location,
                        "parent_id": None,
                        "child_ids": [],
                    }
                ],
            }
        )
    # The API leaves company_name out on some boards: the first job has it, the rest do not.
    jobs[0]["company_name"] = GREENHOUSE_COMPANY
    return {"jobs": jobs, "meta": {"total": len(jobs)}}


def lever_postings(base: str) -> list[dict[str, Any]]:
    """The body of GET /v0/postings/fjord?mode=json."""
    return [
        {
            **posting,
            "hostedUrl": f"{base}/lever/fjord/{posting['id']}",
            "applyUrl": f"{base}/lever/fjord/{posting['id']}/apply",
        }
        for posting in _LEVER_POSTINGS
    ]


def _base(request: web.Request) -> str:
    return f"http://{request.host}"


def _listed(jobs: dict[str, Any], state: BoardState) -> dict[str, Any]:
    kept = [job for job in jobs["jobs"] if str(job["id"]) not in state.removed]
    return {"jobs": kept, "meta": {"total": len(kept)}}


def _greenhouse_all(base: str) -> dict[str, dict[str, Any]]:
    """Every live-able Greenhouse job by board and id, with its pay ranges (one-job view)."""
    jobs = {("nordwind", str(j["id"])): j for j in greenhouse_jobs(base)["jobs"]}
    jobs |= {("polaris", str(j["id"])): j for j in polaris_jobs(base)["jobs"]}
    # Forms the tests open directly: live on the board, though not in the list.
    extra = (int(GREENHOUSE_SERVER_ERROR), "Backend Engineer", "Berlin, Germany", "<p>Go.</p>")
    jobs[("nordwind", GREENHOUSE_SERVER_ERROR)] = _greenhouse_job(base, "nordwind", extra)
    return {f"{t}/{i}": {**j, "pay_input_ranges": _pay_ranges(int(i))} for (t, i), j in
            jobs.items()}


def _greenhouse_view(request: web.Request, state: BoardState) -> web.Response:
    token, job_id = request.match_info["token"], request.match_info["job"]
    job = _greenhouse_all(_base(request)).get(f"{token}/{job_id}")
    if job is None or job_id in state.removed:
        return web.json_response({"status": 404, "error": "Job not found"}, status=404)
    if job_id in state.view_gone:
        return web.json_response({"error": "Gone"}, status=state.view_gone[job_id])
    if request.query.get("pay_transparency") != "true":
        job = {k: v for k, v in job.items() if k != "pay_input_ranges"}
    return web.json_response(job)


def add_board_routes(app: web.Application, state: BoardState | None = None) -> None:
    state = state or BoardState()

    async def greenhouse_board(request: web.Request) -> web.Response:
        token = request.match_info["token"]
        if token == "nordwind":
            return web.json_response(_listed(greenhouse_jobs(_base(request)), state))
        if token == "polaris":
            return web.json_response(_listed(polaris_jobs(_base(request)), state))
        if token == "broken":
            return web.Response(status=500, text="Internal Server Error")
        if token == "slow":
            await asyncio.sleep(1.0)
            return web.json_response({"jobs": []})
        return web.json_response({"status": 404, "error": "Job board not found"}, status=404)

    async def greenhouse_job(request: web.Request) -> web.Response:
        return _greenhouse_view(request, state)

    async def lever_board(request: web.Request) -> web.Response:
        company = request.match_info["company"]
        if request.query.get("mode") != "json":
            return web.Response(status=400, text="mode=json expected")
        if company == "fjord":
            return web.json_response([p for p in lever_postings(_base(request))
                                      if p["id"] not in state.removed])
        if company == "garbled":
            return web.Response(text='[{"id": "x", "text": ', content_type="application/json")
        return web.json_response({"ok": False, "error": "Document not found"}, status=404)

    async def lever_posting(request: web.Request) -> web.Response:
        posting_id = request.match_info["posting"]
        live = {p["id"]: p for p in lever_postings(_base(request))}
        live[LEVER_INVALID] = {**live[_LEVER_POSTINGS[0]["id"]], "id": LEVER_INVALID}
        if request.match_info["company"] != "fjord" or posting_id not in live \
                or posting_id in state.removed:
            return web.json_response({"ok": False, "error": "Document not found"}, status=404)
        return web.json_response(live[posting_id])

    app.router.add_get("/gh/v1/boards/{token}/jobs", greenhouse_board)
    app.router.add_get("/gh/v1/boards/{token}/jobs/{job}", greenhouse_job)
    app.router.add_get("/lever-api/v0/postings/{company}", lever_board)
    app.router.add_get("/lever-api/v0/postings/{company}/{posting}", lever_posting)
