"""One identity per person across channels: the config's `[people.NAME]` tables.

Each person names their Telegram user id and web account; a decision made in any channel is
recorded under the person's NAME, so four-eyes counts a person once whichever channel they
use (docs/semantics.md, "Four-eyes approvals")."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from taskqueue import Approval, Config, ConfigChecker

_KEYS = {"telegram_user_id", "web_account"}
# A person's name is recorded as `decided_by` and shown in every channel: a plain label.
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
MAX_PEOPLE = 1000


@dataclass(frozen=True)
class Person:
    name: str
    telegram_user_id: int | None = None
    web_account: str | None = None


@dataclass(frozen=True)
class People:
    """The people of the config, looked up by a channel's own identity."""

    by_name: Mapping[str, Person] = field(default_factory=dict)

    def telegram(self, user_id: int) -> str | None:
        """The person whose Telegram user id this is (None: nobody named it)."""
        return next((p.name for p in self.by_name.values() if p.telegram_user_id == user_id),
                    None)

    def web(self, account: str) -> str | None:
        """The person whose web account this is (None: nobody named it)."""
        return next((p.name for p in self.by_name.values() if p.web_account == account), None)

    @property
    def telegram_ids(self) -> frozenset[int]:
        return frozenset(p.telegram_user_id for p in self.by_name.values()
                         if p.telegram_user_id is not None)


def people_from_config(config: Config) -> People:
    """The `[people.NAME]` tables, checked key by key (errors name the key and its line)."""
    return parse_people(config.sections.get("people", {}), config.checker())


def parse_people(raw: Any, c: ConfigChecker | None = None) -> People:
    c = c or ConfigChecker("", None)
    if not isinstance(raw, Mapping):
        raise c.error(("people",), "must be a table of [people.NAME] tables")
    if len(raw) > MAX_PEOPLE:
        raise c.error(("people",), f"at most {MAX_PEOPLE} people")
    found: dict[str, Person] = {}
    for name, table in raw.items():
        key = ("people", name)
        if not NAME_RE.match(name):
            raise c.error(key, "a person's name is 1-64 letters, digits, '_', '.' or '-'")
        t = c.keys(table, key, _KEYS)
        user_id = c.get(t, (*key, "telegram_user_id"), "int", None, 1)
        account = c.get(t, (*key, "web_account"), "str", None)
        found[name] = Person(name, user_id, account)
    _unique(c, found)
    return People(found)


def _unique(c: ConfigChecker, found: Mapping[str, Person]) -> None:
    """One person per Telegram id and per web account, or a decision's name is ambiguous."""
    for attr in ("telegram_user_id", "web_account"):
        seen: dict[Any, str] = {}
        for p in found.values():
            value = getattr(p, attr)
            if value is None:
                continue
            if value in seen:
                raise c.error(("people", p.name, attr),
                              f"{seen[value]} and {p.name} share the same {attr}")
            seen[value] = p.name


def person_shown(by: str | None) -> str:
    """A decider's name as people read it in every channel: `web:alice` -> alice,
    `telegram:1:Alice` -> Alice; a configured person's or the CLI's name stays as it is."""
    if not by:
        return "someone"
    if by.startswith("telegram:"):
        return by.split(":", 2)[-1] or by
    if by.startswith("web:"):
        return by[4:] or by
    return by


WAITING = ": waiting for "


def progress_shown(approval: Approval) -> str | None:
    """Four-eyes progress with each person's name ("Approved by alice (1 of 2): …"), never a
    channel's actor string (`web:alice`, `telegram:7:Alice`)."""
    named = tuple(replace(v, by=person_shown(v.by)) for v in approval.approvals)
    text = replace(approval, approvals=named).progress()
    recorded = approval.progress()
    if text is None or recorded is None or not approval.groups:
        return text
    # Groups list their members as recorded, so what is still missing comes from the record.
    return (text.rsplit(WAITING, 1)[0] + WAITING + recorded.rsplit(WAITING, 1)[1]
            if WAITING in text and WAITING in recorded else text)
