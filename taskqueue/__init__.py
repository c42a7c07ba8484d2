"""Signoff's queue core: durable tasks in PostgreSQL that stop for a human's sign-off.

The names below are the public API; the sub-packages behind them are the core's own:
`store` (the schema's rules, the client and its SQL), `runtime` (handlers, workers,
heartbeats, producers), `maintenance` (reaper, signals, alerts, stats), `config` and `cli`.
"""

from taskqueue.config.checker import Checker as ConfigChecker
from taskqueue.config.model import CapabilityConfig, Config, ProducerConfig
from taskqueue.config.section import MAX_SECONDS, ConfigSection
from taskqueue.config.settings import (
    apply_capabilities,
    load_config,
    publish_path,
    workload_section,
)
from taskqueue.errors import (
    TRANSIENT,
    AlreadyApproved,
    AlreadyDecided,
    ApprovalExpired,
    ApprovalNotFound,
    AttachmentTooLarge,
    BadInput,
    ConfigError,
    Conflict,
    DatabaseUnavailable,
    LeaseLost,
    MigrationError,
    NotAnApprover,
    NotFound,
    NothingToClaim,
    SignoffError,
    TaskNotFound,
    one_line,
    run_main,
)
from taskqueue.maintenance.alerts import AlertReport, IncidentAlert
from taskqueue.maintenance.channels import UNREACHABLE_AFTER, ChannelHealth, ChannelReport
from taskqueue.maintenance.endpoints import (
    HealthCheck,
    ObservabilityServer,
    bind_listen,
    parse_listen,
    reaper_check,
)
from taskqueue.maintenance.pruner import Pruner, PrunerConfig, PruneReport
from taskqueue.maintenance.reaper import Reaper, ReaperConfig, ReapReport
from taskqueue.maintenance.reminders import Reminders, RemindReport
from taskqueue.maintenance.requestlog import RequestLog
from taskqueue.maintenance.signals import Signal, SignalConfig, Signals, read_signals
from taskqueue.maintenance.stats import Stats, read_stats
from taskqueue.redact import (
    MASK,
    RedactingFilter,
    redact,
    secret_register,
    secret_register_dsn,
    secret_register_env,
    secret_register_environment,
)
from taskqueue.runtime.backoff import Backoff, full_jitter
from taskqueue.runtime.crashpoints import Checkpoint, env_crash_points
from taskqueue.runtime.cron import cron_next, cron_trigger
from taskqueue.runtime.gate import (
    ActionUncertain,
    AlreadyActed,
    Gate,
    Gated,
    NotApproved,
    NothingHappened,
    idempotency_key,
    rename_points,
)
from taskqueue.runtime.handler import (
    Done,
    Fail,
    Handler,
    Outcome,
    Park,
    Release,
    TaskContext,
    load_handler,
)
from taskqueue.runtime.heartbeat import Heartbeat
from taskqueue.runtime.leadership import LEADER_LOCK_KEY, Leadership
from taskqueue.runtime.listener import Listener, ListenerHub, Subscription
from taskqueue.runtime.process import (
    LOG_FORMATS,
    LOG_LEVELS,
    configure_logging,
    freeze_startup_objects,
    log_options,
)
from taskqueue.runtime.producer import Producer, ProducerContext, ProducerJob, ProducerReport
from taskqueue.runtime.runner import CapabilityRun, SliceReport, Stopping, run_slice
from taskqueue.runtime.tick import Tick, TickReport
from taskqueue.runtime.worker import WorkerConfig, WorkerPool, default_worker_name
from taskqueue.store.analytics import DecisionStats
from taskqueue.store.base import APPROVALS_CHANNEL, TASKS_CHANNEL
from taskqueue.store.batches import Completion, Failure, Releasing
from taskqueue.store.client import TaskQueue
from taskqueue.store.db import describe as describe_dsn
from taskqueue.store.db import resolve_dsn
from taskqueue.store.embedded import data_dir
from taskqueue.store.migrate import migrate
from taskqueue.store.models import (
    Approval,
    Attachment,
    Capability,
    Enqueued,
    Event,
    GatedAction,
    NewAttachment,
    NewTask,
    Notification,
    ProducerRun,
    Task,
    TaskDetail,
    Vote,
)
from taskqueue.store.notifications import NOTIFICATIONS_CHANNEL
from taskqueue.store.queries import parse as parse_queries
from taskqueue.store.states import TRANSITIONS, Decision, Status

__all__ = [
    "APPROVALS_CHANNEL",
    "LEADER_LOCK_KEY",
    "LOG_FORMATS",
    "LOG_LEVELS",
    "MASK",
    "MAX_SECONDS",
    "NOTIFICATIONS_CHANNEL",
    "TASKS_CHANNEL",
    "TRANSIENT",
    "TRANSITIONS",
    "UNREACHABLE_AFTER",
    "ActionUncertain",
    "AlertReport",
    "AlreadyActed",
    "AlreadyApproved",
    "AlreadyDecided",
    "Approval",
    "ApprovalExpired",
    "ApprovalNotFound",
    "Attachment",
    "AttachmentTooLarge",
    "Backoff",
    "BadInput",
    "Capability",
    "CapabilityConfig",
    "CapabilityRun",
    "ChannelHealth",
    "ChannelReport",
    "Checkpoint",
    "Completion",
    "Config",
    "ConfigChecker",
    "ConfigError",
    "ConfigSection",
    "Conflict",
    "DatabaseUnavailable",
    "Decision",
    "DecisionStats",
    "Done",
    "Enqueued",
    "Event",
    "Fail",
    "Failure",
    "Gate",
    "Gated",
    "GatedAction",
    "Handler",
    "HealthCheck",
    "Heartbeat",
    "IncidentAlert",
    "Leadership",
    "LeaseLost",
    "Listener",
    "ListenerHub",
    "MigrationError",
    "NewAttachment",
    "NewTask",
    "NotAnApprover",
    "NotApproved",
    "NotFound",
    "NothingHappened",
    "NothingToClaim",
    "Notification",
    "ObservabilityServer",
    "Outcome",
    "Park",
    "Producer",
    "ProducerConfig",
    "ProducerContext",
    "ProducerJob",
    "ProducerReport",
    "ProducerRun",
    "PruneReport",
    "Pruner",
    "PrunerConfig",
    "ReapReport",
    "Reaper",
    "ReaperConfig",
    "RedactingFilter",
    "Release",
    "Releasing",
    "RemindReport",
    "Reminders",
    "RequestLog",
    "Signal",
    "SignalConfig",
    "Signals",
    "SignoffError",
    "SliceReport",
    "Stats",
    "Status",
    "Stopping",
    "Subscription",
    "Task",
    "TaskContext",
    "TaskDetail",
    "TaskNotFound",
    "TaskQueue",
    "Tick",
    "TickReport",
    "Vote",
    "WorkerConfig",
    "WorkerPool",
    "apply_capabilities",
    "bind_listen",
    "configure_logging",
    "cron_next",
    "cron_trigger",
    "data_dir",
    "default_worker_name",
    "describe_dsn",
    "env_crash_points",
    "freeze_startup_objects",
    "full_jitter",
    "idempotency_key",
    "load_config",
    "load_handler",
    "log_options",
    "migrate",
    "one_line",
    "parse_listen",
    "parse_queries",
    "publish_path",
    "read_signals",
    "read_stats",
    "reaper_check",
    "redact",
    "rename_points",
    "resolve_dsn",
    "run_main",
    "run_slice",
    "secret_register",
    "secret_register_dsn",
    "secret_register_env",
    "secret_register_environment",
    "workload_section",
]
