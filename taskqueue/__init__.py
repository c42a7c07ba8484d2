"""Signoff's queue core: durable tasks in PostgreSQL that stop for a human's sign-off."""

from taskqueue.client import APPROVALS_CHANNEL, TASKS_CHANNEL, Enqueued, NewTask, TaskQueue
from taskqueue.config import (
    CapabilityConfig,
    Config,
    ProducerConfig,
    TelegramConfig,
    apply_capabilities,
    load_config,
)
from taskqueue.embedded import data_dir
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
from taskqueue.handler import (
    Done,
    Fail,
    Handler,
    Outcome,
    Park,
    Release,
    TaskContext,
    load_handler,
)
from taskqueue.heartbeat import Heartbeat
from taskqueue.listener import Listener
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
from taskqueue.producer import Producer, ProducerContext, ProducerJob, ProducerReport
from taskqueue.reaper import Reaper, ReaperConfig, ReapReport
from taskqueue.runner import CapabilityRun, SliceReport, Stopping, run_slice
from taskqueue.signals import Signal, SignalConfig, Signals, read_signals
from taskqueue.states import Decision, Status
from taskqueue.tick import Tick, TickReport
from taskqueue.worker import WorkerConfig, WorkerPool, default_worker_name

__all__ = [
    "APPROVALS_CHANNEL",
    "TASKS_CHANNEL",
    "AlreadyDecided",
    "Approval",
    "ApprovalExpired",
    "ApprovalMessage",
    "Attachment",
    "AttachmentTooLarge",
    "BadInput",
    "Capability",
    "CapabilityConfig",
    "CapabilityRun",
    "Config",
    "ConfigError",
    "Conflict",
    "DatabaseUnavailable",
    "Decision",
    "Done",
    "Enqueued",
    "Event",
    "Fail",
    "Handler",
    "Heartbeat",
    "LeaseLost",
    "Listener",
    "MigrationError",
    "NewAttachment",
    "NewTask",
    "NothingToClaim",
    "Outcome",
    "Park",
    "Producer",
    "ProducerConfig",
    "ProducerContext",
    "ProducerJob",
    "ProducerReport",
    "ReapReport",
    "Reaper",
    "ReaperConfig",
    "Release",
    "Signal",
    "SignalConfig",
    "Signals",
    "SignoffError",
    "SliceReport",
    "Status",
    "Stopping",
    "Task",
    "TaskContext",
    "TaskDetail",
    "TaskNotFound",
    "TaskQueue",
    "TelegramConfig",
    "Tick",
    "TickReport",
    "WorkerConfig",
    "WorkerPool",
    "apply_capabilities",
    "data_dir",
    "default_worker_name",
    "load_config",
    "load_handler",
    "read_signals",
    "run_slice",
]
