"""The queue's API split by role (taskqueue/queues/): TaskQueue offers what it offered before
the split, each facade offers its own role's methods and the shared base's only, the
facades together cover TaskQueue, and each facade works on its own over one pool."""

from __future__ import annotations

import inspect

import pytest

from taskqueue import (
    AskerQueue,
    ChannelQueue,
    Decision,
    MaintenanceQueue,
    OperatorQueue,
    OutboxQueue,
    PeopleQueue,
    ProducerQueue,
    SharedQueue,
    Status,
    TaskQueue,
    WorkerQueue,
)


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


# TaskQueue's public names before the split (dir(TaskQueue) on store/client.py's class),
# and those added since (approval_count_open, approval_list_open_page: the inbox's page;
# connect_single: any part on one connection, for a short-lived process).
BEFORE = _names("""
    alert_state_change approval_count_open approval_decide approval_decide_for_task
    approval_escalate_due approval_expire_many approval_get approval_get_many
    approval_list_open approval_list_open_ids approval_list_open_page approval_remind_due
    approval_signed_people ask attachment_get attachment_prune_many audit_figures_read
    audit_read capability_get capability_list capability_set connect connect_single
    database_ping
    decision_stats event_insert gated_action_check gated_action_drop gated_action_finish
    gated_action_list gated_action_restart gated_action_start max_attachment_bytes
    metrics_read notification_backlog
    notification_channel_register notification_claim notification_list
    notification_mark_delivered notification_next_due notification_redeliver
    notification_release notification_renew notification_send notification_wake passkey_add
    passkey_get passkey_list passkey_remove producer_run_abandon producer_run_begin
    producer_run_finish producer_run_get queue_summary reaper_run_insert reaper_run_latest
    request_done request_find request_get request_park request_wait schema_check_writable
    signal_read signing_link signing_link_set stats_read stats_report_postings
    table_vacuum_pruned task_cancel task_claim task_claim_many task_complete
    task_complete_many task_dedupe_known task_detail task_enqueue task_enqueue_many task_fail
    task_fail_many task_get task_get_many task_heartbeat task_list task_list_finished
    task_park task_prune_many task_release task_release_many task_rescue_many task_retry
    task_save_state task_search task_settle_many
""")

# What more than one role calls: on the base every facade shares.
SHARED = _names("""
    attachment_get connect_single database_ping event_insert max_attachment_bytes
    schema_check_writable signal_read task_get
""")

ROLES: dict[type, frozenset[str]] = {
    WorkerQueue: _names("""
        task_claim task_claim_many task_heartbeat task_save_state task_release task_park
        task_complete task_fail task_complete_many task_fail_many task_release_many
        task_settle_many gated_action_check gated_action_drop gated_action_finish
        gated_action_list gated_action_restart gated_action_start
    """),
    ProducerQueue: _names("""
        task_enqueue task_enqueue_many task_dedupe_known producer_run_abandon
        producer_run_begin producer_run_finish producer_run_get
    """),
    AskerQueue: _names("""
        ask request_done request_find request_get request_park request_wait
    """),
    PeopleQueue: _names("""
        approval_count_open approval_decide approval_decide_for_task approval_get
        approval_get_many approval_list_open approval_list_open_ids approval_list_open_page
        approval_signed_people capability_get
        capability_list passkey_add passkey_get passkey_list passkey_remove queue_summary
        signing_link signing_link_set task_detail task_get_many task_list task_list_finished
        task_search
    """),
    OutboxQueue: _names("""
        notification_channel_register notification_claim notification_list
        notification_mark_delivered notification_next_due notification_redeliver
        notification_release notification_renew notification_send notification_wake
    """),
    MaintenanceQueue: _names("""
        task_rescue_many approval_expire_many reaper_run_insert reaper_run_latest
        task_prune_many attachment_prune_many table_vacuum_pruned metrics_read
        approval_remind_due approval_escalate_due alert_state_change notification_backlog
        decision_stats stats_read stats_report_postings audit_read audit_figures_read
    """),
    OperatorQueue: _names("capability_set task_retry task_cancel"),
}


def _public(cls: type) -> set[str]:
    return {name for name in dir(cls) if not name.startswith("_")}


def test_taskqueue_offers_exactly_the_methods_it_offered_before_the_split() -> None:
    assert _public(TaskQueue) == BEFORE
    assert isinstance(inspect.getattr_static(TaskQueue, "connect"), classmethod)
    assert isinstance(inspect.getattr_static(TaskQueue, "max_attachment_bytes"), property)


def test_each_facade_offers_its_own_roles_methods_and_the_shared_base_only() -> None:
    assert _public(SharedQueue) == SHARED
    for facade, own in ROLES.items():
        assert _public(facade) == own | SHARED, facade.__name__


def test_no_method_belongs_to_two_roles() -> None:
    seen: dict[str, str] = {}
    for facade, own in ROLES.items():
        for name in own:
            assert name not in seen, f"{name} is both {seen[name]}'s and {facade.__name__}'s"
            seen[name] = facade.__name__
        assert not own & SHARED, facade.__name__


def test_the_facades_together_cover_every_taskqueue_method() -> None:
    covered = set(SHARED).union(*ROLES.values()) | {"connect"}
    assert covered == _public(TaskQueue)


def test_a_taskqueue_is_every_facade_and_a_channel_queue_is_people_and_outbox() -> None:
    assert all(issubclass(TaskQueue, facade) for facade in (*ROLES, ChannelQueue))
    assert _public(ChannelQueue) == ROLES[PeopleQueue] | ROLES[OutboxQueue] | SHARED


def test_a_method_is_the_same_function_on_its_facade_and_on_taskqueue() -> None:
    for facade, own in ROLES.items():
        for name in own:
            assert getattr(TaskQueue, name) is getattr(facade, name), name


@pytest.mark.parametrize("facade", [*ROLES, SharedQueue])
def test_every_facade_is_built_on_the_one_shared_base(facade: type) -> None:
    assert issubclass(facade, SharedQueue)


async def test_each_part_on_its_own_moves_a_task_through_the_loop(queue: TaskQueue) -> None:
    """Each facade built alone on one pool: enqueue, claim and park, deliver the question,
    decide, claim the answer and complete, then the reaper's and the operator's parts."""
    pool = queue.pool
    producer, worker, people = ProducerQueue(pool), WorkerQueue(pool), PeopleQueue(pool)
    outbox, maintenance, operator = OutboxQueue(pool), MaintenanceQueue(pool), OperatorQueue(pool)
    await operator.capability_set("facades", approvers=["alice"])
    assert await outbox.notification_channel_register("chat") == 0
    task_id = (await producer.task_enqueue("facades", {"n": 1}, actor="producer:p")).id
    task = await worker.task_claim("facades", "w1")
    assert task is not None and task.id == task_id
    approval = await worker.task_park(task_id, "w1", "Ship it?", claim=task.claim)
    [owed] = await outbox.notification_claim("chat", "sender")
    assert (owed.kind, owed.approval_id) == ("approval_request", approval.id)
    await outbox.notification_mark_delivered(owed.id, "chat", "sender")
    assert [a.id for a in await people.approval_list_open()] == [approval.id]
    decided = await people.approval_decide(approval.id, Decision.APPROVED, "alice")
    assert decided.decision is Decision.APPROVED
    again = await worker.task_claim("facades", "w1")
    assert again is not None and again.id == task_id
    done = await worker.task_complete(task_id, "w1", claim=again.claim, result={"ok": True})
    assert done.status is Status.SUCCEEDED
    assert (await maintenance.task_rescue_many(60)) == []
    [total] = [r for r in await maintenance.decision_stats() if r.scope == "total"]
    assert total.approved == 1
    cancelled = await operator.task_cancel(
        (await producer.task_enqueue("facades", {"n": 2})).id, actor="ops")
    assert cancelled.status is Status.CANCELLED
    assert (await people.task_get(task_id)).status is Status.SUCCEEDED


async def test_an_asker_part_alone_parks_its_request_for_a_person(queue: TaskQueue) -> None:
    asker, people = AskerQueue(queue.pool), PeopleQueue(queue.pool)
    asked, created = await asker.request_park("facades", "May I?", asked_by="agent")
    assert created and asked.is_open
    await people.approval_decide_for_task(asked.id, Decision.APPROVED, "alice")
    assert (await asker.request_get(asked.id)).decision is Decision.APPROVED
