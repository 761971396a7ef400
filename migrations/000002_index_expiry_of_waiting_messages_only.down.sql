DROP INDEX messages_waiting_expiry_idx;
CREATE INDEX messages_expiry_idx ON messages (queue_id, expires_at);
