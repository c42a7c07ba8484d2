"""What each `signoff` command does: validate input first, then one call to the queue."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TYPE_CHECKING, Any, TypeVar

import psycopg

from taskqueue.cli import output as out
from taskqueue.cli.inputs import (
    cli_config,
    cli_limits,
    config_limits,
    parse_json,
    read_attachments,
    read_jsonl,
)
from taskqueue.cli.people import resolve_person, typed_by
from taskqueue.errors import BadInput, MigrationError, NothingToClaim
from taskqueue.queues.people import PeopleQueue
from taskqueue.queues.shared import SharedQueue
from taskqueue.store.checks import Limits
from taskqueue.store.db import describe, resolve_dsn

if TYPE_CHECKING:
    from taskqueue.queues.whole import TaskQueue

# The commands a person runs most (ls, show, approve) open the part of the queue they use
# and import only its modules; the others import what they need when they run (issue 44's
# CLI start-up: a module's import costs every command that loads it).
Part = TypeVar("Part", bound=SharedQueue)

UNSET: Any = object()


async def ready_dsn() -> str:
    """The database to use. The embedded server is migrated on first use, so any command
    works on a fresh one; a DATABASE_URL is migrated only by `signoff migrate`."""
    dsn = resolve_dsn()
    if not os.environ.get("DATABASE_URL"):
        from taskqueue.store.migrate import migrate

        await migrate(dsn)
    return dsn


@asynccontextmanager
async def open_part(part: type[Part], limits: Limits | None = None) -> AsyncIterator[Part]:
    """One part of the queue (a facade of taskqueue/queues/) on one connection to the CLI's
    database, under `limits` (default: the config file's)."""
    limits = limits or cli_limits()
    dsn = await ready_dsn()
    async with _opened(part.connect_single(dsn), dsn, limits) as queue:
        yield queue


@asynccontextmanager
async def open_queue(max_size: int = 1, limits: Limits | None = None
                     ) -> AsyncIterator[TaskQueue]:
    """The whole queue on the CLI's database, under `limits` (default: the config file's):
    on one connection for a command that makes its calls one after another (`max_size` 1),
    on a pool for one that makes them side by side."""
    from taskqueue.queues.whole import TaskQueue

    if max_size == 1:
        async with open_part(TaskQueue, limits) as queue:
            yield queue
        return
    limits = limits or cli_limits()
    dsn = await ready_dsn()
    async with _opened(TaskQueue.connect(dsn, min_size=1, max_size=max_size), dsn,
                       limits) as queue:
        yield queue


@asynccontextmanager
async def _opened(connect: AbstractAsyncContextManager[Part], dsn: str, limits: Limits
                  ) -> AsyncIterator[Part]:
    try:
        async with connect as queue:
            queue.limits = limits
            yield queue
    except psycopg.errors.UndefinedTable:
        raise MigrationError(f"the database at {describe(dsn)} has no Signoff tables yet: "
                             "run `signoff migrate` first") from None


async def migrate_cmd(args: Any) -> int:
    from taskqueue.store.migrate import migrate

    applied = await migrate(resolve_dsn())
    if args.json:
        out.print_json({"applied": applied})
    else:
        print("applied " + ", ".join(applied) if applied else "up to date")
    return 0


async def enqueue_cmd(args: Any) -> int:
    if args.from_jsonl and args.payload:
        raise BadInput("give --payload or --from-jsonl, not both")
    if args.from_jsonl and args.dedupe_key:
        raise BadInput("--dedupe-key names one task; it cannot apply to a batch")
    if args.max_attempts is not None and args.max_attempts < 1:
        raise BadInput("--max-attempts must be at least 1")
    from taskqueue.cli.enqueue_settings import (
        missing_settings_warning,
        with_configured_attempts,
        write_configured_settings,
    )
    from taskqueue.config.settings import load_config
    from taskqueue.store.work_models import NewTask

    config = load_config(args.config, imports=False)
    requester = resolve_person(config, args.by) if args.by else "cli"
    limits = config.limits
    payloads = (read_jsonl(args.from_jsonl, limits) if args.from_jsonl
                else [parse_json(args.payload, "--payload", limits) or {}])
    items = with_configured_attempts(
        [NewTask(p, args.priority, args.dedupe_key, args.delay, args.max_attempts)
         for p in payloads], config, args.capability)
    async with open_queue(limits=limits) as queue:
        warning = await missing_settings_warning(queue, config, args.capability)
        done = await queue.task_enqueue_many(args.capability, items, actor=requester)
        await write_configured_settings(queue, config, args.capability)
    if warning:
        print(warning, file=sys.stderr)
    if args.json:
        out.print_json([{"id": item.id, "created": item.created} for item in done])
        return 0
    for item in done:
        print(item.id)
    return 0


async def claim_cmd(args: Any) -> int:
    async with open_queue() as queue:
        task = await queue.task_claim(args.capability, args.worker, lease=args.lease)
    if task is None:
        raise NothingToClaim(f"nothing to claim for {args.capability}")
    out.print_json(task.to_json())
    return 0


async def heartbeat_cmd(args: Any) -> int:
    async with open_queue() as queue:
        task = await queue.task_heartbeat(args.id, args.worker, claim=args.claim,
                                          lease=args.lease)
    out.task_line(task, args.json, f"lease extended to {out.when(task.lease_expires_at)}")
    return 0


async def release_cmd(args: Any) -> int:
    limits = cli_limits()
    state = parse_json(args.state, "--state", limits)
    async with open_queue(limits=limits) as queue:
        task = await queue.task_release(args.id, args.worker, claim=args.claim, state=state,
                                        delay=args.delay)
    out.task_line(task, args.json, f"released, claimable from {out.when(task.run_after)}")
    return 0


async def park_cmd(args: Any) -> int:
    limits = cli_limits()
    request = parse_json(args.request, "--request", limits)
    files = read_attachments(args.attach, limits)
    async with open_queue(limits=limits) as queue:
        approval = await queue.task_park(args.id, args.worker, args.question, claim=args.claim,
                                         request=request, attachments=files,
                                         expires_in=args.expires_in)
    if args.json:  # one document, its "id" the approval's
        out.print_json(approval.to_json())
        return 0
    print(f"task {args.id} parked: {out.safe(approval.question)} "
          f"(expires {out.when(approval.expires_at)})")
    print(approval.id)
    return 0


async def complete_cmd(args: Any) -> int:
    limits = cli_limits()
    result = parse_json(args.result, "--result", limits, obj=False)
    async with open_queue(limits=limits) as queue:
        task = await queue.task_complete(args.id, args.worker, claim=args.claim, result=result)
    out.task_line(task, args.json, "result stored")
    return 0


async def fail_cmd(args: Any) -> int:
    async with open_queue() as queue:
        task = await queue.task_fail(args.id, args.worker, args.error, claim=args.claim,
                                     retry=not args.no_retry)
    detail = (f"attempt {task.attempts} of {task.max_attempts} failed; retry at "
              f"{out.when(task.run_after)}" if task.status == "pending"
              else f"failed after {task.attempts} attempt(s): {task.last_error}")
    out.task_line(task, args.json, detail)
    return 0


async def decide_cmd(args: Any) -> int:
    decision = {"approve": "approved", "skip": "skipped", "revise": "revised"}[args.decision]
    config = cli_config(args.config)
    by = resolve_person(config, args.by)
    async with open_part(PeopleQueue, config_limits(config)) as queue:
        approval = await queue.approval_decide_for_task(args.id, decision, by, args.note,
                                                        via=typed_by())
    if args.json:
        out.print_json(approval.to_json())
    elif approval.is_open:  # four-eyes: an approve short of the approvals required
        print(f"task {args.id}: approval {approval.id}: {out.safe(approval.progress() or '')}")
    else:
        print(f"task {args.id}: approval {approval.id} {decision} by "
              f"{out.safe(approval.decided_by)}")
    return 0


async def retry_cmd(args: Any) -> int:
    async with open_queue() as queue:
        task = await queue.task_retry(args.id, actor=args.by or "cli")
    out.task_line(task, args.json, "back to pending, attempts reset")
    return 0


async def cancel_cmd(args: Any) -> int:
    async with open_queue() as queue:
        task = await queue.task_cancel(args.id, actor=args.by or "cli")
    out.task_line(task, args.json, "cancelled")
    return 0


async def reap_cmd(args: Any) -> int:
    from taskqueue.maintenance.reaper import Reaper, ReaperConfig  # `signoff reap` only

    config = ReaperConfig(orphan_after=args.orphan_after) if args.orphan_after else None
    async with open_queue() as queue:
        report = await Reaper(queue, config).run_once()
    if args.json:
        out.print_json(report.to_json())
    else:
        print(f"reaper ran at {out.when(report.at)}: {report.summary()}")
    return 0


async def signals_cmd(args: Any) -> int:
    from taskqueue.maintenance.signals import read_signals

    async with open_queue() as queue:
        signals = await read_signals(queue)
    if args.json:
        out.print_json(signals.to_json())
    else:
        out.print_signals(signals)
    return 0


async def ls_cmd(args: Any) -> int:
    async with open_part(PeopleQueue) as queue:
        tasks = await queue.task_list(status=args.status, capability=args.capability,
                                      limit=args.limit)
    if args.json:
        out.print_json([t.to_json() for t in tasks])
    else:
        out.print_task_table(tasks)
    return 0


async def show_cmd(args: Any) -> int:
    async with open_part(PeopleQueue) as queue:
        detail = await queue.task_detail(args.id)
    if args.json:
        out.print_json(detail.to_json())
    else:
        out.print_detail(detail)
    return 0


async def caps_set_cmd(args: Any) -> int:
    from taskqueue.config.model import CAP_SETTINGS

    changes = {s.column: getattr(args, s.option) for s in CAP_SETTINGS
               if getattr(args, s.option) is not UNSET}
    if not changes:
        raise BadInput("nothing to set: give at least one option, e.g. --max-running 2")
    async with open_queue() as queue:
        cap = await queue.capability_set(args.capability, **changes)
    if args.json:
        out.print_json(cap.to_json())
    else:
        out.print_caps([cap])
    return 0


async def caps_ls_cmd(args: Any) -> int:
    async with open_queue() as queue:
        caps = await queue.capability_list()
    if args.json:
        out.print_json([c.to_json() for c in caps])
    else:
        out.print_caps(caps)
    return 0
