"""People's decisions: approve, revise or skip an open approval, once, under the locks of
the approval and its task; a passkey-signed approve checked against the person's own
stored credential. An approve's vote (counted, partial, discarded) is store/votes.py's."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from taskqueue.errors import (
    ApprovalExpired,
    ApprovalNotFound,
    Conflict,
    NotAnApprover,
    SignatureRequired,
    TaskNotFound,
    human_time,
)
from taskqueue.store import rows
from taskqueue.store.base import ANSWERS_CHANNEL, APPROVALS_CHANNEL, TASKS_CHANNEL, Conn, Pipelined
from taskqueue.store.checks import (
    check_decision,
    check_name,
    person_key,
    refuse_decided,
)
from taskqueue.store.models import Approval
from taskqueue.store.passkeys import PasskeysMixin
from taskqueue.store.reads import ReadsMixin
from taskqueue.store.signing import Assertion, SignatureInvalid, verify_assertion
from taskqueue.store.states import Decision, Status
from taskqueue.store.votes import Decider, DecisionReads, VotesMixin, asked, counted, groups_short


class DecisionsMixin(VotesMixin, PasskeysMixin, ReadsMixin):
    """Each decision is one transaction; it reads the approval, the passkeys and the
    signing link through the people's other parts (reads, passkeys)."""

    async def approval_decide(self, approval_id: int, decision: Decision | str, by: str,
                              note: str | None = None, *, via: str | None = None,
                              assertion: Assertion | None = None) -> Approval:
        """Record a person's decision on an open approval, once. `via` records who typed it
        when the channel cannot prove the person (the CLI's `cli:USER@HOST`); `assertion`
        is the person's passkey signature over this request (an approve of a capability
        with signed_approvals needs one: SignatureRequired without, SignatureInvalid when
        it does not verify; nothing is recorded either way)."""
        choice = check_decision(decision, by, note)
        check_name(via, "via")
        self.schema_check_writable()
        signed = await self._checked_assertion(approval_id, by, assertion) \
            if assertion is not None and choice is Decision.APPROVED else None
        decider = Decider(by, via, signed[0] if signed else None)
        async with self._signature_link(), self._pipelined_tx() as tx:
            found = await self._send(tx.conn, "approval_lock", {"id": approval_id})
            sent = await self._send_decision_reads(tx.conn, choice, decider,
                                                   approval_id=approval_id)
            row = await found.fetchone()
            if row is None:
                raise ApprovalNotFound(f"no such approval: {approval_id}")
            result = await self._decide(tx, row, await sent.task.fetchone(), sent, choice,
                                        decider, note)
        if signed is not None:
            assertion, count = signed
            async with self.pool.connection() as conn:
                await self._all(conn, "passkey_used", {
                    "credential_id": assertion.credential_id, "sign_count": count})
        return self._decided(result)

    async def _checked_assertion(self, approval_id: int, by: str,
                                 assertion: Assertion) -> tuple[Assertion, int]:
        """The assertion and its new signature counter, once it verifies against `by`'s own
        stored credential over this approval's request, its counter past the stored one
        (SignatureInvalid otherwise)."""
        passkey = await self.passkey_get(assertion.credential_id)
        if passkey is None or person_key(passkey.person) != person_key(by):
            raise SignatureInvalid(f"that passkey is not one of {by}'s: nothing recorded")
        approval = await self.approval_get(approval_id)
        count = verify_assertion(assertion, passkey.public_key, passkey.rp_id, approval_id,
                                 approval.request, passkey.sign_count)
        return assertion, count

    @asynccontextmanager
    async def _signature_link(self) -> AsyncIterator[None]:
        """A SignatureRequired names where the person can sign (a registered link)."""
        try:
            yield
        except SignatureRequired as exc:
            link = await self.signing_link(exc.approval_id, exc.task_id)
            exc.link = link
            exc.args = (f"{exc.args[0]}: approve it with your passkey at {link}" if link else
                        f"{exc.args[0]}: approve it with your passkey in the web inbox (no "
                        "web inbox has registered its address yet)",)
            raise

    async def approval_decide_for_task(self, task_id: int, decision: Decision | str, by: str,
                                       note: str | None = None, *,
                                       via: str | None = None) -> Approval:
        """Decide the latest approval of a task (what the CLI's approve/revise/skip do)."""
        choice = check_decision(decision, by, note)
        check_name(via, "via")
        self.schema_check_writable()
        async with self._signature_link(), self._pipelined_tx() as tx:
            found = await self._send(tx.conn, "approval_lock_latest_for_task",
                                     {"task_id": task_id})
            sent = await self._send_decision_reads(tx.conn, choice, Decider(by, via),
                                                   task_id=task_id)
            row, task = await found.fetchone(), await sent.task.fetchone()
            if task is None:
                raise TaskNotFound(f"no such task: {task_id}")
            if row is None:
                raise Conflict(f"task {task_id} is {task['status']} and has no approval")
            result = await self._decide(tx, row, task, sent, choice, Decider(by, via), note)
        return self._decided(result)

    async def _send_decision_reads(self, conn: Conn, choice: Decision, decider: Decider, *,
                                   task_id: int | None = None,
                                   approval_id: int | None = None) -> DecisionReads:
        """Send, after the approval's lock (sent first), the task's lock, its capability's
        read and, for an approve, the vote with the votes so far: one round trip before any
        check ran. The vote is written only while the approval is open and unexpired; a
        check that refuses the decision rolls it back with everything else."""
        by, signed = decider.by, decider.assertion
        params = {"task_id": task_id, "approval_id": approval_id, "by": by,
                  "by_key": person_key(by), "via": decider.via,
                  "credential_id": signed.credential_id if signed else None,
                  "authenticator_data": signed.authenticator_data if signed else None,
                  "client_data": signed.client_data if signed else None,
                  "signature": signed.signature if signed else None,
                  "origin": signed.origin if signed else None}
        task = await self._send(conn, "decision_task_lock", params)
        cap = await self._send(conn, "decision_capability", params)
        if choice is not Decision.APPROVED:
            return DecisionReads(task, cap)
        return DecisionReads(task, cap, await self._send(conn, "decision_vote_insert", params),
                             await self._send(conn, "decision_votes", params))

    @staticmethod
    def _decided(result: Approval | ApprovalExpired) -> Approval:
        # An expiry found at decision time is committed before it is reported.
        if isinstance(result, ApprovalExpired):
            raise result
        return result

    async def _decide(self, tx: Pipelined, row: dict[str, Any], task: dict[str, Any] | None,
                      sent: DecisionReads, choice: Decision, decider: Decider,
                      note: str | None) -> Approval | ApprovalExpired:
        """Decide the locked approval `row` of the locked `task`, with the reads `sent`
        beside their locks."""
        conn, by = tx.conn, decider.by
        refuse_decided(row)
        if not row.get("is_current", True):
            raise Conflict(f"approval {row['id']} of task {row['task_id']} was superseded by "
                           "a newer question")
        assert task is not None
        if task["status"] != Status.NEEDS_APPROVAL:
            raise Conflict(f"task {task['id']} is {task['status']}; its approval cannot be decided")
        cap = await sent.cap.fetchone()
        # The requester may always skip their own request: a withdrawal.
        withdrawn = choice is Decision.SKIPPED and asked(row, task, by)
        if cap is not None and not withdrawn \
                and not rows.capability_from_row(cap).may_decide(by):
            raise NotAnApprover(f"{by} is not an approver of {task['capability']}: "
                                "nothing recorded")
        if row["past_expiry"]:
            await self._all(conn, "approval_expire_many", {"approval_id": row["id"]})
            return ApprovalExpired(f"approval {row['id']} of task {task['id']} expired at "
                                   f"{human_time(row['expires_at'])}")
        if choice is Decision.APPROVED and cap is not None and cap["signed_approvals"] \
                and decider.assertion is None:
            raise SignatureRequired(
                f"{task['capability']} counts only passkey-signed approves; {by}'s approve "
                f"of task {task['id']} was not recorded", task_id=task["id"],
                approval_id=row["id"])
        if choice is Decision.APPROVED:
            votes = await self._cast_vote(conn, row, task, decider, sent)
            if counted(votes) < row["required"] or groups_short(row, votes):
                return await self._partly_approved(conn, row, task, by, votes)
        if choice is Decision.REVISED:
            await self._discard_votes(conn, row)
        # Everything from here, COMMIT included, is sent before anything is fetched: one
        # round trip, so the task is claimable again as soon as the decision is recorded.
        decided = await self._send(conn, "approval_decide", {
            "id": row["id"], "decision": choice.value, "by": by, "note": note,
            "via": decider.via})
        await self._send(conn, "task_after_decision", {
            "id": task["id"], "decision": choice.value, "by": by, "note": note,
            "approval_id": row["id"], "via": decider.via, "withdrawn": withdrawn})
        await self._notify(conn, APPROVALS_CHANNEL, str(row["id"]))
        if choice is not Decision.SKIPPED:
            await self._notify(conn, TASKS_CHANNEL, task["capability"])
            await self._notify(conn, ANSWERS_CHANNEL, task["capability"])
        parts = await self._send_approval_parts(conn, [row["id"]])
        await tx.commit()
        decided_row = await decided.fetchone()
        assert decided_row is not None
        return (await self._approval_models([decided_row], parts))[0]
