"""`signoff web` (serve the inbox on its own) and `signoff web user add|remove|list`,
registered through the `signoff.commands` entry point group. Every `signoff` command loads
this module to build its parser, so the web's own modules are imported only when used."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import getpass
import json
import sys
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from bot.cli_tables import opened
from taskqueue import (
    LOG_FORMATS,
    LOG_LEVELS,
    BadInput,
    Conflict,
    NotFound,
    info_unless_chosen,
    load_config,
)

if TYPE_CHECKING:
    from bot.web.store import AccountStore

DEFAULT_LISTEN = "127.0.0.1:8080"


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("web", help="serve the web inbox, or manage its accounts",
                       epilog="example: signoff web --config signoff.toml --listen "
                              "127.0.0.1:8080")
    p.add_argument("--listen", default=DEFAULT_LISTEN, metavar="HOST:PORT",
                   help=f"where to serve (default {DEFAULT_LISTEN})")
    p.add_argument("--config", metavar="FILE", help="the config file ([web], [signals])")
    p.add_argument("--certfile", metavar="FILE", help="serve HTTPS with this certificate")
    p.add_argument("--keyfile", metavar="FILE", help="the certificate's private key")
    p.add_argument("--log-format", choices=LOG_FORMATS,
                   help="text (default) or json (default $SIGNOFF_LOG_FORMAT)")
    p.add_argument("--log-level", choices=LOG_LEVELS,
                   help="info by default, as the service's (default $SIGNOFF_LOG_LEVEL)")
    p.set_defaults(func=serve_cmd)
    web_sub = p.add_subparsers(dest="web_command", metavar="user")
    user = web_sub.add_parser("user", help="add, remove or list the people who may sign in",
                              epilog="example: signoff web user list --json")
    user_sub = user.add_subparsers(dest="user_command", required=True, metavar="COMMAND")
    q = user_sub.add_parser("add", help="add an account (the password from a prompt or stdin)",
                            epilog="example: signoff web user add ada")
    q.add_argument("name", help="the account's name (what the person signs in with)")
    q.add_argument("--password-stdin", action="store_true",
                   help="read the password from the first line of stdin")
    q.add_argument("--update", action="store_true",
                   help="change the password of an existing account (ends its sessions)")
    q.set_defaults(func=user_add_cmd)
    q.add_argument("--json", action="store_true", help='print {"name", "added"|"changed"}')
    q = user_sub.add_parser("remove", help="remove an account (ends its sessions)",
                            epilog="example: signoff web user remove ada")
    q.add_argument("name", help="the account's name")
    q.add_argument("--json", action="store_true", help='print {"name", "removed"}')
    q.set_defaults(func=user_remove_cmd)
    q = user_sub.add_parser("list", help="list the accounts",
                            epilog="example: signoff web user list")
    q.add_argument("--json", action="store_true")
    q.set_defaults(func=user_list_cmd)


async def serve_cmd(args: Any) -> int:
    from bot.extras import require_web

    require_web()
    from bot.web.serve import serve

    return await serve(load_config(args.config), args.listen, certfile=args.certfile,
                       keyfile=args.keyfile,
                       # From the moment it listens it says what it does at INFO, as the
                       # service and `signoff worker` do: where it serves and, with no
                       # account yet, the first account's link. Until then warnings only,
                       # as other commands (a refused start stays one line).
                       listening=lambda: info_unless_chosen(args.log_level))


def read_password(from_stdin: bool) -> str:
    """The new password: stdin's first line, or asked twice at the terminal (its length
    checked before the second time)."""
    from bot.web.passwords import check_password

    if from_stdin:
        return check_password(sys.stdin.readline().rstrip("\r\n"))
    if not sys.stdin.isatty():
        raise BadInput("no terminal to ask for the password; pipe it with --password-stdin")
    first = check_password(getpass.getpass("Password: "))  # a short one is said at once
    if getpass.getpass("Again: ") != first:
        raise BadInput("the two passwords differ; nothing was changed")
    return first


@contextlib.asynccontextmanager
async def account_store() -> AsyncIterator[AccountStore]:
    """The accounts of the CLI's database (its web tables made when missing)."""
    from bot.web.store import AccountStore, migrate_accounts

    async with opened(migrate_accounts, AccountStore) as store:
        yield store


async def user_add_cmd(args: Any) -> int:
    from bot.web.passwords import hash_password
    from bot.web.store import check_account_name

    name = check_account_name(args.name)
    password = read_password(args.password_stdin)
    hashed = await asyncio.to_thread(hash_password, password)
    async with account_store() as store:
        if args.update:
            if not await store.account_password_set(name, hashed):
                raise NotFound(f"no such account: {name}")
            _said(args, {"name": name, "changed": True},
                  f"password of {name} changed; its sessions have ended")
            return 0
        if not await store.account_add(name, hashed):
            raise Conflict(f"the account {name} exists; use --update to change its password")
    _said(args, {"name": name, "added": True}, f"account {name} added")
    return 0


async def user_remove_cmd(args: Any) -> int:
    async with account_store() as store:
        if not await store.account_remove(args.name):
            raise NotFound(f"no such account: {args.name}")
    _said(args, {"name": args.name, "removed": True}, f"account {args.name} removed")
    return 0


def _said(args: Any, document: dict[str, Any], line: str) -> None:
    print(json.dumps(document) if args.json else line)


async def user_list_cmd(args: Any) -> int:
    async with account_store() as store:
        accounts = await store.account_list()
    if args.json:
        print(json.dumps([a.to_json() for a in accounts], indent=2))
    elif not accounts:
        print("no accounts: add one with `signoff web user add NAME`")
    else:
        for a in accounts:
            last = a.last_login_at.strftime("%Y-%m-%d %H:%M UTC") if a.last_login_at else "never"
            print(f"{a.name}  added {a.created_at:%Y-%m-%d}  last sign-in {last}")
    return 0
