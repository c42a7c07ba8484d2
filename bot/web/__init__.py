"""The web side of Signoff: an inbox to decide parked tasks with their evidence, and pages
for a task, the queue and the signals; a delivery channel of the notification outbox."""
