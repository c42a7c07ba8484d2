-- Approver groups (issue 39): a capability may require approves from named groups, each
-- with its minimum of distinct people (taskqueue/store/groups.py). Stored as a JSON list of
-- {name, people, min}; NULL: no groups. An approval keeps the groups of its capability as
-- they were when the task parked (like `required`), so a later `caps set` or config change
-- never changes what an open request already asks.
ALTER TABLE capabilities ADD COLUMN approval_groups jsonb;
ALTER TABLE approvals ADD COLUMN groups jsonb;
