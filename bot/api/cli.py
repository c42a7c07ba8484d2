"""`signoff token add|list|revoke`: the HTTP API's bearer tokens, registered through the
`signoff.commands` entry point group (every `signoff` command loads this module to build
its parser, so the API's own modules are imported only when used)."""

from __future__ import annotations

import argparse
import contextlib
import json
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from bot.cli_tables import opened
from taskqueue import BadInput, Conflict, NotFound

if TYPE_CHECKING:
    from bot.api.store import TokenStore

MAX_PERSON_CHARS = 64


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("token", help="make, list or revoke the HTTP API's tokens",
                       epilog="example: signoff token add ci --scopes ask,read")
    token_sub = p.add_subparsers(dest="token_command", required=True, metavar="COMMAND")
    q = token_sub.add_parser(
        "add", help="make a token (printed once, alone on the last line)",
        description="Make a token. It has no --json: the token is printed once, alone on "
                    "the last line, so `tail -1` takes it; `signoff token list --json` "
                    "shows its record.",
        epilog="example: signoff token add laptop --person ada --scopes ask,decide,read")
    q.add_argument("name", help="the token's name (1-64 letters, digits, _ . @ -)")
    q.add_argument("--person", help="who the token acts as (without one it acts as "
                                    "agent:NAME, which may ask but never decide)")
    q.add_argument("--scopes", required=True, metavar="SCOPES",
                   help="comma-separated: ask, decide, read, work")
    q.set_defaults(func=token_add_cmd)
    q = token_sub.add_parser("list", help="list the tokens (never the tokens themselves)",
                             epilog="example: signoff token list --json")
    q.add_argument("--json", action="store_true", help="print the tokens' records as JSON")
    q.set_defaults(func=token_list_cmd)
    q = token_sub.add_parser("revoke", help="revoke a token: refused from its next request",
                             epilog="example: signoff token revoke ci")
    q.add_argument("name", help="the token's name")
    q.add_argument("--json", action="store_true", help='print {"name", "revoked"}')
    q.set_defaults(func=token_revoke_cmd)


def check_person(person: str | None) -> str | None:
    if person is None:
        return None
    person = person.strip()
    if not person or len(person) > MAX_PERSON_CHARS or not person.isprintable() \
            or person.startswith("agent:"):
        raise BadInput(f"--person is a person's name: 1-{MAX_PERSON_CHARS} printable "
                       "characters, not starting with agent:")
    return person


@contextlib.asynccontextmanager
async def token_store() -> AsyncIterator[TokenStore]:
    """The tokens of the CLI's database (the API's table made when missing)."""
    from bot.api.store import TokenStore, migrate_tokens

    async with opened(migrate_tokens, TokenStore) as store:
        yield store


async def token_add_cmd(args: Any) -> int:
    from bot.api.store import check_scopes, check_token_name

    name = check_token_name(args.name)
    person = check_person(args.person)
    scopes = check_scopes(args.scopes)
    if "decide" in scopes and person is None:
        raise BadInput("a token with the decide scope needs --person: an agent may ask, "
                       "never decide")
    async with token_store() as store:
        token = await store.token_add(name, person, scopes)
    if token is None:
        raise Conflict(f"a token named {name} exists; revoke it or choose another name")
    print(f"token {name} made for {person or 'agent:' + name} with scopes "
          f"{','.join(scopes)}; it is shown once, here:")
    print(token)
    return 0


async def token_list_cmd(args: Any) -> int:
    async with token_store() as store:
        tokens = await store.token_list()
    if args.json:
        print(json.dumps([t.to_json() for t in tokens], indent=2))
    elif not tokens:
        print("no tokens: make one with `signoff token add NAME --scopes ask`")
    for t in [] if args.json else tokens:
        used = t.last_used_at.strftime("%Y-%m-%d %H:%M UTC") if t.last_used_at else "never"
        state = "revoked" if t.revoked_at else "live"
        print(f"{t.name}  {t.person or 'agent:' + t.name}  {','.join(t.scopes)}  {state}  "
              f"last used {used}")
    return 0


async def token_revoke_cmd(args: Any) -> int:
    async with token_store() as store:
        if not await store.token_revoke(args.name):
            raise NotFound(f"no live token named {args.name}")
    print(json.dumps({"name": args.name, "revoked": True}) if args.json
          else f"token {args.name} revoked")
    return 0
