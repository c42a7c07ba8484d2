"""Who decided, proven: `signoff audit verify` recomputes the hash chain (migration 0015) and
checks the live rows against it; `signoff audit` sums the figures of the record."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from taskqueue.queues.maintenance import MaintenanceQueue
from taskqueue.store.groups import groups_from_json, groups_missing
from taskqueue.store.models import JSON

GENESIS = "0" * 64


def record_hash(prev_hash: str, seq: int, kind: str, ref: str, content: str) -> str:
    """A record's hash, as the database's signoff_audit_append computes it."""
    text = f"{prev_hash}\n{seq}\n{kind}\n{ref}\n{content}"
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class Problem:
    """One thing verify found: `seq` names the chain record (None: a live row's problem)."""

    ref: str
    what: str
    seq: int | None = None

    def line(self) -> str:
        where = f"record {self.seq} ({self.ref})" if self.seq is not None else self.ref
        return f"{where}: {self.what}"

    def to_json(self) -> JSON:
        return {"seq": self.seq, "ref": self.ref, "what": self.what}


@dataclass(frozen=True)
class VerifyReport:
    """What verify checked (records of the chain, live rows) and the problems, first first."""

    records: int
    live_rows: int
    head: str
    problems: tuple[Problem, ...] = field(default_factory=tuple)

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_json(self) -> JSON:
        return {"ok": self.ok, "records": self.records, "live_rows": self.live_rows,
                "head": self.head, "problems": [p.to_json() for p in self.problems]}


def check_chain(chain: Iterable[dict[str, Any]]) -> tuple[list[Problem], dict[str, Any]]:
    """Walk the chain: the first record changed (its hash), removed (a gap in `seq`) or
    inserted out of order (a previous hash that is not its predecessor's); and the latest
    record of each ref, read up to the first problem."""
    latest: dict[str, Any] = {}
    expected, prev = 1, GENESIS
    for r in chain:
        if r["seq"] != expected:
            return [Problem(r["ref"], f"records {expected} to {r['seq'] - 1} before it were "
                                      "removed", r["seq"])], latest
        if r["prev_hash"] != prev:
            return [Problem(r["ref"], "its previous hash is not record "
                                      f"{r['seq'] - 1}'s: a record before it was removed, "
                                      "changed or inserted out of order", r["seq"])], latest
        if record_hash(prev, r["seq"], r["kind"], r["ref"], r["content"]) != r["hash"]:
            return [Problem(r["ref"], "was changed: its hash does not match its content",
                            r["seq"])], latest
        latest[r["ref"]] = r
        expected, prev = r["seq"] + 1, r["hash"]
    return [], latest


def check_live(live: list[dict[str, Any]], latest: dict[str, Any]) -> list[Problem]:
    """Each live decision, approve and gated action must be the chain's latest record of it;
    each record of the chain must still be live unless the row went the way Signoff removes
    it (a task pruned with its approvals, a revise's discarded approves, a dropped action)."""
    problems: list[Problem] = []
    approvals = {r["approval_id"]: r["decision"] for r in live if r["what"] == "approval"}
    seen = set()
    for row in live:
        if row["content"] is None:  # an open approval: no decision to vouch for
            continue
        seen.add(row["ref"])
        record = latest.get(row["ref"])
        if record is None or record["kind"] == "action_dropped":
            problems.append(Problem(row["ref"], f"the live {row['what']} row is not in the "
                                                "chain: inserted or changed outside Signoff"))
        elif json.loads(record["content"]) != json.loads(row["content"]):
            problems.append(Problem(row["ref"], _differs(record, row), record["seq"]))
    for ref, record in latest.items():
        if ref in seen or record["kind"] == "action_dropped":
            continue
        approval_id = int(ref.split(":")[1])
        if approval_id not in approvals:
            continue  # pruned with its task
        if ref.startswith("vote:") and approvals[approval_id] == "revised":
            continue  # a revise discards the approves gathered
        problems.append(Problem(ref, "is in the chain but its live row was removed or "
                                     "undecided", record["seq"]))
    return problems


def _differs(record: dict[str, Any], row: dict[str, Any]) -> str:
    chained, now = json.loads(record["content"]), json.loads(row["content"])
    keys = sorted(k for k in set(chained) | set(now) if chained.get(k) != now.get(k))
    changes = "; ".join(f"{k}: {chained.get(k)!r} in the chain, {now.get(k)!r} in the table"
                        for k in keys[:3])
    return f"the live {row['what']} row differs from the chain ({changes})"


async def audit_verify(queue: MaintenanceQueue) -> VerifyReport:
    """Recompute the chain and check the live rows against it."""
    chain, live = await queue.audit_read()
    problems, latest = check_chain(chain)
    problems += check_live(live, latest)
    head = chain[-1]["hash"] if chain else GENESIS
    return VerifyReport(len(chain), sum(1 for r in live if r["content"] is not None), head,
                        tuple(problems))


async def audit_figures(queue: MaintenanceQueue, since: datetime | None = None) -> JSON:
    """The record's headline figures, each computed from the database."""
    raw = await queue.audit_figures_read(since)
    reasons: dict[str, dict[str, int]] = {}
    for r in raw["reasons"]:
        reasons.setdefault(r["capability"], {})[r["reason"]] = r["n"]
    tasks = {r["capability"]: {k: r[k] for k in ("tasks", "claimed", "asked", "approved",
                                                 "completed", "skipped", "expired", "failed")}
             | {"stages": r["stages"], "producer_filtered": reasons.get(r["capability"], {})}
             for r in raw["tasks"]}
    actions = [_action(a) for a in raw["actions"]]
    return {
        "since": since.isoformat() if since else None,
        "tasks": tasks,
        "gates_asked": raw["gates_asked"],
        "gated_actions": actions,
        "gated_actions_without_decision": sum(1 for a in actions if not a["decided"]),
        "expired": raw["expired"],
    }


def _action(a: dict[str, Any]) -> JSON:
    approves = a["approves"]
    short = groups_missing(groups_from_json(a["groups"]), [v["by"] for v in approves])
    return {"task_id": a["task_id"], "approval_id": a["approval_id"],
            "capability": a["capability"], "kind": a["kind"], "fingerprint": a["fingerprint"],
            "settled_by": a["settled_by"], "finished_at": a["finished_at"].isoformat(),
            "approved_by": [v["by"] for v in approves],
            "decided": bool(a["decided"]) and not short}
