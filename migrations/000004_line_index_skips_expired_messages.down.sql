CREATE INDEX messages_line_idx ON messages (queue_id, priority, seq) WHERE state = 0;
DROP INDEX messages_ready_idx;
ALTER INDEX messages_line_idx RENAME TO messages_ready_idx;
