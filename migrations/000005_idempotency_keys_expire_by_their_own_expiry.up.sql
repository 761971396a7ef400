-- The idempotency-key cleaner deletes a key once its own expires_at has passed (its creation
-- plus the retention of the instance that stored it), not by its age against the retention
-- configured now: it reads the expired range of this index, a batch at a time.
CREATE INDEX idempotency_keys_expiry_idx ON idempotency_keys (queue_id, expires_at);
DROP INDEX idempotency_keys_age_idx;
