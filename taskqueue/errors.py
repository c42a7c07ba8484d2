"""Signoff's exceptions: one base, and one subclass per outcome the CLI maps to an exit code."""

from __future__ import annotations


class SignoffError(Exception):
    """Signoff failed."""

    exit_code = 1

    def __init__(self, message: str | None = None) -> None:
        super().__init__(message or (self.__doc__ or "").strip())


class BadInput(SignoffError):
    """The input is invalid."""


class AttachmentTooLarge(BadInput):
    """The attachment is larger than the limit."""


class ConfigError(BadInput):
    """The configuration is invalid."""


class DatabaseUnavailable(SignoffError):
    """The database cannot be reached."""


class MigrationError(SignoffError):
    """The migrations cannot be applied."""


class NothingToClaim(SignoffError):
    """Nothing to claim."""

    exit_code = 3


class LeaseLost(SignoffError):
    """Lease lost: this worker no longer holds this claim of the task."""

    exit_code = 4


class TaskNotFound(SignoffError):
    """No such task."""

    exit_code = 5


class Conflict(SignoffError):
    """The task is not in a state that allows this call."""

    exit_code = 6


class AlreadyDecided(Conflict):
    """The approval was already decided."""

    def __init__(self, message: str | None = None, *, decided_by: str | None = None,
                 decision: str | None = None) -> None:
        super().__init__(message)
        self.decided_by = decided_by
        self.decision = decision


class ApprovalExpired(Conflict):
    """The approval has expired."""
