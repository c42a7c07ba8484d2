"""Signoff's queue core: durable tasks in PostgreSQL that stop for a human's sign-off."""

from taskqueue.client import APPROVALS_CHANNEL, TASKS_CHANNEL, Enqueued, NewTask, TaskQueue
from taskqueue.errors import (
    AlreadyDecided,
    ApprovalExpired,
    AttachmentTooLarge,
    BadInput,
    ConfigError,
    Conflict,
    DatabaseUnavailable,
    LeaseLost,
    MigrationError,
    NothingToClaim,
    SignoffError,
    TaskNotFound,
)
from taskqueue.models import (
    Approval,
    Attachment,
    Capability,
    Event,
    NewAttachment,
    Task,
    TaskDetail,
)
from taskqueue.outbox import ApprovalMessage
from taskqueue.reaper import Reaper, ReaperConfig, ReapReport
from taskqueue.signals import Signal, SignalConfig, Signals, read_signals
from taskqueue.states import Decision, Status

__all__ = [
    "APPROVALS_CHANNEL",
    "TASKS_CHANNEL",
    "AlreadyDecided",
    "Approval",
    "ApprovalMessage",
    "ApprovalExpired",
    "Attachment",
    "AttachmentTooLarge",
    "BadInput",
    "Capability",
    "ConfigError",
    "Conflict",
    "DatabaseUnavailable",
    "Decision",
    "Enqueued",
    "Event",
    "LeaseLost",
    "MigrationError",
    "NewAttachment",
    "NewTask",
    "NothingToClaim",
    "ReapReport",
    "Reaper",
    "ReaperConfig",
    "Signal",
    "SignalConfig",
    "Signals",
    "SignoffError",
    "Status",
    "Task",
    "TaskDetail",
    "TaskNotFound",
    "TaskQueue",
    "read_signals",
]
