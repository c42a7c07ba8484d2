"""Four-eyes through the CLI and the config: `caps set --required-approvals`, the approve
line and JSON while short of the count, exit 7 for a second approve by the same person, and
the `[capabilities.NAME]` keys written to the database."""

from __future__ import annotations

from pathlib import Path

import pytest

from taskqueue import ConfigError, TaskQueue, apply_capabilities, load_config

from ..cli_helpers import CONFLICT, Cli, last_id

ALREADY_APPROVED = 7


def test_two_approves_through_the_cli(dsn: str) -> None:
    cli = Cli(dsn).fast
    caps = cli.json("caps", "set", "demo", "--required-approvals", "2", "--json")
    assert caps["required_approvals"] == 2
    task_id = cli.enqueue()
    cli.claim()
    approval_id = last_id(cli.ok("park", str(task_id), "--worker", "w1", "--question", "Go?"))
    line = cli.ok("approve", str(task_id), "--by", "alice")
    assert line.strip() == (f"task {task_id}: approval {approval_id}: Approved by alice "
                            "(1 of 2): waiting for a second person")
    again = cli.fails(ALREADY_APPROVED, "approve", str(task_id), "--by", "alice")
    assert "alice already approved" in again and "counts once" in again
    shown = cli.show(task_id)["approval"]
    assert shown["decision"] is None and shown["required"] == 2
    assert [a["by"] for a in shown["approvals"]] == ["alice"]
    assert "approvals (1 of 2 required):" in cli.ok("show", str(task_id))
    done = cli.json("approve", str(task_id), "--by", "bob", "--json")
    assert done["decision"] == "approved" and done["decided_by"] == "bob"
    assert [a["by"] for a in done["approvals"]] == ["alice", "bob"]
    assert "bob" in cli.fails(CONFLICT, "approve", str(task_id), "--by", "carol")
    cli.fails(1, "caps", "set", "demo", "--required-approvals", "0")
    assert cli.json("caps", "ls", "--json")[0]["required_approvals"] == 2


async def test_config_keys_reach_the_capability(queue: TaskQueue, tmp_path: Path) -> None:
    path = tmp_path / "signoff.toml"
    path.write_text('[capabilities.vm]\nmode = "external"\nrequired_approvals = 2\n'
                    'approvers = ["alice", "bob", "carol"]\nremind_after = 4\n'
                    'escalate_after = 24\nescalate_to = ["carol"]\n')
    [cap] = await apply_capabilities(queue, load_config(path, imports=False))
    assert (cap.required_approvals, cap.approvers, cap.escalate_to) == (
        2, ("alice", "bob", "carol"), ("carol",))
    assert (cap.remind_after_seconds, cap.escalate_after_seconds) == (4 * 3600, 24 * 3600)
    path.write_text('[capabilities.vm]\nmode = "external"\nrequired_approvals = 0\n')
    with pytest.raises(ConfigError, match="required_approvals"):
        load_config(path, imports=False)
    path.write_text('[capabilities.vm]\nmode = "external"\napprovers = "alice"\n')
    with pytest.raises(ConfigError, match="approvers"):
        load_config(path, imports=False)
