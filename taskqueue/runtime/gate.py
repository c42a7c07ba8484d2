"""The gated action: only what a person approved, checked right before, done at most once.

The one piece of code behind the product's promise; every workload's irreversible step
(a submit, an upload, a push, a hypervisor call) goes through it. The rules:

1. Right before acting, the task and its latest approval are read again from the database
   (never trusted from the claim): the task must still be running under this worker's
   claim (else LeaseLost) and the approval must be a person's approve of a request of this
   gate's `kind` whose `field` names exactly the fingerprint about to be acted on (else
   NotApproved, and nothing happens).
2. A "started" marker for that approve is saved under the claim before `act` runs
   (LeaseLost if the claim was stolen meanwhile: `act` is not called). The approve is the
   marker's primary key, so one approve permits at most one action, across workers too.
3. The result is recorded (under the claim) after `act` returns; a later call returns it.
4. A call that finds the marker without a result never acts blindly: `verify`, when given,
   settles whether it happened (True: recorded as done without acting; False: act once
   more); without it, or when it cannot tell (None), ActionUncertain asks the person one
   question: it may already have happened, check X, then approve to do it again or skip.

`act` gets the marker (`GatedAction`) whose `key` is an idempotency key derived from the task,
the kind and the fingerprint: the same for every attempt at the same thing, so a far side
that takes one (an `Idempotency-Key` header) does it at most once even when a person says
"again". See docs/semantics.md, "Gated actions".
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from taskqueue.errors import LeaseLost, SignoffError, human_time
from taskqueue.queues.worker import WorkerQueue
from taskqueue.runtime.crashpoints import Checkpoint
from taskqueue.store.groups import groups_missing
from taskqueue.store.models import JSON, Task
from taskqueue.store.states import Decision, Status
from taskqueue.store.work_models import GatedAction, GateView

Act = Callable[[GatedAction], Awaitable[Any]]
Verify = Callable[[GatedAction], Awaitable[bool | None]]

# Fixed, so a key is the same in every process and version: uuid5(this, task/kind/fingerprint).
KEY_NAMESPACE = uuid.UUID("5c1d0ff0-9a7e-4b8e-8f43-3a5e0b2c6d11")
MAX_CHECK_CHARS = 500


class NotApproved(SignoffError):
    """The task's latest approval does not permit this action; nothing was done."""

    exit_code = 6

    def __init__(self, reason: str, *, kind: str = "") -> None:
        super().__init__(reason)
        self.reason, self.kind = reason, kind


class ActionUncertain(SignoffError):
    """The action may already have happened (started, never recorded): a person must say."""

    exit_code = 6

    def __init__(self, action: GatedAction, question: str, request: JSON) -> None:
        super().__init__(question)
        self.action, self.question, self.request = action, question, request


class AlreadyActed(SignoffError):
    """This approve's action already happened (its result is recorded)."""

    exit_code = 6

    def __init__(self, action: GatedAction) -> None:
        super().__init__(f"approval {action.approval_id} was already acted on")
        self.action = action


class NothingHappened(Exception):
    """Raise it from `act` (`raise NothingHappened(...) from exc`) when the far side certainly
    did not do the action (it refused the request): the marker is removed, so the same
    approve may try again later, and the exception propagates to the caller."""


@dataclass(frozen=True)
class Gated:
    """What a gated action came to: its settled record and whether `act` ran in this call
    (False: a result recorded earlier was returned, or `verify` found it had happened)."""

    action: GatedAction
    acted_now: bool

    @property
    def result(self) -> Any:
        return self.action.result


def idempotency_key(task_id: int, kind: str, fingerprint: str) -> str:
    """The key handed to `act`: a UUID that only the task, the kind and the fingerprint make."""
    return str(uuid.uuid5(KEY_NAMESPACE, f"{task_id}\x1f{kind}\x1f{fingerprint}"))


def approval_problem(view: GateView, kind: str, field: str, fingerprint: str) -> str | None:
    """Why the latest approval does not permit acting on `fingerprint`; None when it does.

    Four-eyes: the distinct people whose approves count are read from the database with
    the view, so an approve short of the approval's `required` never acts, across crashes."""
    decision = view.decision.value if view.decision else "none"
    if view.approval_id is None or view.decision is not Decision.APPROVED:
        return f"the latest decision is {decision}"
    if not (view.decided_by or "").strip():
        return "the approval names no person"
    people = view.approvers
    if view.signed_required:
        # Signed approvals: only approves whose passkey signature verifies, against the
        # person's stored key, over exactly this request count (a row written by hand
        # without the person's authenticator does not).
        people = view.signed_by
        if len(set(people)) < view.required:
            return (f"{len(set(people))} of {view.required} required approves carry a "
                    "passkey signature that verifies for this request")
    # One required approve is the approve itself (decided_by, checked above).
    if view.required > 1 and len(set(people)) < view.required:
        return (f"{len(set(people))} of {view.required} required people approved "
                "the request")
    if missing := groups_missing(view.groups, people):
        return f"no approve yet from the approver group {', '.join(missing)}"
    if view.request.get("kind") != kind:
        return f"the latest approval is a {view.request.get('kind')!r} question, not {kind!r}"
    if view.request.get(field) != fingerprint:
        return f"the approved {field} differs from the one about to be acted on"
    return None


async def _no_checkpoint(name: str) -> None:
    """Production's checkpoint: nothing (tests pass one that stops the worker there)."""


def rename_points(checkpoint: Checkpoint, names: dict[str, str]) -> Checkpoint:
    """A checkpoint for a Gate that calls `checkpoint` with a workload's own point names
    (the gate's steps are verified, marked, acted and recorded); other steps pass."""

    async def point(step: str) -> None:
        if step in names:
            await checkpoint(names[step])

    return point


class Gate:
    """One kind of gated action of a claimed task; get it with `ctx.gate(kind)`.

    `field` is the request key that names the fingerprint (the park's request must carry
    `kind` and it); `checkpoint` is called at the steps verified, marked, acted, recorded."""

    def __init__(self, queue: WorkerQueue, task: Task, worker: str, kind: str, *,
                 field: str = "fingerprint", checkpoint: Checkpoint | None = None,
                 log: Any = None) -> None:
        self.queue, self.task, self.worker, self.kind, self.field = (
            queue, task, worker, kind, field)
        self.checkpoint = checkpoint or _no_checkpoint
        self.log = log

    async def run(self, fingerprint: str, act: Act, *, verify: Verify | None = None,
                  check: str | None = None, detail: JSON | None = None,
                  state: JSON | None = None) -> Gated:
        """Check, mark, act once, record; returns the settled action (see the module's rules).

        `check` says what a person should look at when it may have happened; `detail` is
        kept on the marker (for `verify`); `state` is saved with the marker. Raises
        NotApproved, ActionUncertain, LeaseLost, or what `act` raised (NothingHappened: the
        marker is gone; anything else: the marker stays and the next call checks)."""
        view = await self._permitted(fingerprint)
        action = view.action
        if action is not None and action.finished:
            return Gated(action, acted_now=False)
        if action is not None:
            settled = await self._settle(view, action, verify, check)
            if isinstance(settled, Gated):
                return settled
            action = settled
        else:
            action = await self._mark(view, fingerprint, detail, state, check)
        result = await self._act(action, act)
        await self.checkpoint("acted")
        return Gated(await self.finish(action, result), acted_now=True)

    async def started(self) -> GatedAction | None:
        """This gate's action under the task's latest approve, if one was started (finished or
        not): what a slice resuming after a crash looks at before anything else."""
        action = (await self.queue.gated_action_check(self.task.id)).action
        return action if action is not None and action.kind == self.kind else None

    async def begin(self, fingerprint: str, *, detail: JSON | None = None,
                    state: JSON | None = None, check: str | None = None) -> GatedAction:
        """Check and save the marker, for an action run by the caller (then `finish` it).

        Raises NotApproved, LeaseLost, AlreadyActed (recorded before) or ActionUncertain
        (started before and never recorded)."""
        view = await self._permitted(fingerprint)
        if view.action is not None and view.action.finished:
            raise AlreadyActed(view.action)
        if view.action is not None:
            raise self._uncertain(view, view.action, check)
        return await self._mark(view, fingerprint, detail, state, check)

    async def finish(self, action: GatedAction, result: Any = None, *,
                     state: JSON | None = None, settled_by: str = "acted") -> GatedAction:
        """Record the action's result (and `state`) under the claim; LeaseLost if it is gone."""
        done = await self.queue.gated_action_finish(action, self.worker, self.task.claim,
                                                    result, settled_by=settled_by,
                                                    state=state)
        if done is None:  # recorded already (by this claim, in an earlier call)
            done = (await self.queue.gated_action_check(self.task.id)).action
        assert done is not None
        self._log("gated action settled", done)
        await self.checkpoint("recorded")
        return done

    async def drop(self, action: GatedAction, *, state: JSON | None = None) -> None:
        """Remove the marker: the action certainly did not happen (the far side refused)."""
        await self.queue.gated_action_drop(action, self.worker, self.task.claim, state=state)
        self._log("gated action dropped", action)

    async def _permitted(self, fingerprint: str) -> GateView:
        view = await self.queue.gated_action_check(self.task.id)
        if view.status != Status.RUNNING or view.worker != self.worker \
                or view.claim != self.task.claim:
            raise LeaseLost(f"lease lost: task {self.task.id} is {view.status}; "
                            f"{self.worker} no longer holds it")
        problem = approval_problem(view, self.kind, self.field, fingerprint)
        if problem is not None:
            raise NotApproved(problem, kind=self.kind)
        return view

    async def _mark(self, view: GateView, fingerprint: str, detail: JSON | None,
                    state: JSON | None, check: str | None) -> GatedAction:
        await self.checkpoint("verified")
        assert view.approval_id is not None
        action = await self.queue.gated_action_start(
            self.task.id, self.worker, self.task.claim, approval_id=view.approval_id,
            kind=self.kind, fingerprint=fingerprint,
            key=idempotency_key(self.task.id, self.kind, fingerprint), detail=detail,
            state=state)
        if action is None:  # another call of this claim marked it first: never both act
            again = await self.queue.gated_action_check(self.task.id)
            assert again.action is not None
            raise self._uncertain(again, again.action, check)
        self._log("gated action started", action)
        await self.checkpoint("marked")
        return action

    async def _settle(self, view: GateView, action: GatedAction, verify: Verify | None,
                      check: str | None) -> Gated | GatedAction:
        """A marker without a result: verified done, to be done again, or a question."""
        found = await verify(action) if verify is not None else None
        if found is True:
            done = await self.finish(action, None, settled_by="verified")
            return Gated(done, acted_now=False)
        if found is False:
            again = await self.queue.gated_action_restart(action, self.worker, self.task.claim)
            if again is not None:
                self._log("gated action restarted", again)
                await self.checkpoint("marked")
                return again
        raise self._uncertain(view, action, check)

    async def _act(self, action: GatedAction, act: Act) -> Any:
        try:
            return await act(action)
        except NothingHappened:
            await self.drop(action)
            raise

    def _uncertain(self, view: GateView, action: GatedAction,
                   check: str | None) -> ActionUncertain:
        what = (check or "whether it reached the far side")[:MAX_CHECK_CHARS]
        question = (f"The {self.kind} action may already have happened: check {what}, "
                    "then approve to do it again or skip.")
        request = {
            **view.request, "kind": self.kind, self.field: action.fingerprint,
            "summary": (f"Approved by {action.approved_by}, started at "
                        f"{human_time(action.started_at)} (attempt {action.attempts}), and "
                        "never recorded as done: the worker stopped in between."),
            "how_to_answer": ("Approve: do it again (at most once more). Skip: do not; the "
                              "task ends skipped."),
            "uncertain": {"approval_id": action.approval_id, "key": action.key,
                          "started_at": action.started_at.isoformat(),
                          "attempts": action.attempts}}
        self._log("gated action uncertain", action)
        return ActionUncertain(action, question, request)

    def _log(self, what: str, action: GatedAction) -> None:
        if self.log is not None:
            self.log.info("%s kind=%s approval=%s attempts=%s", what, action.kind,
                          action.approval_id, action.attempts)
