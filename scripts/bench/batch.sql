-- Copied unchanged from the shared benchmark kit that came with Retsu's performance issue, for
-- scripts/bench/ceiling.sh.
-- 100 lifecycles per statement: enqueue 100, dequeue up to 100, acknowledge what came back.
-- Written for pgbench -M prepared|extended (variables become bind parameters).
INSERT INTO messages (id, queue_id, priority, payload, expires_at, max_delivery_attempts, visibility_timeout_seconds) SELECT gen_random_uuid(), '019c9a65-7d3a-7c6b-8a9d-123456789abc', (g % 3), 'send welcome email to user 12345', now() + interval '7 days', 5, 30 FROM generate_series(1, 100) AS g;
WITH c AS (SELECT id FROM messages WHERE queue_id = '019c9a65-7d3a-7c6b-8a9d-123456789abc' AND visible_at <= now() AND expires_at > now() ORDER BY priority DESC, seq LIMIT 100 FOR UPDATE SKIP LOCKED), u AS (UPDATE messages m SET receipt_handle = gen_random_uuid(), delivery_attempts = m.delivery_attempts + 1, visible_at = now() + make_interval(secs => m.visibility_timeout_seconds) FROM c WHERE m.id = c.id RETURNING m.id, m.receipt_handle, m.payload) SELECT coalesce(array_agg(id), '{}') AS ids, coalesce(array_agg(receipt_handle), '{}') AS rhs FROM u \gset
DELETE FROM messages m USING unnest(:ids::uuid[], :rhs::uuid[]) AS a(id, rh) WHERE m.id = a.id AND m.receipt_handle = a.rh AND m.visible_at > now();
