-- Four-eyes progress in the outbox: an approve short of the count writes an
-- `approval_progress` notification (body: approved, required, by), in the transaction that
-- records the approve, so every channel shows "Approved by alice (1 of 2)" whichever
-- channel (or the CLI) the approve came from. Like the other approval kinds it names its
-- approval.
ALTER TABLE notifications DROP CONSTRAINT notifications_kind_check;
ALTER TABLE notifications DROP CONSTRAINT notifications_check;
ALTER TABLE notifications ADD CONSTRAINT notifications_kind_check
    CHECK (kind IN ('approval_request', 'approval_progress', 'approval_closed', 'alert',
                    'message'));
ALTER TABLE notifications ADD CONSTRAINT notifications_check
    CHECK ((kind IN ('approval_request', 'approval_progress', 'approval_closed'))
           = (approval_id IS NOT NULL));
