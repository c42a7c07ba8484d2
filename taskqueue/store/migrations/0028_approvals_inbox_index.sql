-- The inbox's page (approval_list_open_page): the open approvals in the inbox's order
-- (created_at, id), walked from a page's first key and stopped at its end, where the whole
-- list was read and sorted for every page (about 200 ms at 100,000 open approvals).
-- Partial on the undecided: an approval enters it once, when it is asked, and leaves with
-- its decision. task_id is carried so that the walk reads no approval's row: each one's
-- checks go to its task's row and to approvals_task_idx.
CREATE INDEX approvals_inbox_idx ON approvals (created_at, id) INCLUDE (task_id)
    WHERE decision IS NULL;
