"""A fake OpenAI-compatible `POST /v1/chat/completions` endpoint with switchable misbehaviour."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

GOOD_LETTER = [
    "I am applying for the Senior Backend Engineer role at Nordwind Energie GmbH because your "
    "grid-balancing platform depends on exactly the kind of PostgreSQL infrastructure I build.",
    "At Kontor Logistics I designed a PostgreSQL-backed job queue that runs 2.4 million tasks a "
    "day, and I introduced tracing and SLO-based alerting that cut on-call pages sharply.",
    "I would be glad to bring that experience to your team and to talk about it in person.",
]


@dataclass
class ModelState:
    # ok | error | placeholder | not_json | unknown_bullet | copies_bullet | verbless
    mode: str = "ok"
    requests: list[dict[str, Any]] = field(default_factory=list)


def _content(mode: str, prompt: str) -> str:
    ids = re.findall(r"^(e\d+b\d+):", prompt, re.MULTILINE)
    order = list(reversed(ids))[:4]
    letter = list(GOOD_LETTER)
    if mode == "placeholder":
        letter[0] = "I am excited to apply to [Company] for the {{role}} position. TODO: more."
    if mode == "unknown_bullet":
        order = ["e9b9"]
    if mode == "copies_bullet":  # a bullet pasted word for word into the letter
        pasted = re.search(r"^e\d+b\d+: \([^)]*\) (.+)$", prompt, re.MULTILINE)
        letter[1] = f"In my current role: {pasted.group(1) if pasted else ''}"
    if mode == "verbless":
        letter[2] = "Backend engineer with nine years of experience in Python and Go."
    if mode == "not_json":
        return "Sure! Here is your cover letter: Dear hiring manager, ..."
    return json.dumps({"cover_letter": letter, "bullet_order": order})


def add_model_routes(app: web.Application, state: ModelState) -> None:
    async def chat_completions(request: web.Request) -> web.Response:
        body = await request.json()
        state.requests.append({"authorization": request.headers.get("Authorization"), "body": body})
        if state.mode == "error":
            return web.json_response(
                {"error": {"message": "The server had an error", "type": "server_error"}},
                status=500,
            )
        prompt = body["messages"][-1]["content"]
        return web.json_response(
            {
                "id": "chatcmpl-fake-1",
                "object": "chat.completion",
                "created": 1764000000,
                "model": body["model"],
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "stop",
                        "message": {"role": "assistant", "content": _content(state.mode, prompt)},
                    }
                ],
                "usage": {"prompt_tokens": 900, "completion_tokens": 250, "total_tokens": 1150},
            }
        )

    app.router.add_post("/v1/chat/completions", chat_completions)
