"""What maintenance uses: the reaper's rescues and expiries, the pruner, reminders and
escalations, alerts, metrics, analytics and the audit (taskqueue/maintenance/)."""

from __future__ import annotations

from taskqueue.queues.shared import SharedQueue
from taskqueue.store.analytics import AnalyticsMixin
from taskqueue.store.audit import AuditMixin
from taskqueue.store.reminders import RemindersMixin
from taskqueue.store.services import ServicesMixin


class MaintenanceQueue(ServicesMixin, RemindersMixin, AnalyticsMixin, AuditMixin, SharedQueue):
    """Maintenance's part of the queue: each background service's run_once calls these."""
