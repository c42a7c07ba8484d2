"""A fake OpenAI-compatible `POST /v1/chat/completions` endpoint with switchable misbehaviour."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

GOOD_LETTER = [
    "I am applying for the Senior Backend Engineer (Python, PostgreSQL) role at Nordwind Energie "
    "GmbH because your platform runs on PostgreSQL.",
    "At Kontor Logistics GmbH I designed a PostgreSQL-backed job queue that runs 2.4 million "
    "shipment tasks a day with a p99 pickup latency under 80 ms.",
    "I would be glad to bring that experience to Nordwind Energie GmbH and to talk about it in "
    "person.",
]
# Faults the letter check must catch, each as a replacement of one paragraph of GOOD_LETTER.
FAULTY = {
    "cuts_bullet": (1, "At Kontor Logistics GmbH I designed a PostgreSQL-backed job queue."),
    "joins_bullets": (1, "At Kontor Logistics GmbH I designed a PostgreSQL-backed job queue that "
                         "runs 2.4 million shipment tasks a day with a p99 pickup latency under "
                         "80 ms and reconciles card payments across 9 currencies."),
    "asks_unrequired": (0, "Your posting asks for Python and Kafka, and I am applying for the "
                           "Senior Backend Engineer (Python, PostgreSQL) role at Nordwind "
                           "Energie GmbH."),
    "invents_numbers": (1, "At Kontor Logistics GmbH I designed a PostgreSQL-backed job queue "
                           "that runs 5 million shipment tasks a day with a p99 pickup latency "
                           "under 80 ms."),
}


@dataclass
class ModelState:
    # ok | error | placeholder | not_json | unknown_bullet | verbless | a key of FAULTY
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
    if mode in FAULTY:
        where, text = FAULTY[mode]
        letter[where] = text
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
