"""The optional extras (`pip install 'signoff[NAME]'`): one line naming the extra to install
when a feature that needs one is used without it."""

from __future__ import annotations

import importlib.util

from taskqueue.errors import SignoffError


class MissingExtra(SignoffError):
    """A feature needs an optional extra that is not installed."""


def extra_missing(*modules: str) -> str | None:
    """The first of `modules` (top-level names) that cannot be imported, else None. Only
    located, never imported: a handler checks its libraries at load without loading them."""
    for module in modules:
        try:
            found = importlib.util.find_spec(module)
        except (ImportError, ValueError):
            found = None
        if found is None:
            return module
    return None


def require_extra(extra: str, what: str, *modules: str) -> None:
    """Raise MissingExtra, one line naming `extra`, when one of `modules` (what `what` needs)
    is not installed."""
    if extra_missing(*modules) is not None:
        raise MissingExtra(f"{what} needs the {extra!r} extra: pip install 'signoff[{extra}]'")
