"""`signoff ask` against the database: it parks, `--wait` blocks until a person decides and
exits with the decision's code, and killed then run again with the same key it waits on
the same request, never asking twice."""

from __future__ import annotations

import asyncio
import json
import shlex
import sys
from pathlib import Path

import pytest

from taskqueue import TaskQueue

from ..ask_helpers import Asking, asked, kill
from ..factories import backdate, value


@pytest.fixture
def asking(dsn: str) -> Asking:
    return Asking({"DATABASE_URL": dsn})


@pytest.mark.parametrize(("decision", "note", "code", "said"), [
    ("approved", None, 0, "approved by ada"),
    ("revised", "canary first", 10, "revised: canary first"),
    ("skipped", None, 11, "skipped by ada"),
])
async def test_wait_exits_with_the_decisions_code(queue: TaskQueue, asking: Asking,
                                                  decision: str, note: str | None, code: int,
                                                  said: str) -> None:
    async def decide() -> None:
        found = await asked(queue, "deploys", "k1")
        await queue.approval_decide_for_task(found.id, decision, "ada", note)

    got = await asking.run("deploys", "--question", "Deploy?", "--key", "k1", "--wait",
                           decide=decide)
    assert got[0] == code, got
    assert got[1].strip() == said
    assert "waits for a decision" in got[2]


async def test_expiry_and_timeout_have_their_codes(queue: TaskQueue, asking: Asking) -> None:
    async def lapse() -> None:
        found = await asked(queue, "deploys", "old")
        await backdate(queue, "approvals", "expires_at", "1 s", "task_id = %s", found.id)

    code, out, _ = await asking.run("deploys", "--question", "Q?", "--key", "old", "--wait",
                                    decide=lapse)
    assert (code, out.strip()) == (12, "expired")
    code, out, _ = await asking.run("deploys", "--question", "Q?", "--key", "slow", "--wait",
                                    "--timeout", "1")
    assert code == 14 and out.startswith("needs_approval")
    assert (await queue.request_find("deploys", "slow")).status == "needs_approval"  # type: ignore[union-attr]


async def test_killed_then_run_again_with_the_key_waits_on_the_same_request(
        queue: TaskQueue, asking: Asking) -> None:
    first = await asking.start("deploys", "--question", "Deploy?", "--key", "ci-7", "--wait")
    found = await asked(queue, "deploys", "ci-7")
    kill(first)
    await first.wait()

    async def approve() -> None:
        await asyncio.sleep(1)
        await queue.approval_decide_for_task(found.id, "approved", "ada")

    code, out, _ = await asking.run("deploys", "--question", "Deploy?", "--key", "ci-7",
                                    "--wait", decide=approve)
    assert (code, out.strip()) == (0, "approved by ada")
    assert await value(queue, "SELECT count(*) FROM tasks") == 1
    # Run again after the decision: the same answer at once, still one request.
    code, out, _ = await asking.run("deploys", "--question", "Deploy?", "--key", "ci-7",
                                    "--wait")
    assert (code, out.strip()) == (0, "approved by ada")
    assert await value(queue, "SELECT count(*) FROM tasks") == 1


async def test_in_a_shell_pipeline(queue: TaskQueue, asking: Asking) -> None:
    async def revise() -> None:
        found = await asked(queue, "deploys", "pipe")
        await queue.approval_decide_for_task(found.id, "revised", "ada", "not on a Friday")

    code, out, _ = await asking.run(shell=(
        f"{shlex.quote(sys.executable)} -m taskqueue ask deploys --question 'Deploy?' "
        "--key pipe --wait "
        '| tr a-z A-Z; echo "exit=${PIPESTATUS[0]}"'), decide=revise)
    assert code == 0
    assert out.splitlines() == ["REVISED: NOT ON A FRIDAY", "exit=10"]


async def test_without_wait_it_prints_the_id(queue: TaskQueue, asking: Asking,
                                             tmp_path: Path) -> None:
    evidence = tmp_path / "plan.txt"
    evidence.write_text("+ 3 to add\n")
    code, out, _ = await asking.run("deploys", "--question", "Apply?", "--request",
                                    '{"plan": "terraform"}', "--attach", str(evidence),
                                    "--required-approvals", "2")
    assert code == 0
    task = await queue.task_get(int(out.strip()))
    assert task.approval is not None and task.approval.request == {"plan": "terraform"}
    assert task.approval.required == 2
    assert [a.filename for a in task.approval.attachments] == ["plan.txt"]
    code, out, _ = await asking.run("deploys", "--question", "Apply?", "--json")
    assert code == 0 and json.loads(out)["status"] == "needs_approval"


async def test_bad_asks_write_nothing(queue: TaskQueue, asking: Asking,
                                      tmp_path: Path) -> None:
    config = tmp_path / "signoff.toml"
    config.write_text('[capabilities.mail]\nhandler = "x:y"\nmode = "pool"\n')
    for args, code, message in (
            (("deploys", "--question", "Q?", "--request", "{bad"), 1, "--request"),
            (("deploys", "--question", ""), 1, "question"),
            (("deploys", "--question", "Q?", "--attach", "/nonexistent"), 1, "nonexistent"),
            (("deploys", "--question", "Q?", "--timeout", "5"), 2, "--timeout"),
            (("deploys", "--question", "Q?", "--url", "ftp://x"), 1, "http://"),
            (("deploys", "--question", "Q?", "--url", "http://127.0.0.1:9"), 1, "SIGNOFF_TOKEN"),
            (("mail", "--question", "Q?", "--config", str(config)), 6, "mode pool"),
            (("deploys",), 2, "--question")):
        got = await asking.run(*args)
        assert got[0] == code and message in got[2], (args, got)
        assert len(got[2].strip().splitlines()) == 1
    assert await value(queue, "SELECT count(*) FROM tasks") == 0
