"""Signoff's queue core: durable tasks in PostgreSQL that stop for a human's sign-off.

The names below are the public API; the sub-packages behind them are the core's own:
`store` (the schema's rules and its SQL), `queues` (the queue's API: one facade per role
and TaskQueue, all of them in one), `runtime` (handlers, workers, heartbeats, producers),
`maintenance` (reaper, signals, alerts, stats), `config` and `cli`.

Each name is imported on first use (PEP 562), so `import taskqueue` and a `signoff`
command load only the modules they touch: the CLI answers without loading aiohttp, the
worker runtime or the maintenance services it does not run.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from taskqueue.config.checker import Checker as ConfigChecker
    from taskqueue.config.model import CapabilityConfig, Config, ProducerConfig
    from taskqueue.config.section import MAX_SECONDS, ConfigSection
    from taskqueue.config.settings import (
        apply_capabilities,
        load_config,
        publish_path,
        workload_section,
    )
    from taskqueue.embedded.server import data_dir
    from taskqueue.errors import (
        TRANSIENT,
        AlreadyApproved,
        AlreadyDecided,
        ApprovalExpired,
        ApprovalNotFound,
        AttachmentTooLarge,
        AuditMismatch,
        BadInput,
        ConfigError,
        Conflict,
        DatabaseUnavailable,
        LeaseLost,
        MigrationError,
        NotAnApprover,
        NotFound,
        NothingToClaim,
        SchemaTooNew,
        ServerTooOld,
        SignatureRequired,
        SignoffError,
        TaskNotFound,
        one_line,
        run_main,
    )
    from taskqueue.extras import MissingExtra, extra_missing, require_extra
    from taskqueue.http.listen import bind_listen, parse_listen
    from taskqueue.http.requestlog import RequestLog
    from taskqueue.http.server import ObservabilityServer
    from taskqueue.maintenance.alerts import AlertReport, IncidentAlert
    from taskqueue.maintenance.audit import VerifyReport, audit_figures, audit_verify
    from taskqueue.maintenance.channels import UNREACHABLE_AFTER, ChannelHealth, ChannelReport
    from taskqueue.maintenance.healthchecks import HealthCheck, reaper_check
    from taskqueue.maintenance.pruner import Pruner, PrunerConfig, PruneReport
    from taskqueue.maintenance.reaper import Reaper, ReaperConfig, ReapReport
    from taskqueue.maintenance.reminders import Reminders, RemindReport
    from taskqueue.maintenance.signals import Signal, SignalConfig, Signals, read_signals
    from taskqueue.maintenance.stats import Stats, read_stats
    from taskqueue.queues.asker import AskerQueue
    from taskqueue.queues.channel import ChannelQueue
    from taskqueue.queues.maintenance import MaintenanceQueue
    from taskqueue.queues.operator import OperatorQueue
    from taskqueue.queues.outbox import OutboxQueue
    from taskqueue.queues.people import PeopleQueue
    from taskqueue.queues.producer import ProducerQueue
    from taskqueue.queues.shared import SharedQueue
    from taskqueue.queues.whole import TaskQueue
    from taskqueue.queues.worker import WorkerQueue
    from taskqueue.redact import (
        MASK,
        RedactingFilter,
        redact,
        secret_register,
        secret_register_dsn,
        secret_register_env,
        secret_register_environment,
    )
    from taskqueue.runtime.approval import NotSignedOff, require_approval
    from taskqueue.runtime.approval_waker import ApprovalWaker
    from taskqueue.runtime.backoff import Backoff, full_jitter
    from taskqueue.runtime.command import CommandError, CommandResult, kill_group, run_command
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
    from taskqueue.runtime.gcfreeze import freeze_startup_objects
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
    from taskqueue.runtime.logsetup import (
        LOG_FORMATS,
        LOG_LEVELS,
        configure_logging,
        info_unless_chosen,
        log_options,
    )
    from taskqueue.runtime.producer import Producer, ProducerContext, ProducerJob, ProducerReport
    from taskqueue.runtime.runner import CapabilityRun, SliceReport, Stopping, run_slice
    from taskqueue.runtime.tick import Tick, TickReport
    from taskqueue.runtime.waits import wait_at_most
    from taskqueue.runtime.worker import WorkerConfig, WorkerPool, default_worker_name
    from taskqueue.store.analytics import DecisionStats
    from taskqueue.store.base import APPROVALS_CHANNEL, TASKS_CHANNEL, ConnectionSource
    from taskqueue.store.batches import Completion, Failure, Releasing
    from taskqueue.store.checks import person_key
    from taskqueue.store.db import describe as describe_dsn
    from taskqueue.store.db import resolve_dsn
    from taskqueue.store.migrate import migrate
    from taskqueue.store.models import (
        Approval,
        ApproverGroup,
        Attachment,
        Capability,
        Event,
        Task,
        TaskDetail,
        Vote,
    )
    from taskqueue.store.notifications import NOTIFICATIONS_CHANNEL
    from taskqueue.store.passkeys import Passkey
    from taskqueue.store.queries import parse as parse_queries
    from taskqueue.store.requests import AskedRequest
    from taskqueue.store.signing import Assertion, SignatureInvalid, approval_challenge
    from taskqueue.store.states import TRANSITIONS, Decision, Status
    from taskqueue.store.work_models import (
        Enqueued,
        GatedAction,
        NewAttachment,
        NewTask,
        Notification,
        ProducerRun,
    )

# `redact` names both a submodule and a function. Importing the submodule (which most of
# the core does) sets the package's attribute `redact` to the module, so the function is
# bound here, after that import, as a plain import would; the module is light.
from taskqueue.redact import redact

# Each public name (but `redact`, bound above) and the module that defines it.
_EXPORTS: dict[str, tuple[str, str]] = {
    'APPROVALS_CHANNEL': ('taskqueue.store.base', 'APPROVALS_CHANNEL'),
    'ActionUncertain': ('taskqueue.runtime.gate', 'ActionUncertain'),
    'AlertReport': ('taskqueue.maintenance.alerts', 'AlertReport'),
    'AlreadyActed': ('taskqueue.runtime.gate', 'AlreadyActed'),
    'ApprovalWaker': ('taskqueue.runtime.approval_waker', 'ApprovalWaker'),
    'AlreadyApproved': ('taskqueue.errors', 'AlreadyApproved'),
    'AlreadyDecided': ('taskqueue.errors', 'AlreadyDecided'),
    'Approval': ('taskqueue.store.models', 'Approval'),
    'ApprovalExpired': ('taskqueue.errors', 'ApprovalExpired'),
    'ApprovalNotFound': ('taskqueue.errors', 'ApprovalNotFound'),
    'Attachment': ('taskqueue.store.models', 'Attachment'),
    'AskedRequest': ('taskqueue.store.requests', 'AskedRequest'),
    'AttachmentTooLarge': ('taskqueue.errors', 'AttachmentTooLarge'),
    'Backoff': ('taskqueue.runtime.backoff', 'Backoff'),
    'BadInput': ('taskqueue.errors', 'BadInput'),
    'Capability': ('taskqueue.store.models', 'Capability'),
    'CapabilityConfig': ('taskqueue.config.model', 'CapabilityConfig'),
    'CapabilityRun': ('taskqueue.runtime.runner', 'CapabilityRun'),
    'ChannelHealth': ('taskqueue.maintenance.channels', 'ChannelHealth'),
    'ChannelReport': ('taskqueue.maintenance.channels', 'ChannelReport'),
    'Checkpoint': ('taskqueue.runtime.crashpoints', 'Checkpoint'),
    'CommandError': ('taskqueue.runtime.command', 'CommandError'),
    'CommandResult': ('taskqueue.runtime.command', 'CommandResult'),
    'Completion': ('taskqueue.store.batches', 'Completion'),
    'Config': ('taskqueue.config.model', 'Config'),
    'ConfigChecker': ('taskqueue.config.checker', 'Checker'),
    'ConfigError': ('taskqueue.errors', 'ConfigError'),
    'ConfigSection': ('taskqueue.config.section', 'ConfigSection'),
    'Conflict': ('taskqueue.errors', 'Conflict'),
    'ConnectionSource': ('taskqueue.store.base', 'ConnectionSource'),
    'DatabaseUnavailable': ('taskqueue.errors', 'DatabaseUnavailable'),
    'Decision': ('taskqueue.store.states', 'Decision'),
    'DecisionStats': ('taskqueue.store.analytics', 'DecisionStats'),
    'Done': ('taskqueue.runtime.handler', 'Done'),
    'Enqueued': ('taskqueue.store.work_models', 'Enqueued'),
    'Event': ('taskqueue.store.models', 'Event'),
    'Fail': ('taskqueue.runtime.handler', 'Fail'),
    'Failure': ('taskqueue.store.batches', 'Failure'),
    'Gate': ('taskqueue.runtime.gate', 'Gate'),
    'Gated': ('taskqueue.runtime.gate', 'Gated'),
    'GatedAction': ('taskqueue.store.work_models', 'GatedAction'),
    'Handler': ('taskqueue.runtime.handler', 'Handler'),
    'HealthCheck': ('taskqueue.maintenance.healthchecks', 'HealthCheck'),
    'Heartbeat': ('taskqueue.runtime.heartbeat', 'Heartbeat'),
    'IncidentAlert': ('taskqueue.maintenance.alerts', 'IncidentAlert'),
    'LEADER_LOCK_KEY': ('taskqueue.runtime.leadership', 'LEADER_LOCK_KEY'),
    'LOG_FORMATS': ('taskqueue.runtime.logsetup', 'LOG_FORMATS'),
    'LOG_LEVELS': ('taskqueue.runtime.logsetup', 'LOG_LEVELS'),
    'Leadership': ('taskqueue.runtime.leadership', 'Leadership'),
    'LeaseLost': ('taskqueue.errors', 'LeaseLost'),
    'Listener': ('taskqueue.runtime.listener', 'Listener'),
    'ListenerHub': ('taskqueue.runtime.listener', 'ListenerHub'),
    'MASK': ('taskqueue.redact', 'MASK'),
    'MAX_SECONDS': ('taskqueue.config.section', 'MAX_SECONDS'),
    'MigrationError': ('taskqueue.errors', 'MigrationError'),
    'NOTIFICATIONS_CHANNEL': ('taskqueue.store.notifications', 'NOTIFICATIONS_CHANNEL'),
    'NewAttachment': ('taskqueue.store.work_models', 'NewAttachment'),
    'NewTask': ('taskqueue.store.work_models', 'NewTask'),
    'NotAnApprover': ('taskqueue.errors', 'NotAnApprover'),
    'NotApproved': ('taskqueue.runtime.gate', 'NotApproved'),
    'NotFound': ('taskqueue.errors', 'NotFound'),
    'NotSignedOff': ('taskqueue.runtime.approval', 'NotSignedOff'),
    'NothingHappened': ('taskqueue.runtime.gate', 'NothingHappened'),
    'NothingToClaim': ('taskqueue.errors', 'NothingToClaim'),
    'SchemaTooNew': ('taskqueue.errors', 'SchemaTooNew'),
    'ServerTooOld': ('taskqueue.errors', 'ServerTooOld'),
    'Notification': ('taskqueue.store.work_models', 'Notification'),
    'ObservabilityServer': ('taskqueue.http.server', 'ObservabilityServer'),
    'Outcome': ('taskqueue.runtime.handler', 'Outcome'),
    'Park': ('taskqueue.runtime.handler', 'Park'),
    'Producer': ('taskqueue.runtime.producer', 'Producer'),
    'ProducerConfig': ('taskqueue.config.model', 'ProducerConfig'),
    'ProducerContext': ('taskqueue.runtime.producer', 'ProducerContext'),
    'ProducerJob': ('taskqueue.runtime.producer', 'ProducerJob'),
    'ProducerReport': ('taskqueue.runtime.producer', 'ProducerReport'),
    'ProducerRun': ('taskqueue.store.work_models', 'ProducerRun'),
    'PruneReport': ('taskqueue.maintenance.pruner', 'PruneReport'),
    'Pruner': ('taskqueue.maintenance.pruner', 'Pruner'),
    'PrunerConfig': ('taskqueue.maintenance.pruner', 'PrunerConfig'),
    'ReapReport': ('taskqueue.maintenance.reaper', 'ReapReport'),
    'Reaper': ('taskqueue.maintenance.reaper', 'Reaper'),
    'ReaperConfig': ('taskqueue.maintenance.reaper', 'ReaperConfig'),
    'RedactingFilter': ('taskqueue.redact', 'RedactingFilter'),
    'Release': ('taskqueue.runtime.handler', 'Release'),
    'Releasing': ('taskqueue.store.batches', 'Releasing'),
    'RemindReport': ('taskqueue.maintenance.reminders', 'RemindReport'),
    'Reminders': ('taskqueue.maintenance.reminders', 'Reminders'),
    'RequestLog': ('taskqueue.http.requestlog', 'RequestLog'),
    'Signal': ('taskqueue.maintenance.signals', 'Signal'),
    'SignalConfig': ('taskqueue.maintenance.signals', 'SignalConfig'),
    'Signals': ('taskqueue.maintenance.signals', 'Signals'),
    'SignoffError': ('taskqueue.errors', 'SignoffError'),
    'MissingExtra': ('taskqueue.extras', 'MissingExtra'),
    'extra_missing': ('taskqueue.extras', 'extra_missing'),
    'require_extra': ('taskqueue.extras', 'require_extra'),
    'SliceReport': ('taskqueue.runtime.runner', 'SliceReport'),
    'Stats': ('taskqueue.maintenance.stats', 'Stats'),
    'Status': ('taskqueue.store.states', 'Status'),
    'Stopping': ('taskqueue.runtime.runner', 'Stopping'),
    'Subscription': ('taskqueue.runtime.listener', 'Subscription'),
    'TASKS_CHANNEL': ('taskqueue.store.base', 'TASKS_CHANNEL'),
    'TRANSIENT': ('taskqueue.errors', 'TRANSIENT'),
    'TRANSITIONS': ('taskqueue.store.states', 'TRANSITIONS'),
    'Task': ('taskqueue.store.models', 'Task'),
    'TaskContext': ('taskqueue.runtime.handler', 'TaskContext'),
    'TaskDetail': ('taskqueue.store.models', 'TaskDetail'),
    'TaskNotFound': ('taskqueue.errors', 'TaskNotFound'),
    'TaskQueue': ('taskqueue.queues.whole', 'TaskQueue'),
    'Tick': ('taskqueue.runtime.tick', 'Tick'),
    'TickReport': ('taskqueue.runtime.tick', 'TickReport'),
    'UNREACHABLE_AFTER': ('taskqueue.maintenance.channels', 'UNREACHABLE_AFTER'),
    'Vote': ('taskqueue.store.models', 'Vote'),
    'WorkerConfig': ('taskqueue.runtime.worker', 'WorkerConfig'),
    'WorkerPool': ('taskqueue.runtime.worker', 'WorkerPool'),
    'apply_capabilities': ('taskqueue.config.settings', 'apply_capabilities'),
    'bind_listen': ('taskqueue.http.listen', 'bind_listen'),
    'configure_logging': ('taskqueue.runtime.logsetup', 'configure_logging'),
    'cron_next': ('taskqueue.runtime.cron', 'cron_next'),
    'cron_trigger': ('taskqueue.runtime.cron', 'cron_trigger'),
    'data_dir': ('taskqueue.embedded.server', 'data_dir'),
    'default_worker_name': ('taskqueue.runtime.worker', 'default_worker_name'),
    'describe_dsn': ('taskqueue.store.db', 'describe'),
    'env_crash_points': ('taskqueue.runtime.crashpoints', 'env_crash_points'),
    'freeze_startup_objects': ('taskqueue.runtime.gcfreeze', 'freeze_startup_objects'),
    'full_jitter': ('taskqueue.runtime.backoff', 'full_jitter'),
    'idempotency_key': ('taskqueue.runtime.gate', 'idempotency_key'),
    'info_unless_chosen': ('taskqueue.runtime.logsetup', 'info_unless_chosen'),
    'kill_group': ('taskqueue.runtime.command', 'kill_group'),
    'load_config': ('taskqueue.config.settings', 'load_config'),
    'load_handler': ('taskqueue.runtime.handler', 'load_handler'),
    'log_options': ('taskqueue.runtime.logsetup', 'log_options'),
    'migrate': ('taskqueue.store.migrate', 'migrate'),
    'one_line': ('taskqueue.errors', 'one_line'),
    'parse_listen': ('taskqueue.http.listen', 'parse_listen'),
    'person_key': ('taskqueue.store.checks', 'person_key'),
    'parse_queries': ('taskqueue.store.queries', 'parse'),
    'publish_path': ('taskqueue.config.settings', 'publish_path'),
    'read_signals': ('taskqueue.maintenance.signals', 'read_signals'),
    'read_stats': ('taskqueue.maintenance.stats', 'read_stats'),
    'reaper_check': ('taskqueue.maintenance.healthchecks', 'reaper_check'),
    'rename_points': ('taskqueue.runtime.gate', 'rename_points'),
    'require_approval': ('taskqueue.runtime.approval', 'require_approval'),
    'resolve_dsn': ('taskqueue.store.db', 'resolve_dsn'),
    'run_command': ('taskqueue.runtime.command', 'run_command'),
    'run_main': ('taskqueue.errors', 'run_main'),
    'AuditMismatch': ('taskqueue.errors', 'AuditMismatch'),
    'SignatureRequired': ('taskqueue.errors', 'SignatureRequired'),
    'ApproverGroup': ('taskqueue.store.models', 'ApproverGroup'),
    'VerifyReport': ('taskqueue.maintenance.audit', 'VerifyReport'),
    'audit_figures': ('taskqueue.maintenance.audit', 'audit_figures'),
    'audit_verify': ('taskqueue.maintenance.audit', 'audit_verify'),
    'Assertion': ('taskqueue.store.signing', 'Assertion'),
    'SignatureInvalid': ('taskqueue.store.signing', 'SignatureInvalid'),
    'approval_challenge': ('taskqueue.store.signing', 'approval_challenge'),
    'Passkey': ('taskqueue.store.passkeys', 'Passkey'),
    'AskerQueue': ('taskqueue.queues.asker', 'AskerQueue'),
    'ChannelQueue': ('taskqueue.queues.channel', 'ChannelQueue'),
    'MaintenanceQueue': ('taskqueue.queues.maintenance', 'MaintenanceQueue'),
    'OperatorQueue': ('taskqueue.queues.operator', 'OperatorQueue'),
    'OutboxQueue': ('taskqueue.queues.outbox', 'OutboxQueue'),
    'PeopleQueue': ('taskqueue.queues.people', 'PeopleQueue'),
    'ProducerQueue': ('taskqueue.queues.producer', 'ProducerQueue'),
    'SharedQueue': ('taskqueue.queues.shared', 'SharedQueue'),
    'WorkerQueue': ('taskqueue.queues.worker', 'WorkerQueue'),
    'run_slice': ('taskqueue.runtime.runner', 'run_slice'),
    'secret_register': ('taskqueue.redact', 'secret_register'),
    'secret_register_dsn': ('taskqueue.redact', 'secret_register_dsn'),
    'secret_register_env': ('taskqueue.redact', 'secret_register_env'),
    'secret_register_environment': ('taskqueue.redact', 'secret_register_environment'),
    'wait_at_most': ('taskqueue.runtime.waits', 'wait_at_most'),
    'workload_section': ('taskqueue.config.settings', 'workload_section'),
}


def __getattr__(name: str) -> Any:
    """Import a public name on first use and keep it in the module's namespace."""
    try:
        module, attribute = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module 'taskqueue' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


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
    "ApprovalWaker",
    "ApproverGroup",
    "AskedRequest",
    "AskerQueue",
    "Assertion",
    "Attachment",
    "AttachmentTooLarge",
    "AuditMismatch",
    "Backoff",
    "BadInput",
    "Capability",
    "CapabilityConfig",
    "CapabilityRun",
    "ChannelHealth",
    "ChannelQueue",
    "ChannelReport",
    "Checkpoint",
    "CommandError",
    "CommandResult",
    "Completion",
    "Config",
    "ConfigChecker",
    "ConfigError",
    "ConfigSection",
    "Conflict",
    "ConnectionSource",
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
    "MaintenanceQueue",
    "MigrationError",
    "MissingExtra",
    "NewAttachment",
    "NewTask",
    "NotAnApprover",
    "NotApproved",
    "NotFound",
    "NotSignedOff",
    "NothingHappened",
    "NothingToClaim",
    "Notification",
    "ObservabilityServer",
    "OperatorQueue",
    "OutboxQueue",
    "Outcome",
    "Park",
    "Passkey",
    "PeopleQueue",
    "Producer",
    "ProducerConfig",
    "ProducerContext",
    "ProducerJob",
    "ProducerQueue",
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
    "SchemaTooNew",
    "ServerTooOld",
    "SharedQueue",
    "Signal",
    "SignalConfig",
    "Signals",
    "SignatureInvalid",
    "SignatureRequired",
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
    "VerifyReport",
    "Vote",
    "WorkerConfig",
    "WorkerPool",
    "WorkerQueue",
    "apply_capabilities",
    "approval_challenge",
    "audit_figures",
    "audit_verify",
    "bind_listen",
    "configure_logging",
    "cron_next",
    "cron_trigger",
    "data_dir",
    "default_worker_name",
    "describe_dsn",
    "env_crash_points",
    "extra_missing",
    "freeze_startup_objects",
    "full_jitter",
    "idempotency_key",
    "info_unless_chosen",
    "kill_group",
    "load_config",
    "load_handler",
    "log_options",
    "migrate",
    "one_line",
    "parse_listen",
    "parse_queries",
    "person_key",
    "publish_path",
    "read_signals",
    "read_stats",
    "reaper_check",
    "redact",
    "rename_points",
    "require_approval",
    "require_extra",
    "resolve_dsn",
    "run_command",
    "run_main",
    "run_slice",
    "secret_register",
    "secret_register_dsn",
    "secret_register_env",
    "secret_register_environment",
    "wait_at_most",
    "workload_section",
]
