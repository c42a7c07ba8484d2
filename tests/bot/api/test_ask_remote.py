"""`signoff ask --url` through the HTTP API, with no database access: the same decisions
and exit codes as against the database, the same key after a kill, and a refused token."""

from __future__ import annotations

import asyncio

from tests.bot.api.conftest import Api
from tests.taskqueue.ask_helpers import Asking, asked, kill
from tests.taskqueue.factories import value

# No database for the child: a DATABASE_URL that cannot be reached.
NO_DATABASE = "postgresql://nobody@127.0.0.1:9/none"


async def _asking(api: Api, token: str) -> Asking:
    return Asking({"DATABASE_URL": NO_DATABASE, "SIGNOFF_TOKEN": token,
                   "SIGNOFF_URL": api.url})


async def test_remote_wait_revise_then_approve_after_a_kill(api: Api) -> None:
    asking = await _asking(api, await api.token("ci", None, ("ask",)))

    async def revise() -> None:
        found = await asked(api.queue, "deploys", "r1")
        await api.queue.approval_decide_for_task(found.id, "revised", "ada", "smaller")

    code, out, err = await asking.run("deploys", "--question", "Go?", "--key", "r1", "--wait",
                                      decide=revise)
    assert (code, out.strip()) == (10, "revised: smaller"), err
    assert (await api.queue.request_find("deploys", "r1")).asked_by == "agent:ci"  # type: ignore[union-attr]

    first = await asking.start("deploys", "--question", "Go?", "--key", "r2", "--wait")
    found = await asked(api.queue, "deploys", "r2")
    kill(first)
    await first.wait()

    async def approve() -> None:
        await asyncio.sleep(1)
        await api.queue.approval_decide_for_task(found.id, "approved", "ada")

    code, out, _ = await asking.run("deploys", "--question", "Go?", "--key", "r2", "--wait",
                                    "--url", api.url, decide=approve)
    assert (code, out.strip()) == (0, "approved by ada")
    assert await value(api.queue, "SELECT count(*) FROM tasks") == 2


async def test_remote_refusals(api: Api) -> None:
    reader = await _asking(api, await api.token("reader", None, ("read",)))
    code, _, err = await reader.run("deploys", "--question", "Go?")
    assert code == 15 and "forbidden" in err and "signoff_" not in err
    bad = await _asking(api, "signoff_not-a-live-token-at-all")
    code, _, err = await bad.run("deploys", "--question", "Go?")
    assert code == 15 and "unauthorized" in err and "not-a-live-token" not in err
    asker = await _asking(api, await api.token("ci", None, ("ask",)))
    code, _, err = await asker.run("mail", "--question", "Go?")
    assert code == 6 and "mode pool" in err
    assert await value(api.queue, "SELECT count(*) FROM tasks") == 0
