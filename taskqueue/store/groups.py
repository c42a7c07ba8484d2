"""Approver groups: a capability's named groups of people, each with a minimum of approves
(one from ops and one from finance), and the matching that says which are still missing."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from taskqueue.errors import BadInput
from taskqueue.store.checks import MAX_PEOPLE, check_name, person_key
from taskqueue.store.models import ApproverGroup, groups_missing

__all__ = ["ApproverGroup", "check_groups", "groups_from_json", "groups_missing"]

MAX_GROUPS = 20


def groups_from_json(raw: Any) -> tuple[ApproverGroup, ...]:
    """The groups as stored (a JSON list of {name, people, min}); () for none."""
    if not raw:
        return ()
    return tuple(ApproverGroup(g["name"], tuple(g["people"]), int(g["min"])) for g in raw)


def check_groups(groups: Any) -> tuple[ApproverGroup, ...]:
    """The API's check of `approval_groups` (a mapping name -> {people, min}, or groups);
    BadInput naming what is wrong."""
    if groups is None:
        return ()
    if isinstance(groups, Mapping):
        items = [_group(name, spec) for name, spec in groups.items()]
    elif isinstance(groups, list | tuple) and all(isinstance(g, ApproverGroup) for g in groups):
        items = list(groups)
    else:
        raise BadInput("approval_groups must map a group's name to {people = [...], min = N}")
    if len(items) > MAX_GROUPS:
        raise BadInput(f"approval_groups has more than {MAX_GROUPS} groups")
    for g in items:
        check_name(g.name, "a group's name", required=True)
        if not g.people or len(g.people) > MAX_PEOPLE:
            raise BadInput(f"group {g.name}: people must list 1 to {MAX_PEOPLE} names")
        for person in g.people:
            check_name(person, f"a name in group {g.name}", required=True)
        if len({person_key(p) for p in g.people}) != len(g.people):
            raise BadInput(f"group {g.name} names a person twice")
        if not 1 <= g.min <= len(g.people):
            raise BadInput(f"group {g.name}: min {g.min} must be 1 to the group's "
                           f"{len(g.people)} people")
    return tuple(items)


def _group(name: Any, spec: Any) -> ApproverGroup:
    if not isinstance(spec, Mapping) or not isinstance(spec.get("people"), list | tuple):
        raise BadInput(f"group {name}: needs people = [...] and min = N")
    minimum = spec.get("min", 1)
    if not isinstance(minimum, int) or isinstance(minimum, bool):
        raise BadInput(f"group {name}: min must be a whole number")
    if not all(isinstance(p, str) for p in spec["people"]):
        raise BadInput(f"group {name}: people must be names")
    return ApproverGroup(str(name), tuple(spec["people"]), minimum)
