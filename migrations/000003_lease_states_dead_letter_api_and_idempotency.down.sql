DROP TABLE cleaner_passes;
DROP TABLE idempotency_keys;
DROP TABLE deleted_queues;
ALTER TABLE dead_letters DROP COLUMN attributes;
DROP INDEX messages_unleased_expiry_idx;
DROP INDEX messages_exhausted_idx;
DROP INDEX messages_delayed_idx;
DROP INDEX messages_leased_idx;
DROP INDEX messages_ready_idx;
-- Messages released or delayed have no place in the earlier schema's two states: a delayed
-- one that was never delivered waits again; a released one counts as delivered.
CREATE INDEX messages_waiting_idx ON messages (queue_id, priority, seq) WHERE delivery_attempts = 0;
CREATE INDEX messages_delivered_idx ON messages (queue_id, visible_at) WHERE delivery_attempts > 0;
CREATE INDEX messages_waiting_expiry_idx ON messages (queue_id, expires_at) WHERE delivery_attempts = 0 AND seq > 0;
ALTER TABLE messages DROP COLUMN attributes, DROP COLUMN first_delivered_at, DROP COLUMN state;
