"""Park → the card shows in an open web inbox (issue 44: p99 ≤ 150 ms, timed in Chromium,
while the same worker carries ≥ 1,000 other tasks a second), printed as JSON.

Run from the repository root (see bench/README.md):

    .venv/bin/python -m bench.park_web                 # 100 parks
    .venv/bin/python -m bench.park_web --parks 10      # a short run

It drops and recreates its own database (`--database`, default signoff_bench_park_web),
starts one real `signoff worker` (16 slots, handler `bench.park_web:bulk_or_park`) fed with
bulk tasks of `--bulk-ms` each by bench.resume's feeder, and the inbox as `signoff web`, a
process of its own, open in a headless Chromium (Playwright, Debian's /usr/bin/chromium) that
signed in and stays on `/`, updated live by its server-sent events. Then, one park at a time:
enqueue a task ahead of the backlog; the worker's handler parks it; wait until the card shows
in the page; skip it (so the inbox's first page never fills) and wait until the page shows it
decided. A MutationObserver in the page (an init script) records, for each task's card in
`#cards`, `Date.now()` when it first appeared and when the next animation frame began (the
frame that paints it: the goal's end), and the most copies it ever had at once: each park's
card must show exactly once (exit 1 otherwise). The start is the handler's own `time.time()`
just before it returns `Park`, so the figure includes the park's transaction and commit, the
web server's NOTIFY, the event stream, the page's `/inbox.json` and card fetches; Chromium's
`Date.now()` and Python's `time.time()` read the same wall clock of this machine.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import sys
import time
from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any

from bench.database import database_options, run_in_own_database
from bench.handlers import bulk_or_resume
from bench.measure import execute, latency_ms, positive, report
from bench.resume import (
    BACKLOG,
    BULK_MS,
    CAPABILITY,
    LOAD_CONCURRENCY,
    LOAD_GOAL_RATE,
    PARK_PRIORITY,
    POLL_INTERVAL,
    STEP_TIMEOUT,
    bulk_rate,
    feeder_process,
    load_options,
    worker_process,
)
from bench.web_inbox import CHROMIUM, CHROMIUM_ARGS, PASSWORD, free_port, serve, signoff
from taskqueue import Decision, Done, Outcome, Park, Task, TaskContext, TaskQueue

if TYPE_CHECKING:  # the worker imports this module for its handler: no browser there
    from playwright.async_api import Page

log = logging.getLogger("signoff.bench")

DATABASE = "signoff_bench_park_web"
HANDLER = "bench.park_web:bulk_or_park"
PARKS = 100
# Parks before the timed ones, not timed: the server's first card renders, the page's
# first fetches (they are still checked exactly once).
WARMUP = 2
GOAL_P99_MS = 150.0
CLOCK = ("time.time() of this machine in the handler just before it returns Park; "
         "Date.now() in Chromium when the frame that paints the card began (its "
         "requestAnimationFrame callback; park_to_dom: when it entered #cards): the same "
         "wall clock")
# Installed in every document before the page's own script. Counting the cards of each task
# over the whole document on every change, rather than only the added nodes, keeps the record
# right if the page ever re-renders its list (a card replaced is still one card, and its
# first appearance keeps its time). Wrapping EventSource counts the stream's `hello`s: more
# than one means it reconnected, and a park may have waited for the page's 2 s polling.
OBSERVER = r"""(() => {
  const cards = {};
  const record = window.__parkWeb = { cards, streams: 0 };
  const taskOf = (card) => {
    const link = card.querySelector('a[href^="/tasks/"]');
    return link ? link.getAttribute("href").slice("/tasks/".length) : null;
  };
  const look = () => {
    const now = Date.now();
    const count = {};
    for (const card of document.querySelectorAll("#cards article.card")) {
      const id = taskOf(card);
      if (id === null) continue;
      count[id] = (count[id] || 0) + 1;
      let seen = cards[id];
      if (!seen) {
        seen = cards[id] = { at: now, painted: null, most: 0, shown: 0, closed: false };
        requestAnimationFrame(() => { seen.painted = Date.now(); });
      }
      seen.closed = card.classList.contains("closed");
    }
    for (const [id, seen] of Object.entries(cards)) {
      seen.shown = count[id] || 0;
      seen.most = Math.max(seen.most, seen.shown);
    }
  };
  new MutationObserver(look).observe(document, {
    childList: true, subtree: true, attributes: true, attributeFilter: ["class"] });
  const Source = window.EventSource;
  if (Source) {
    window.EventSource = class extends Source {
      constructor(url, options) {
        super(url, options);
        this.addEventListener("hello", () => { record.streams += 1; });
      }
    };
  }
})();"""


async def bulk_or_park(task: Task, ctx: TaskContext) -> Outcome:
    """Bulk work as bench.resume's load; any other task parks with the wall-clock time it
    parked (`parked_at`, `time.time()`) in its request, and finishes if ever approved."""
    if "bulk_ms" in task.payload:
        return await bulk_or_resume(task, ctx)
    if task.decision is not None:
        return Done()
    return Park(f"Show card {task.id}?",
                request={"bench": "park → web card", "parked_at": time.time()})


@contextlib.asynccontextmanager
async def web_server(dsn: str) -> AsyncIterator[int]:
    """`signoff web` (bench.web_inbox's) with one account; its port."""
    port = free_port()
    server = await asyncio.to_thread(serve, dsn, port)  # it migrates the web's own tables
    try:
        await asyncio.to_thread(signoff, dsn, "web", "user", "add", "bench",
                                "--password-stdin", stdin=PASSWORD + "\n")
        yield port
    finally:
        server.terminate()
        await asyncio.to_thread(server.wait, 30)


async def sign_in(page: Page) -> None:
    """bench.web_inbox's sign-in, with Playwright's async API."""
    await page.goto("/login")
    await page.fill("input[name=name]", "bench")
    await page.fill("input[name=password]", PASSWORD)
    await page.click("button[type=submit]")
    await page.wait_for_url(lambda url: "/login" not in url)


@contextlib.asynccontextmanager
async def inbox_page(port: int) -> AsyncIterator[Page]:
    """Chromium signed in, on the inbox, its event stream connected."""
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = await browser.new_page(viewport={"width": 1280, "height": 800},
                                          base_url=f"http://127.0.0.1:{port}")
            page.set_default_timeout(STEP_TIMEOUT * 1000)
            await page.add_init_script(OBSERVER)
            await sign_in(page)
            await page.goto("/")
            await page.wait_for_function("() => window.__parkWeb.streams > 0", polling=50)
            yield page
        finally:
            await browser.close()


async def _shows(page: Page, what: str, task_id: int) -> bool:
    """Whether the page's record of the task's card meets `what` within STEP_TIMEOUT."""
    from playwright.async_api import TimeoutError as PlaywrightTimeout

    try:
        await page.wait_for_function(f"id => window.__parkWeb.cards[id]{what}",
                                     arg=str(task_id), polling=10)
    except PlaywrightTimeout:
        log.error("park → web card: task %d's card%s did not show", task_id, what)
        return False
    return True


async def one_park(q: TaskQueue, page: Page, i: int) -> dict[str, Any]:
    """Park one task through the worker, wait for its card, skip it and wait until the page
    shows it decided; the card's record, with the handler's and the database's start (a
    card that never showed counts as missing, so the run ends with exit 1)."""
    enq = await q.task_enqueue(CAPABILITY, {"park": i}, priority=PARK_PRIORITY)
    shown = await _shows(page, "", enq.id)
    approval = (await q.task_detail(enq.id)).approvals[-1]
    await q.approval_decide(approval.id, Decision.SKIPPED, "bench")
    card = {"at": None, "painted": None}
    if shown:
        await _shows(page, ".closed", enq.id)  # the page is done with it: the next one's own
        # Read only now: the frame's time is set by then.
        card = await page.evaluate("id => window.__parkWeb.cards[id]", str(enq.id))
    assert isinstance(approval.request, dict)
    return {"task": enq.id, "parked_at": float(approval.request["parked_at"]) * 1000,
            "created_at": approval.created_at.timestamp() * 1000, **card}


async def cards_once(page: Page, tasks: list[int]) -> dict[str, Any]:
    """Each task's card appeared, never twice at once, and is on the page once now."""
    cards = await page.evaluate("() => window.__parkWeb.cards")
    missing = [t for t in tasks if str(t) not in cards]
    twice = [t for t in tasks if str(t) in cards and
             (cards[str(t)]["most"] != 1 or cards[str(t)]["shown"] != 1)]
    return {"parks": len(tasks), "cards_seen": len(cards), "missing": missing,
            "not_once": twice, "exactly_once": not missing and not twice}


def _figures(samples: list[dict[str, Any]]) -> dict[str, Any]:
    def gap(end: str, start: str) -> list[float]:
        return [(s[end] - s[start]) / 1000 for s in samples if s[end] is not None]

    # The goal's figure ends when the frame that paints the card begins (its animation frame
    # callback), a millisecond or so after the card entered the DOM in a headless page.
    figure = latency_ms(gap("painted", "parked_at"))
    return {"park_to_card": figure,
            "park_to_dom": latency_ms(gap("at", "parked_at")),
            # From the park transaction's start (the approval's created_at, the database's
            # now()): without the handler's return and the worker's bookkeeping before it.
            "transaction_to_card": latency_ms(gap("painted", "created_at")),
            "met_latency": figure["n"] == len(samples) and figure["p99_ms"] is not None
            and figure["p99_ms"] <= GOAL_P99_MS}


async def park_to_card(dsn: str, parks: int = PARKS, *, bulk_ms: float = BULK_MS,
                       concurrency: int = LOAD_CONCURRENCY) -> dict[str, Any]:
    """The figure, on the migrated database at `dsn`: park → card, p50/p95/p99/max in ms,
    the bulk rate carried meanwhile (the database's clock), the exactly-once check."""
    async with worker_process(dsn, POLL_INTERVAL, handler=HANDLER, concurrency=concurrency), \
            TaskQueue.connect(dsn, min_size=1, max_size=4) as q, \
            web_server(dsn) as port, inbox_page(port) as page:
        async with feeder_process(dsn, bulk_ms, BACKLOG):
            await asyncio.sleep(2)  # the worker reaches its steady rate
            warm = [await one_park(q, page, -n) for n in range(1, WARMUP + 1)]
            log.info("park → web card: %d parks", parks)
            since = (await execute(dsn, "SELECT clock_timestamp() AS t"))["t"]
            samples = [await one_park(q, page, i) for i in range(parks)]
            until_ = (await execute(dsn, "SELECT clock_timestamp() AS t"))["t"]
        bulk = await bulk_rate(dsn, since, until_)
        once = await cards_once(page, [s["task"] for s in warm + samples])
        streams = await page.evaluate("() => window.__parkWeb.streams")
    figures = _figures(samples)
    met = figures.pop("met_latency") and bulk["tasks_per_s"] >= LOAD_GOAL_RATE
    return {"parks": parks, "warmup": WARMUP, "clock": CLOCK,
            "worker": {"concurrency": concurrency, "poll_interval": POLL_INTERVAL,
                       "bulk_ms": bulk_ms, "backlog": BACKLOG},
            "bulk": bulk, **figures, "cards": once, "exactly_once": once["exactly_once"],
            "event_stream_connections": streams,
            "goal": f"p99 ≤ {GOAL_P99_MS:g} ms while ≥ {LOAD_GOAL_RATE:g} bulk tasks/s",
            "met": met}


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench.park_web",
                                description=__doc__.splitlines()[0] if __doc__ else None)
    database_options(p, DATABASE)
    p.add_argument("--parks", type=positive, default=PARKS, help=f"parks timed ({PARKS})")
    load_options(p)
    return p.parse_args(argv)


async def benchmark(argv: Sequence[str]) -> dict[str, Any]:
    """Create the database, measure, drop it (unless --keep); the JSON document."""
    args = parse_args(argv)
    return await run_in_own_database(
        "signoff park → web card", "bench.park_web", argv, args,
        lambda dsn: park_to_card(dsn, args.parks, bulk_ms=args.bulk_ms,
                                 concurrency=args.concurrency))


def main(argv: Sequence[str] | None = None) -> int:
    """Run it and print its JSON; 1 when a park's card did not show exactly once (0 when
    only the goal was not met: see `met`)."""
    doc = report(benchmark, argv)
    return 0 if doc["exactly_once"] else 1


if __name__ == "__main__":
    sys.exit(main())
