"""`[capabilities.NAME.approval_groups]` and the people a capability names, checked at load:
an unknown person, a `min` larger than its group, or an `escalate_to` person who cannot
decide is a one-line error naming the file and the line."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from taskqueue.config.checker import Checker, KeyPath
from taskqueue.store.checks import person_key
from taskqueue.store.groups import MAX_GROUPS, ApproverGroup

_GROUP_KEYS = {"people", "min"}


def parse_groups(c: Checker, table: Mapping[str, Any], k: KeyPath
                 ) -> tuple[ApproverGroup, ...] | None:
    """The capability's approver groups (None when the key is absent)."""
    raw = table.get("approval_groups")
    if raw is None:
        return None
    key = (*k, "approval_groups")
    if not isinstance(raw, Mapping) or len(raw) > MAX_GROUPS:
        raise c.error(key, f"must be a table of at most {MAX_GROUPS} groups, e.g. "
                           'ops = { people = ["alice", "bob"], min = 1 }')
    return tuple(_group(c, (*key, str(name)), str(name), spec) for name, spec in raw.items())


def _group(c: Checker, key: KeyPath, name: str, spec: Any) -> ApproverGroup:
    t = c.keys(spec, key, _GROUP_KEYS)
    people = t.get("people")
    if (not isinstance(people, list) or not people or len(people) > 100
            or not all(isinstance(p, str) and p.strip() and len(p) <= 200 for p in people)):
        raise c.error((*key, "people"), 'must be a list of person names, e.g. ["alice", "bob"]')
    if len({person_key(p) for p in people}) != len(people):
        raise c.error((*key, "people"), "names a person twice")
    minimum = c.get(t, (*key, "min"), "int", 1, 1, 100)
    if minimum > len(people):
        size = f"{len(people)} {'person' if len(people) == 1 else 'people'}"
        raise c.error((*key, "min"), f"min {minimum} is larger than the group ({size})")
    return ApproverGroup(name, tuple(people), minimum)


def check_capability_people(c: Checker, name: str, people: list[str],
                            approvers: tuple[str, ...] | None,
                            escalate_to: tuple[str, ...] | None,
                            groups: tuple[ApproverGroup, ...] | None) -> None:
    """Every name the capability uses is a configured person (when `[people.*]` exists),
    and every `escalate_to` person may decide what they are escalated."""
    k: KeyPath = ("capabilities", name)
    known = {person_key(p) for p in people}
    named: list[tuple[KeyPath, str]] = [((*k, "approvers"), p) for p in approvers or ()]
    named += [((*k, "escalate_to"), p) for p in escalate_to or ()]
    named += [((*k, "approval_groups", g.name), p) for g in groups or () for p in g.people]
    if known:
        for key, person in named:
            if person_key(person) not in known:
                raise c.error(key, f"unknown person {person!r}: no [people.{person}] table")
    if approvers is not None:
        allowed = {person_key(p) for p in approvers}
        for person in escalate_to or ():
            if person_key(person) not in allowed:
                raise c.error((*k, "escalate_to"), f"{person!r} cannot decide {name} (not in "
                                                   "its approvers), so cannot be escalated to")
