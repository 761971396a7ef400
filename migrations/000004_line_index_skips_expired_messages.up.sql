-- The line with each message's expiry as a last key: a claim passes over the expired
-- messages at the head of a neglected queue's line inside the index, without fetching
-- them from the table, until the expired-message cleaner (or the claims) delete them.
CREATE INDEX messages_line_idx ON messages (queue_id, priority, seq, expires_at) WHERE state = 0;
DROP INDEX messages_ready_idx;
ALTER INDEX messages_line_idx RENAME TO messages_ready_idx;
