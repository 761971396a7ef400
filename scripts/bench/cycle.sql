-- Copied unchanged from the shared benchmark kit that came with Retsu's performance issue, for
-- scripts/bench/ceiling.sh.
-- One lifecycle, one statement per step (autocommit each): enqueue, dequeue, acknowledge.
-- Written for pgbench -M prepared|extended (variables become bind parameters).
-- The dequeue always returns one row (zeros when SKIP LOCKED found nothing) so that
-- \gset never aborts a client; the acknowledge of the zero id then deletes nothing.
\set p random(0, 2)
INSERT INTO messages (id, queue_id, priority, payload, expires_at, max_delivery_attempts, visibility_timeout_seconds) VALUES (gen_random_uuid(), '019c9a65-7d3a-7c6b-8a9d-123456789abc', :p, 'send welcome email to user 12345', now() + interval '7 days', 5, 30);
WITH c AS (SELECT id FROM messages WHERE queue_id = '019c9a65-7d3a-7c6b-8a9d-123456789abc' AND visible_at <= now() AND expires_at > now() ORDER BY priority DESC, seq LIMIT 1 FOR UPDATE SKIP LOCKED), u AS (UPDATE messages m SET receipt_handle = gen_random_uuid(), delivery_attempts = m.delivery_attempts + 1, visible_at = now() + make_interval(secs => m.visibility_timeout_seconds) FROM c WHERE m.id = c.id RETURNING m.id, m.receipt_handle, m.payload, m.priority, m.delivery_attempts) SELECT coalesce((SELECT id FROM u), '00000000-0000-0000-0000-000000000000') AS id, coalesce((SELECT receipt_handle FROM u), '00000000-0000-0000-0000-000000000000') AS rh \gset
DELETE FROM messages WHERE id = :id::uuid AND receipt_handle = :rh::uuid AND visible_at > now();
