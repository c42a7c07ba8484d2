"""The words that refuse a decision, the same in every channel (Telegram, the web inbox):
who may not decide, and why a decision the core turned down was not recorded."""

from __future__ import annotations

from bot.people import person_shown
from taskqueue import AlreadyApproved, AlreadyDecided, ApprovalExpired, NotAnApprover

__all__ = ["EXPIRED", "STRANGER", "not_a_person", "refusal_of"]

# Also the words for someone outside the allow list, whatever they tapped: a stranger learns
# nothing about which approvals exist.
STRANGER = "you are not on the list of people who may decide"
EXPIRED = "this approval has expired; nothing was decided"


def not_a_person(account: str, key: str) -> str:
    """Refuses an account (`account`: how the channel calls it) that no `[people.NAME]`
    table names with `key`, once people are configured."""
    return (f"your {account} is not one of the configured people ([people.NAME] {key}); "
            "nothing was recorded")


def refusal_of(exc: Exception) -> str:
    """Why the core turned a decision down (NotAnApprover, AlreadyApproved, a Conflict such
    as AlreadyDecided or ApprovalExpired, NotFound), in the channels' words."""
    if isinstance(exc, NotAnApprover):
        return STRANGER
    if isinstance(exc, AlreadyApproved):
        return (f"you already approved this ({exc.approved} of {exc.required}); "
                "an approve counts once per person")
    if isinstance(exc, AlreadyDecided):
        return f"this was already {exc.decision} by {person_shown(exc.decided_by)}"
    if isinstance(exc, ApprovalExpired):
        return EXPIRED
    return str(exc)
