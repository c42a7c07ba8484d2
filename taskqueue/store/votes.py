"""An approve's vote: cast beside the decision's locks (the requester's own is recorded and
not counted), recorded as partial while short of the count or a group's minimum, and
discarded when a person asks for a revision; with what a decision sends and who decides."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from psycopg import AsyncCursor
from psycopg.types.json import Jsonb

from taskqueue.errors import AlreadyApproved
from taskqueue.store import rows
from taskqueue.store.base import APPROVALS_CHANNEL, Conn, QueueBase
from taskqueue.store.checks import is_requester, person_key
from taskqueue.store.groups import groups_from_json, groups_missing
from taskqueue.store.models import Approval
from taskqueue.store.signing import Assertion


@dataclass(frozen=True)
class DecisionReads:
    """What a decision sent beside its locks, fetched as its checks need them."""

    task: AsyncCursor[Any]
    cap: AsyncCursor[Any]
    vote: AsyncCursor[Any] | None = None
    votes: AsyncCursor[Any] | None = None


@dataclass(frozen=True)
class Decider:
    """Who decides: the person, and who typed it when the channel cannot prove it."""

    by: str
    via: str | None = None
    # A verified passkey assertion, stored with the approve.
    assertion: Assertion | None = None


class VotesMixin(QueueBase):
    """The approves of one decision, each sent beside its locks (store/decisions.py)."""

    async def _cast_vote(self, conn: Conn, row: dict[str, Any], task: dict[str, Any],
                         decider: Decider, sent: DecisionReads) -> list[dict[str, Any]]:
        """`by`'s approve, written beside the locks: the request's approves with it (the
        requester's own counts for nothing). AlreadyApproved when `by` approved it before."""
        assert sent.vote is not None and sent.votes is not None
        by = decider.by
        vote = await sent.vote.fetchone()
        votes = await sent.votes.fetchall()
        if vote is None:
            raise AlreadyApproved(
                f"{by} already approved approval {row['id']} of task {row['task_id']} "
                f"({counted(votes)} of {row['required']}); an approve counts once per person",
                by=by, approved=counted(votes), required=row["required"])
        if asked(row, task, by):
            # Written as counted before the request was read: the requester's own approve
            # is recorded but does not count. Sent, not awaited: it runs before whatever
            # this decision sends next.
            await self._send(conn, "approval_vote_uncount", {"approval_id": row["id"],
                                                             "by_key": person_key(by)})
            votes = [v | {"counts": False} if v["person"] == vote["person"] else v
                     for v in votes]
        return votes

    async def _partly_approved(self, conn: Conn, row: dict[str, Any], task: dict[str, Any],
                               by: str, votes: list[dict[str, Any]]) -> Approval:
        """An approve short of the count, with the request's `votes` so far: recorded as an
        event and owed to every channel as an `approval_progress` notification; the
        approval stays open. Sent, not awaited: COMMIT follows them in one round trip."""
        approved, short = counted(votes), groups_short(row, votes)
        await self._send(conn, "event_insert", {
            "task_id": task["id"], "kind": "approved_partly", "actor": by,
            "detail": Jsonb({"approval_id": row["id"], "approved": approved,
                             "required": row["required"],
                             "counted": not asked(row, task, by)}
                            | ({"waiting_for": short} if short else {}))})
        await self._send(conn, "approval_progress_insert", {
            "task_id": task["id"], "approval_id": row["id"], "approved": approved,
            "required": row["required"], "by": by, "waiting_for": short})
        await self._notify(conn, APPROVALS_CHANNEL, str(row["id"]))
        return rows.approval_from_row(row, (), votes)

    async def _discard_votes(self, conn: Conn, row: dict[str, Any]) -> None:
        gone = await self._all(conn, "approval_votes_discard", {"approval_id": row["id"]})
        if gone:
            await self._one(conn, "event_insert", {
                "task_id": row["task_id"], "kind": "approvals_discarded", "actor": None,
                "detail": Jsonb({"approval_id": row["id"],
                                 "people": sorted(g["person"] for g in gone)})})

def asked(row: dict[str, Any], task: dict[str, Any], by: str) -> bool:
    """Whether `by` asked for this request: the task's requester recorded at enqueue, or
    the one its request names."""
    return is_requester(row["request"], by, task.get("enqueued_by"))


def groups_short(row: dict[str, Any], votes: list[dict[str, Any]]) -> list[str]:
    """The approval's groups whose minimum its counted approves do not meet yet."""
    return groups_missing(groups_from_json(row.get("groups")),
                          [v["person"] for v in votes if v["counts"]])


def counted(votes: list[dict[str, Any]]) -> int:
    """The approves that count toward an approval's `required` (not the requester's own)."""
    return sum(1 for v in votes if v["counts"])
