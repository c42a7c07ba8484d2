"""`signoff attachment ls ID` and `signoff attachment get ID NAME [-o FILE|-] [--force]`:
a task's evidence, listed or fetched."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from taskqueue.cli import output as out
from taskqueue.cli.commands import open_queue
from taskqueue.errors import BadInput, NotFound
from taskqueue.store.models import Attachment
from taskqueue.store.rows import check_attachment_name


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("attachment", help="list or fetch a task's attachments")
    a_sub = p.add_subparsers(dest="attachment_command", required=True, metavar="COMMAND")
    q = a_sub.add_parser("ls", help="a task's attachments, newest question first")
    q.add_argument("id", type=int, help="the task's id")
    q.add_argument("--json", action="store_true")
    q.set_defaults(func=ls_cmd)
    q = a_sub.add_parser("get", help="write one attachment to a file (or stdout)",
                         description="Write one attachment's bytes to a file, or to stdout "
                                     "with -o -. It has no --json: what it prints is the "
                                     "file itself.")
    q.add_argument("id", type=int, help="the task's id")
    q.add_argument("name", help="the attachment's file name (as `attachment ls` shows it)")
    q.add_argument("-o", "--output", metavar="FILE",
                   help="where to write it; - for stdout (default: NAME in this folder)")
    q.add_argument("--force", action="store_true", help="overwrite an existing file")
    q.set_defaults(func=get_cmd)


async def _attachments(task_id: int) -> list[Attachment]:
    async with open_queue() as queue:
        detail = await queue.task_detail(task_id)
    return [f for a in reversed(detail.approvals) for f in a.attachments]


async def ls_cmd(args: Any) -> int:
    files = await _attachments(args.id)
    if args.json:
        out.print_json([f.to_json() | {"approval_id": f.approval_id} for f in files])
        return 0
    if not files:
        print(f"task {args.id} has no attachments")
        return 0
    for f in files:
        print(f"{f.id:>6}  approval {f.approval_id:<6} {out.safe(f.filename)}  "
              f"{out.safe(f.content_type)}  {f.size_bytes} bytes  sha256 {f.sha256[:12]}")
    return 0


def _write(path: Path, data: bytes, force: bool) -> None:
    try:
        with path.open("wb" if force else "xb") as f:
            f.write(data)
    except FileExistsError:
        raise BadInput(f"{out.safe(path)} exists; use --force to overwrite it, or -o FILE") \
            from None
    except IsADirectoryError:
        raise BadInput(f"{out.safe(path)} is a folder; give a file name with -o") from None
    except OSError as exc:
        raise BadInput(f"cannot write {out.safe(path)}: {exc.strerror or exc}") from None


async def get_cmd(args: Any) -> int:
    check_attachment_name(args.name)  # no folder part, no .., no control characters
    files = await _attachments(args.id)
    found = next((f for f in files if f.filename == args.name), None)
    if found is None:
        raise NotFound(f"task {args.id} has no attachment named {args.name!r}")
    async with open_queue() as queue:
        data = (await queue.attachment_get(found.id)).data or b""
    if args.output == "-":
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        return 0
    target = Path(args.output) if args.output else Path(os.curdir) / args.name
    _write(target, data, args.force)
    print(f"wrote {out.safe(target)} ({len(data)} bytes)")
    return 0
