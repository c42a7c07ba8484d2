"""Who a CLI decision names and who typed it: `--by` against the config's `[people.NAME]`
tables, and the OS account and host that ran the command (`cli:USER@HOST`)."""

from __future__ import annotations

import socket
from typing import TYPE_CHECKING

from taskqueue.cli.output import safe
from taskqueue.errors import BadInput
from taskqueue.store.checks import person_key

if TYPE_CHECKING:
    from taskqueue.config.model import Config


def configured_people(config: Config) -> list[str]:
    """The names of the config's `[people.NAME]` tables (their spelling), in file order."""
    people = config.sections.get("people")
    return [str(name) for name in people] if isinstance(people, dict) else []


def resolve_person(config: Config | None, name: str) -> str:
    """The person `--by` names. With `[people.*]` configured it must name one of them
    (compared case-folded; the config's spelling is recorded); without (or without a
    config file), it is kept as typed."""
    if config is None or not (people := configured_people(config)):
        return name
    for person in people:
        if person_key(person) == person_key(name):
            return person
    raise BadInput(f"--by {safe(name[:64])!r} is not a configured person ([people.NAME] in "
                   f"{config.path}): nothing recorded")


def typed_by() -> str:
    """The OS user and host that ran this command: `cli:USER@HOST`."""
    import getpass  # a decision's alone: it loads termios

    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = "unknown"
    return f"cli:{user}@{socket.gethostname()}"[:200]
