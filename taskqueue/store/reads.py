"""The reads behind what people look at: a task's card and detail, the inbox's approvals,
the task list and its search, the queue's summary and the capabilities' settings; each
method is named like its query."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from taskqueue.errors import ApprovalNotFound, BadInput, TaskNotFound
from taskqueue.store import rows
from taskqueue.store.base import Conn, QueueBase
from taskqueue.store.checks import check_status
from taskqueue.store.models import Approval, Capability, Task, TaskDetail
from taskqueue.store.queries import query
from taskqueue.store.states import FINISHED, Status

# The task list's orders: (ORDER BY, the keyset condition: after the cursor's row).
_SEARCH_ORDERS = {
    "newest": ("created_at DESC, id DESC",
               "(%(after_id)s::bigint IS NULL OR (t.created_at, t.id) < "
               "(%(after_at)s::timestamptz, %(after_id)s))"),
    "oldest": ("created_at, id",
               "(%(after_id)s::bigint IS NULL OR (t.created_at, t.id) > "
               "(%(after_at)s::timestamptz, %(after_id)s))"),
    "updated": ("updated_at DESC, id DESC",
                "(%(after_id)s::bigint IS NULL OR (t.updated_at, t.id) < "
                "(%(after_at)s::timestamptz, %(after_id)s))"),
}
SEARCH_SORTS = tuple(_SEARCH_ORDERS)
# task_search's two halves (its SQL names the same statuses): the tasks at rest, finished
# or waiting for a person, read through indexes in the page's orders (migration 0030); the
# moving ones, a queue's depth, through the claim's.
AT_REST = FINISHED | {Status.NEEDS_APPROVAL}
MOVING = frozenset(Status) - AT_REST
# From this many matches on, who decided and the text walk the page's order (see
# ReadsMixin._search_block).
SEARCH_MANY = 2000
# The filters' blocks (task_search_by_*), each added only when its filter is given, and
# the parameter that gives it.
_SEARCH_PARAM = {"text": "words"}
_SEARCH_FILTERS = ("capability", "status", "created_after", "created_before", "decided_by",
                   "text")
MAX_SEARCH_TEXT = 200


class ReadsMixin(QueueBase):
    """Tasks, approvals and capability settings as rows, each read in one transaction."""

    # -- reading -------------------------------------------------------------------

    async def task_detail(self, task_id: int) -> TaskDetail:
        """A task, all its approvals (oldest first) and its events."""
        async with self._tx() as conn:
            row = await self._one(conn, "task_get", {"id": task_id})
            if row is None:
                raise TaskNotFound(f"no such task: {task_id}")
            found = await self._all(conn, "approval_list_for_task", {"task_id": task_id})
            approvals = tuple(await self._approvals(conn, found))
            events = await self._all(conn, "event_list_for_task", {"task_id": task_id})
        task = rows.task_from_row(row, approvals[-1] if approvals else None)
        return TaskDetail(task, approvals, tuple(rows.event_from_row(e) for e in events))

    async def task_list(self, *, status: Status | str | None = None,
                        capability: str | None = None, limit: int = 1000) -> list[Task]:
        """Tasks, oldest first, optionally of one status and capability."""
        if status is not None:
            status = check_status(status)
        async with self._tx() as conn:
            found = await self._all(conn, "task_list", {
                "status": status, "capability": capability, "limit": limit})
            approvals = await self._latest_approvals(conn, [r["id"] for r in found])
        return [rows.task_from_row(r, approvals.get(r["id"])) for r in found]

    async def task_search(self, *, capability: str | None = None,
                          status: Status | str | None = None,
                          decided_by: Sequence[str] = (),
                          created_after: datetime | None = None,
                          created_before: datetime | None = None, text: str | None = None,
                          sort: str = "newest", after: tuple[int, datetime] | None = None,
                          limit: int = 50) -> list[Task]:
        """One page of tasks matching every filter given, in `sort` order ("newest",
        "oldest": by creation; "updated": latest change first), after the cursor `after`
        (the last row's id and its created_at, or updated_at for "updated").
        `decided_by`: actor names, compared case-folded, of a decision or an approve;
        `text`: words of the payload's strings or of a question, any case (ending in `*`:
        a word's beginning)."""
        if sort not in _SEARCH_ORDERS:
            raise BadInput(f"sort is one of {', '.join(SEARCH_SORTS)}, not {sort!r}")
        if not 1 <= limit <= 100_000:
            raise BadInput(f"limit must be 1 to 100000, not {limit}")
        if text is not None and not 0 < len(text) <= MAX_SEARCH_TEXT:
            raise BadInput(f"a search text is 1 to {MAX_SEARCH_TEXT} characters")
        order, keyset = _SEARCH_ORDERS[sort]
        params: dict[str, Any] = {
            "capability": capability, "status": check_status(status) if status else None,
            "created_after": created_after, "created_before": created_before,
            "decided_by": [d.casefold() for d in decided_by] or None,
            "words": None, "lexemes": None,
            "after_id": after[0] if after else None, "after_at": after[1] if after else None,
            "limit": limit}
        if text is not None:
            params |= await self._search_words(text)
        async with self._tx() as conn:
            # Neither JIT nor parallel workers (issue 44): at a million tasks the page's plan
            # costs past jit_above_cost, and compiling took 100 to 120 ms of a page that reads
            # 51 rows; at 10M starting two workers took 7 ms of a 10 ms read of 200 matches.
            await self._plan_settings(conn, parallel=False)
            filters = " AND ".join([
                query(await self._search_block(conn, key, params))
                for key in _SEARCH_FILTERS if params[_SEARCH_PARAM.get(key, key)] is not None
            ]) or "true"
            # A status filter leaves one half empty, and the planner cannot tell: the
            # other half walked all 700,000 failed tasks of a 10M history (issue 44).
            status = params["status"]
            sql = (query("task_search")
                   .replace("{at_rest_filters}", "false" if status in MOVING else filters)
                   .replace("{moving_filters}", "false" if status in AT_REST else filters)
                   .replace("{keyset}", keyset).replace("{order}", order))
            found = await self._all_unprepared(conn, sql, params)
            approvals = await self._latest_approvals(conn, [r["id"] for r in found])
        return [rows.task_from_row(r, approvals.get(r["id"])) for r in found]

    async def _search_block(self, conn: Any, key: str, params: dict[str, Any]) -> str:
        """The block of one filter. Who decided and the text have two: for a rare value the
        matches are read first; for a common one (SEARCH_MANY or more) the page's order is
        walked and each task checked, which stops at the page's end (each is the slow one
        for the other case, by 100 times at a million tasks). A value that the statistics
        know as common is walked without counting its matches, which cost more than the
        page: a word in every question is a GIN bitmap of a million rows to count (67 ms at
        10M tasks), a name with 45,000 decisions 9 ms (issue 44)."""
        if key not in ("decided_by", "text"):
            return f"task_search_by_{key}"
        if key == "decided_by" or params["lexemes"]:
            common = await self._one(conn, f"task_search_{key}_common", params)
            if common is not None and (common["n"] or 0) >= SEARCH_MANY:
                return f"task_search_by_{key}_many"
        counted = await self._one(conn, f"task_search_{key}_count",
                                  params | {"cap": SEARCH_MANY})
        many = counted is not None and counted["n"] >= SEARCH_MANY
        return f"task_search_by_{key}" + ("_many" if many else "")

    async def _search_words(self, text: str) -> dict[str, Any]:
        """The tsquery of a search text ("words"): its words (the documents' parser's), all
        of them; a trailing `*` makes each a word's beginning. And those words ("lexemes"),
        but for a beginning (None)."""
        words = text.rstrip("*").strip()
        if not words:
            raise BadInput("a search text needs a word (a trailing * finds a beginning)")
        async with self.pool.connection() as conn:
            row = await self._one(conn, "task_search_words", {
                "text": words, "prefix": text.endswith("*")})
        if row is None:
            return {"words": "", "lexemes": None}
        return {"words": str(row["words"]), "lexemes": row["lexemes"]}

    async def task_list_finished(self, since: datetime, until: datetime, *,
                                 per_group: int = 10) -> list[tuple[Task, int]]:
        """Tasks that finished in [since, until), read in one snapshot with their latest
        approvals: per (capability, status) the latest `per_group`, each paired with its
        group's total, ordered by capability, status, then latest first."""
        if per_group < 0:
            raise BadInput(f"per_group must be at least 0, not {per_group}")
        async with self._snapshot() as conn:
            found = await self._all(conn, "task_list_finished", {
                "since": since, "until": until, "per_group": per_group})
            approvals = await self._latest_approvals(conn, [r["id"] for r in found])
        return [(rows.task_from_row(r, approvals.get(r["id"])), r["group_total"])
                for r in found]

    async def approval_get(self, approval_id: int) -> Approval:
        """One approval with its attachments' metadata."""
        async with self.pool.connection() as conn:
            row = await self._one(conn, "approval_get", {"id": approval_id})
            if row is None:
                raise ApprovalNotFound(f"no such approval: {approval_id}")
            return (await self._approvals(conn, [row]))[0]

    async def approval_list_open_ids(self) -> list[int]:
        """The ids of approval_list_open's approvals, oldest first (all of them; a page of
        them: approval_list_open_page)."""
        async with self.pool.connection() as conn:
            return [r["id"] for r in await self._all(conn, "approval_list_open_ids", {})]

    async def approval_list_open_page(self, after: int | None = None,
                                      limit: int = 25) -> tuple[list[int], int]:
        """One page of approval_list_open_ids, read in one snapshot: the `limit` ids after
        approval `after` (None: from the first; once `after` was decided, from the first
        with a greater id), and how many open approvals come before the page."""
        if not 1 <= limit <= 1000:
            raise BadInput(f"limit must be 1 to 1000, not {limit}")
        async with self._snapshot() as conn:
            # The planner costs each statement as a walk of the whole index (it cannot tell
            # how soon the probes fill a page): JIT compiled them for 10 to 140 ms, where the
            # walk takes under one.
            await self._plan_settings(conn)
            start = await self._open_page_start(conn, after)
            page = await self._all(conn, "approval_list_open_page", start | {"limit": limit})
            before = 0 if after is None else await self._open_before(conn, start)
        return [r["id"] for r in page], before

    async def _open_page_start(self, conn: Conn, after: int | None) -> dict[str, Any]:
        """The key a page after `after` starts at (approval_list_open_start's); past the
        last open approval when none comes after it."""
        if after is None:
            return {"start_at": "-infinity", "start_id": 0}
        found = await self._one(conn, "approval_list_open_start", {"after": after})
        if found is None:
            return {"start_at": "infinity", "start_id": 0}
        return {"start_at": found["created_at"], "start_id": found["id"]}

    async def _open_before(self, conn: Conn, start: dict[str, Any]) -> int:
        """How many open approvals come before the key `start`, counted from the nearer
        end: those before it, or all of them less those from it on. Each approval counted
        costs two probes (about 3 µs), so a page in the middle of the inbox costs most
        (about 170 ms at 100,000 open on a busy 2-core machine), the first and last least."""
        sides = await self._one(conn, "approval_count_undecided_before", start)
        if sides is None or 2 * sides["before"] <= sides["total"]:
            return await self._count(conn, "approval_count_open_before", start)
        return (await self._count(conn, "approval_count_open", {})
                - await self._count(conn, "approval_count_open_from", start))

    async def approval_count_open(self) -> int:
        """How many approvals approval_list_open_ids lists (without reading them)."""
        async with self.pool.connection() as conn:
            return await self._count(conn, "approval_count_open", {})

    async def _count(self, conn: Conn, name: str, params: dict[str, Any]) -> int:
        row = await self._one(conn, name, params)
        return int(row["n"]) if row else 0

    async def approval_get_many(self, approval_ids: Sequence[int]) -> list[Approval]:
        """Approvals with their attachments' metadata, in the order of `approval_ids`
        (one missing is left out)."""
        async with self._tx() as conn:
            found = await self._all(conn, "approval_get_many", {"ids": list(approval_ids)})
            by_id = {a.id: a for a in await self._approvals(conn, found)}
        return [by_id[i] for i in approval_ids if i in by_id]

    async def task_get_many(self, task_ids: Sequence[int]) -> list[Task]:
        """Tasks with their latest approvals, in the order of `task_ids` (one missing is
        left out)."""
        async with self._tx() as conn:
            found = await self._all(conn, "task_get_many", {"ids": list(task_ids)})
            approvals = await self._latest_approvals(conn, [r["id"] for r in found])
        by_id = {r["id"]: rows.task_from_row(r, approvals.get(r["id"])) for r in found}
        return [by_id[i] for i in task_ids if i in by_id]

    async def approval_list_open(self) -> list[Approval]:
        """Unanswered approvals of parked tasks, oldest first."""
        async with self._tx() as conn:
            found = await self._all(conn, "approval_list_open", {})
            return await self._approvals(conn, found)

    async def queue_summary(self) -> list[dict[str, Any]]:
        """Per capability and status: count and the oldest claimable task's time."""
        async with self.pool.connection() as conn:
            return await self._all(conn, "queue_summary", {})

    # -- capabilities -----------------------------------------------------------------

    async def capability_get(self, capability: str) -> Capability:
        """A capability's settings (the defaults when it has no row)."""
        async with self.pool.connection() as conn:
            row = await self._one(conn, "capability_get", {"capability": capability})
        return rows.capability_from_row(row) if row else Capability(capability)

    async def capability_list(self) -> list[Capability]:
        """Every capability that has settings."""
        async with self.pool.connection() as conn:
            return [rows.capability_from_row(r)
                    for r in await self._all(conn, "capability_list", {})]

    # -- stats --------------------------------------------------------------------------
