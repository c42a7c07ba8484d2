-- The claim: taking claimable tasks for a worker. The claimed task's columns, its
-- latest approval and that approval's files come from one place, signoff_claim (in force:
-- migration 0010's, which replaced 0005's; taskqueue/store/schema.sql shows it), whose
-- RETURN QUERY both the capped and the uncapped claim share.
-- Named blocks, loaded once with every .sql file here by taskqueue/store/queries.py; the
-- TaskQueue method that runs a query has its name.

-- name: task_claim
-- Up to n claimable tasks in one statement (see signoff_claim in store/schema.sql): each task's
-- columns, the status it was claimed from, and its latest approval as ap_* with that
-- approval's attachment metadata and its approves (ap_votes, oldest first, as
-- approval_votes_many reads them: a task claimed back after a four-eyes approve carries the
-- same `required` and approves as approval_get), in claim order. No row: nothing to claim.
-- answered_only (migration 0010): only tasks a person answered, for a worker's answer slot.
SELECT (c.claimed_task).*, c.claimed_from AS old_status,
       (c.latest_approval).id AS ap_id, (c.latest_approval).question AS ap_question,
       (c.latest_approval).request AS ap_request,
       (c.latest_approval).created_at AS ap_created_at,
       (c.latest_approval).expires_at AS ap_expires_at,
       (c.latest_approval).decision AS ap_decision,
       (c.latest_approval).decided_by AS ap_decided_by,
       (c.latest_approval).decided_at AS ap_decided_at,
       (c.latest_approval).note AS ap_note,
       (c.latest_approval).required AS ap_required,
       (c.latest_approval).escalated_at AS ap_escalated_at,
       (c.latest_approval).reminded_at AS ap_reminded_at,
       c.latest_files AS ap_files,
       -- The primary key's index (approval_id, person) finds them; none without an approval.
       (SELECT jsonb_agg(jsonb_build_object('person', v.person, 'decided_at', v.decided_at,
                                            'counts', v.counts, 'via', v.via,
                                            'signed', v.credential_id IS NOT NULL)
                         ORDER BY v.decided_at, v.person)
        FROM approval_votes v
        WHERE v.approval_id = (c.latest_approval).id) AS ap_votes
FROM signoff_claim(%(capability)s, %(worker)s, %(lease)s, %(n)s, %(answered_only)s) c
     -- The claim commits without waiting for its WAL flush (docs/semantics.md, "Claims
     -- commit without waiting for the disk"): a claim lost in a server crash runs again, as
     -- after a worker's crash. set_config(..., true) lasts only to the end of this
     -- statement's own transaction: nothing after it on the connection (nor PgBouncer's
     -- next client) inherits it, and decisions, gate markers and completions stay
     -- synchronous; their flush makes every earlier claim durable too.
     CROSS JOIN set_config('synchronous_commit', 'off', true) AS async_commit;
