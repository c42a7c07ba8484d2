"""Approver groups (issue 39): every group's minimum of distinct people, the total floor,
"waiting for GROUP" progress, the gate's check, and the config's checks at load."""

from __future__ import annotations

import asyncio
from pathlib import Path

import aiohttp
import pytest

from taskqueue import (
    ConfigError,
    Decision,
    Gate,
    GatedAction,
    NotApproved,
    Status,
    TaskQueue,
    apply_capabilities,
    load_config,
)
from tests.far_side import running_far_side

from ..factories import CAP, in_threads, parked, sql

GROUPS = {"ops": {"people": ["alice", "bob"], "min": 1},
          "finance": {"people": ["carol"], "min": 1}}
SEND = {"kind": "send", "fingerprint": "msg-1"}


async def test_the_request_waits_for_every_group(queue: TaskQueue) -> None:
    await queue.capability_set(CAP, approval_groups=GROUPS, required_approvals=2)
    task, approval = await parked(queue)
    assert [g.name for g in approval.groups] == ["ops", "finance"]
    await queue.approval_decide(approval.id, Decision.APPROVED, "alice")
    both_ops = await queue.approval_decide(approval.id, Decision.APPROVED, "Bob")
    # Two approves reach the total of two, but finance has none yet.
    assert both_ops.is_open and both_ops.approved_count == 2
    assert both_ops.progress() == "Approved by alice, Bob (2 of 2): waiting for finance"
    [row] = await sql(queue, "SELECT body FROM notifications WHERE kind = 'approval_progress' "
                             "AND approval_id = %s ORDER BY id DESC LIMIT 1", approval.id)
    assert row["body"]["waiting_for"] == ["finance"]
    done = await queue.approval_decide(approval.id, Decision.APPROVED, "carol")
    assert done.decision is Decision.APPROVED
    assert (await queue.task_get(task.id)).status is Status.APPROVED


async def test_the_total_still_counts_beside_the_groups(queue: TaskQueue) -> None:
    await queue.capability_set(CAP, approval_groups=GROUPS, required_approvals=3)
    _, approval = await parked(queue)
    await queue.approval_decide(approval.id, Decision.APPROVED, "alice")
    two = await queue.approval_decide(approval.id, Decision.APPROVED, "carol")
    assert two.is_open and two.missing_groups() == []
    assert two.progress() == "Approved by alice, carol (2 of 3): waiting for a third person"
    done = await queue.approval_decide(approval.id, Decision.APPROVED, "dave")
    assert done.decision is Decision.APPROVED


async def test_one_person_in_two_groups_fills_one_place(queue: TaskQueue) -> None:
    await queue.capability_set(CAP, approval_groups={
        "ops": {"people": ["alice"], "min": 1},
        "finance": {"people": ["alice", "carol"], "min": 1}})
    _, approval = await parked(queue)
    alone = await queue.approval_decide(approval.id, Decision.APPROVED, "ALICE")
    assert alone.is_open and alone.missing_groups() == ["finance"]
    done = await queue.approval_decide(approval.id, Decision.APPROVED, "carol")
    assert done.decision is Decision.APPROVED


def test_two_groups_approving_at_once_decide_once(dsn: str) -> None:
    """Real concurrency: ops and finance approve at the same moment; exactly one of them
    completes the request, the other is recorded short of it, never both resuming."""
    async def setup() -> int:
        async with TaskQueue.connect(dsn) as q:
            await q.capability_set(CAP, approval_groups=GROUPS)
            _, approval = await parked(q)
            return approval.id

    approval_id = asyncio.run(setup())

    async def approve(q: TaskQueue, i: int) -> bool:
        done = await q.approval_decide(approval_id, Decision.APPROVED, ("bob", "carol")[i])
        return done.decision is Decision.APPROVED

    assert sorted(in_threads(2, dsn, approve)) == [False, True]


async def test_the_gate_refuses_a_forced_approve_that_misses_a_group(queue: TaskQueue) -> None:
    await queue.capability_set(CAP, approval_groups=GROUPS)
    task, approval = await parked(queue, request=SEND)
    await queue.approval_decide(approval.id, Decision.APPROVED, "alice")
    await sql(queue, "UPDATE approvals SET decision = 'approved', decided_by = 'alice', "
                     "decided_at = now() WHERE id = %s", approval.id)
    await sql(queue, "UPDATE tasks SET status = 'approved' WHERE id = %s", task.id)
    held = await queue.task_claim(CAP, "w2")
    assert held is not None
    async with running_far_side() as far, aiohttp.ClientSession() as http:
        async def act(action: GatedAction) -> int:
            async with http.post(f"{far.url}/messages", json={"to": "x"}) as r:
                return r.status

        with pytest.raises(NotApproved, match="approver group finance"):
            await Gate(queue, held, "w2", "send").run("msg-1", act)
        assert far.requests == 0
        await sql(queue, "INSERT INTO approval_votes (approval_id, person) VALUES (%s, 'carol')",
                  approval.id)
        done = await Gate(queue, held, "w2", "send").run("msg-1", act)
        assert done.acted_now and far.requests == 1


CONFIG = """
[people.alice]
telegram_user_id = 1
[people.bob]
telegram_user_id = 2
[people.carol]
telegram_user_id = 3

[capabilities.vm_ops]
handler = "x:y"
required_approvals = 2
escalate_to = ["carol"]

[capabilities.vm_ops.approval_groups]
ops = { people = ["alice", "bob"], min = 1 }
finance = { people = ["carol"], min = 1 }
"""


async def test_the_config_writes_the_groups(queue: TaskQueue, tmp_path: Path) -> None:
    path = tmp_path / "signoff.toml"
    path.write_text(CONFIG)
    config = load_config(path, imports=False)
    [cap] = await apply_capabilities(queue, config)
    assert cap.to_json()["approval_groups"] == {
        "ops": {"people": ["alice", "bob"], "min": 1},
        "finance": {"people": ["carol"], "min": 1}}


@pytest.mark.parametrize(("old", "new", "line", "words"), [
    ('ops = { people = ["alice", "bob"], min = 1 }',
     'ops = { people = ["alice", "zed"], min = 1 }', 15, "unknown person 'zed'"),
    ('finance = { people = ["carol"], min = 1 }',
     'finance = { people = ["carol"], min = 2 }', 16, "min 2 is larger than the group (1 person)"),
    ('escalate_to = ["carol"]',
     'escalate_to = ["carol"]\napprovers = ["alice", "bob"]', 12, "'carol' cannot decide vm_ops"),
    ('escalate_to = ["carol"]', 'escalate_to = ["dave"]', 12, "unknown person 'dave'"),
])
def test_bad_groups_are_one_line_errors_naming_file_and_line(
        tmp_path: Path, old: str, new: str, line: int, words: str) -> None:
    path = tmp_path / "signoff.toml"
    path.write_text(CONFIG.replace(old, new))
    with pytest.raises(ConfigError) as err:
        load_config(path, imports=False)
    message = str(err.value)
    assert "\n" not in message and message.startswith(f"{path}, line {line}: ")
    assert words in message
