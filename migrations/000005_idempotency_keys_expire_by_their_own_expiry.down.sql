CREATE INDEX idempotency_keys_age_idx ON idempotency_keys (queue_id, created_at);
DROP INDEX idempotency_keys_expiry_idx;
