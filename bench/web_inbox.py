"""The web inbox with 1,000 open approvals (issue 41): the server's time to first byte for
the inbox's first page (25 cards) and its JSON, and the page's load in Chromium (Navigation
Timing), each the median of repeated loads. The inbox runs as `signoff web`, a process of
its own, as a person would run it. `python -m bench.web_inbox [--approvals N] [--runs R]`."""

from __future__ import annotations

import argparse
import asyncio
import http.client
import os
import socket
import statistics
import subprocess
import sys
import time
from typing import Any

from bench.database import database_options, run_in_own_database
from bench.measure import positive, report
from taskqueue import NewAttachment, TaskQueue

DATABASE = "signoff_bench_web_inbox"
PASSWORD = "bench password 41"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--headless", "--disable-gpu",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--disable-quic"]
# A 1x1 PNG: every fifth question carries one, as a screenshot would be.
PNG = bytes.fromhex("89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489"
                    "0000000d49444154789c6360f8cf00000301010018dd8db00000000049454e44ae426082")


def request(n: int) -> dict[str, Any]:
    return {"kind": "job_application", "role": f"Engineer {n}", "company": "Acme",
            "url": f"https://jobs.example/{n}", "score": n % 100, "score_max": 100,
            "fields": [{"field": f"Question {k}", "value": f"Answer {k} to posting {n}"}
                       for k in range(8)]}


async def park_many(dsn: str, count: int) -> None:
    async with TaskQueue.connect(dsn, max_size=2) as queue:
        for n in range(count):
            await queue.task_enqueue("jobs", {"n": n})
            task = await queue.task_claim("jobs", "bench")
            assert task is not None
            files = (NewAttachment(f"form-{n}.png", PNG, "image/png"),) if n % 5 == 0 else ()
            await queue.task_park(task.id, "bench", f"Send the application {n}?",
                                  claim=task.claim, request=request(n), attachments=files)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def signoff(dsn: str, *argv: str, stdin: str | None = None) -> None:
    subprocess.run([sys.executable, "-m", "taskqueue", *argv], input=stdin, text=True,
                   env=os.environ | {"DATABASE_URL": dsn}, check=True, capture_output=True,
                   timeout=120)


def serve(dsn: str, port: int) -> subprocess.Popen[bytes]:
    server = subprocess.Popen([sys.executable, "-m", "taskqueue", "web", "--listen",
                               f"127.0.0.1:{port}"], env=os.environ | {"DATABASE_URL": dsn},
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return server
        except OSError:
            time.sleep(0.1)
    server.kill()
    raise SystemExit("signoff web did not start listening")


def ttfb_ms(port: int, path: str, cookie: str) -> tuple[float, int]:
    """Time to the answer's first byte (its status line and headers), and its size."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    started = time.perf_counter()
    conn.request("GET", path, headers={"Cookie": cookie, "Accept": "text/html"})
    answer = conn.getresponse()
    first = (time.perf_counter() - started) * 1000
    body = answer.read()
    conn.close()
    if answer.status != 200:
        raise SystemExit(f"{path} answered {answer.status}")
    return first, len(body)


def browse(port: int, runs: int) -> dict[str, Any]:
    """Sign in with Chromium, then load the inbox `runs` times: Navigation Timing's
    time to first byte and load, and the server's time to first byte without a browser."""
    from playwright.sync_api import sync_playwright

    base = f"http://127.0.0.1:{port}"
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 800}, base_url=base)
        page.goto("/login")
        page.fill("input[name=name]", "bench")
        page.fill("input[name=password]", PASSWORD)
        page.click("button[type=submit]")
        page.wait_for_url(lambda url: "/login" not in url)
        cookie = "; ".join(f"{c['name']}={c['value']}" for c in page.context.cookies())
        loads = []
        for _ in range(runs):
            page.goto("/", wait_until="load")
            loads.append(page.evaluate("""() => {
              const n = performance.getEntriesByType("navigation")[0];
              return {ttfb: n.responseStart - n.requestStart, load: n.loadEventEnd - n.startTime,
                      cards: document.querySelectorAll("article.card").length,
                      open: document.getElementById("open-count").textContent};
            }"""))
        browser.close()
    server = {path: [ttfb_ms(port, path, cookie) for _ in range(runs)]
              for path in ("/", "/inbox.json", "/?after=500")}
    return {
        "chromium_ttfb_ms": round(statistics.median(x["ttfb"] for x in loads), 1),
        "chromium_load_ms": round(statistics.median(x["load"] for x in loads), 1),
        "cards_on_the_page": loads[0]["cards"], "open_count_shown": loads[0]["open"],
        "server_ttfb_ms": {path: round(statistics.median(t for t, _ in got), 1)
                           for path, got in server.items()},
        "bytes": {path: got[0][1] for path, got in server.items()},
    }


async def measure(dsn: str, args: argparse.Namespace) -> dict[str, Any]:
    started = time.perf_counter()
    await park_many(dsn, args.approvals)
    parked_s = time.perf_counter() - started
    port = free_port()
    server = await asyncio.to_thread(serve, dsn, port)  # it migrates the web's own tables
    try:
        await asyncio.to_thread(signoff, dsn, "web", "user", "add", "bench", "--password-stdin",
                                stdin=PASSWORD + "\n")
        figures = await asyncio.to_thread(browse, port, args.runs)
    finally:
        server.terminate()
        await asyncio.to_thread(server.wait, 30)
    return {"open_approvals": args.approvals, "park_seconds": round(parked_s, 1),
            "runs": args.runs, **figures}


async def main(argv: list[str]) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m bench.web_inbox", description=__doc__)
    parser.add_argument("--approvals", type=positive, default=1000,
                        help="open approvals parked first (default 1000)")
    parser.add_argument("--runs", type=positive, default=9, help="loads of each page")
    database_options(parser, DATABASE)
    args = parser.parse_args(argv)
    return await run_in_own_database("web_inbox", "bench.web_inbox", argv, args,
                                     lambda dsn: measure(dsn, args))


if __name__ == "__main__":
    report(main, None)
