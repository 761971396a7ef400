package postgres

// The statements of the adapter. Each names the index it relies on.

const queueColumns = `id, name, visibility_timeout_seconds, max_delivery_attempts, default_message_ttl_seconds`

// insertQueue relies on queues_name_key to refuse a second queue with the same name, also
// when two inserts race.
const insertQueue = `
INSERT INTO queues (` + queueColumns + `)
VALUES ($1, $2, $3, $4, $5)`

// selectQueue uses the primary key.
const selectQueue = `SELECT ` + queueColumns + ` FROM queues WHERE id = $1`

// selectQueues walks queues_name_key in name order from the cursor $2; $1, when not empty,
// keeps the one queue with that name.
const selectQueues = `
SELECT ` + queueColumns + `
FROM queues
WHERE ($1 = '' OR name = $1) AND name > $2
ORDER BY name
LIMIT $3`

// updateQueue changes the settings given (NULL keeps the stored value), by primary key.
const updateQueue = `
UPDATE queues
SET visibility_timeout_seconds  = coalesce($2, visibility_timeout_seconds),
    max_delivery_attempts       = coalesce($3, max_delivery_attempts),
    default_message_ttl_seconds = coalesce($4, default_message_ttl_seconds),
    updated_at = now()
WHERE id = $1
RETURNING ` + queueColumns

// insertMessages stores a batch of messages given as parallel arrays, in array order, so
// that seq follows the order of the batch. The expiry is computed on the database's clock.
// It does not read the queues table: the settings come with each message.
const insertMessages = `
INSERT INTO messages (queue_id, id, priority, payload, expires_at, visibility_timeout_seconds, max_delivery_attempts)
SELECT m.queue_id, m.id, m.priority, m.payload, now() + make_interval(secs => m.ttl_seconds),
       m.visibility_timeout_seconds, m.max_delivery_attempts
FROM unnest($1::uuid[], $2::uuid[], $3::smallint[], $4::bytea[], $5::integer[], $6::integer[], $7::integer[])
     WITH ORDINALITY AS m(queue_id, id, priority, payload, ttl_seconds, visibility_timeout_seconds, max_delivery_attempts, ord)
ORDER BY m.ord`

// claimMessages delivers up to $2 messages of queue $1 in one statement: the best
// candidates in delivery order, locked with SKIP LOCKED so that concurrent claims never
// take the same row. Candidates come from two index scans, each bounded by $2:
//   - waiting: never-delivered messages, from messages_waiting_idx in (priority, seq) order;
//   - returned: delivered messages whose visibility timeout has ended, from
//     messages_delivered_idx (visible_at <= now()), sorted by (priority, seq).
//
// Exhausted candidates are moved to dead_letters in the same statement (never both or
// neither); the others get a new receipt handle, one more attempt and a new visibility
// deadline. Both writes find the locked rows by ctid (a TID scan), which no statistics can
// turn into a scan of the queue; the ctid of a row this statement holds locked cannot
// change under it. The first row always exists and carries how many were moved
// (dead_lettered), so that the caller can go on searching; its message columns are NULL
// when none was delivered.
//
// Each scan locks up to $2 rows and candidates keeps $2 of both: the rows left out stay
// locked until the round commits, and a concurrent claim on the same queue (another
// instance, or more rounds in flight) skips them as it skips every locked row, so that it
// may take a later message, or none, in that moment. Nothing is lost or delivered twice;
// the next dequeue finds them.
const claimMessages = `
WITH waiting AS MATERIALIZED (
    SELECT ctid, priority, seq, delivery_attempts, max_delivery_attempts
    FROM messages
    WHERE queue_id = $1 AND delivery_attempts = 0 AND expires_at > now()
    ORDER BY priority, seq
    LIMIT $2
    FOR UPDATE SKIP LOCKED
), returned AS MATERIALIZED (
    SELECT ctid, priority, seq, delivery_attempts, max_delivery_attempts
    FROM messages
    WHERE queue_id = $1 AND delivery_attempts > 0 AND visible_at <= now() AND expires_at > now()
    ORDER BY priority, seq
    LIMIT $2
    FOR UPDATE SKIP LOCKED
), candidates AS MATERIALIZED (
    SELECT * FROM waiting
    UNION ALL
    SELECT * FROM returned
    ORDER BY priority, seq
    LIMIT $2
), exhausted AS (
    DELETE FROM messages m
    WHERE m.ctid = ANY (ARRAY(SELECT ctid FROM candidates WHERE delivery_attempts >= max_delivery_attempts))
    RETURNING m.queue_id, m.id, m.priority, m.payload, m.delivery_attempts, m.enqueued_at
), moved AS (
    INSERT INTO dead_letters (queue_id, id, priority, payload, delivery_attempts, enqueued_at)
    SELECT queue_id, id, priority, payload, delivery_attempts, enqueued_at FROM exhausted
    RETURNING id
), delivered AS (
    UPDATE messages m
    SET receipt_handle = gen_random_uuid(),
        delivery_attempts = m.delivery_attempts + 1,
        visible_at = now() + make_interval(secs => m.visibility_timeout_seconds)
    WHERE m.ctid = ANY (ARRAY(SELECT ctid FROM candidates WHERE delivery_attempts < max_delivery_attempts))
    RETURNING m.id, m.payload, m.priority, m.receipt_handle, m.delivery_attempts, m.seq
)
SELECT (SELECT count(*) FROM moved) AS dead_lettered,
       d.id, d.payload, d.priority, d.receipt_handle, d.delivery_attempts
FROM (SELECT 1) AS one
LEFT JOIN delivered d ON true
ORDER BY d.priority, d.seq`

// deleteAcknowledged removes the messages whose receipt handle names their current delivery
// and whose visibility timeout is still running, by primary key, and returns the queue, ID
// and receipt handle of each, which name the acknowledgement that removed it.
const deleteAcknowledged = `
DELETE FROM messages m
USING unnest($1::uuid[], $2::uuid[], $3::uuid[]) AS a(queue_id, id, receipt_handle)
WHERE m.queue_id = a.queue_id AND m.id = a.id
  AND m.receipt_handle = a.receipt_handle AND m.visible_at > now()
RETURNING m.queue_id, m.id, m.receipt_handle`

// deleteExpired deletes up to $2 removable messages of queue $1: expired, and either never
// delivered or past the visibility timeout of their last delivery. Waiting messages come
// from messages_waiting_expiry_idx over the expired range only (seq > 0, always true, is the
// part of that index's predicate that reserves it for this statement and selectStats, away
// from the claim); delivered ones from
// messages_delivered_idx over the ended leases only. The victims are chosen once, in a
// materialized CTE: as an IN (subquery) the planner may run the subquery again and delete
// more than the limit.
const deleteExpired = `
WITH expired_waiting AS MATERIALIZED (
    SELECT id FROM messages
    WHERE queue_id = $1 AND delivery_attempts = 0 AND seq > 0 AND expires_at <= now()
    ORDER BY expires_at
    LIMIT $2
    FOR UPDATE SKIP LOCKED
), expired_delivered AS MATERIALIZED (
    SELECT id FROM messages
    WHERE queue_id = $1 AND delivery_attempts > 0 AND visible_at <= now() AND expires_at <= now()
    ORDER BY visible_at
    LIMIT $2
    FOR UPDATE SKIP LOCKED
), doomed AS MATERIALIZED (
    SELECT id FROM expired_waiting
    UNION ALL
    SELECT id FROM expired_delivered
    LIMIT $2
)
DELETE FROM messages m
USING doomed d
WHERE m.queue_id = $1 AND m.id = d.id`

// deleteDeadLetters deletes up to $3 dead letters of queue $1 older than $2 seconds, from
// dead_letters_age_idx, choosing them once as deleteExpired does.
const deleteDeadLetters = `
WITH doomed AS MATERIALIZED (
    SELECT id FROM dead_letters
    WHERE queue_id = $1 AND dead_lettered_at <= now() - make_interval(secs => $2)
    ORDER BY dead_lettered_at
    LIMIT $3
    FOR UPDATE SKIP LOCKED
)
DELETE FROM dead_letters l
USING doomed d
WHERE l.queue_id = $1 AND l.id = d.id`

// selectStats counts the queue's messages and dead letters per priority in one statement
// whose cost grows with the queue's messages, never with the table's, and which counts the
// never-delivered messages, the bulk of a deep queue, from an index alone:
//   - waiting: never-delivered messages per priority, counted by an index-only scan of
//     messages_waiting_idx, expired ones included, since the index cannot tell;
//   - waiting_expired: those of them that expired, from the expired range of
//     messages_waiting_expiry_idx, which the expired-message cleaner keeps short, to
//     subtract;
//   - delivered: in-flight messages and those back from a delivery whose visibility
//     timeout ended, from messages_delivered_idx and their rows;
//   - dead: dead letters, from the queue's part of dead_letters;
//   - head: per priority, the first unexpired never-delivered message in line, whose
//     enqueue time gives the age of the oldest ready message unless a message back from
//     a delivery is older.
//
// Ready counts what a dequeue may consider: not leased and not expired, exhausted
// messages that await their move to dead-letter storage included.
const selectStats = `
WITH waiting_expired AS (
    SELECT priority, count(*) AS n
    FROM messages
    WHERE queue_id = $1 AND expires_at <= now() AND delivery_attempts = 0 AND seq > 0
    GROUP BY priority
), delivered AS (
    SELECT priority,
           count(*) FILTER (WHERE visible_at > now()) AS in_flight,
           count(*) FILTER (WHERE visible_at <= now() AND expires_at > now()) AS returned,
           min(enqueued_at) FILTER (WHERE visible_at <= now() AND expires_at > now()) AS oldest_returned
    FROM messages
    WHERE queue_id = $1 AND delivery_attempts > 0
    GROUP BY priority
), dead AS (
    SELECT priority, count(*) AS n
    FROM dead_letters
    WHERE queue_id = $1
    GROUP BY priority
)
SELECT p.priority,
       waiting.n - coalesce(waiting_expired.n, 0) + coalesce(delivered.returned, 0),
       coalesce(delivered.in_flight, 0),
       coalesce(dead.n, 0),
       coalesce(extract(epoch FROM now() - least(head.enqueued_at, delivered.oldest_returned)), 0)::float8
FROM (VALUES (1::smallint), (2::smallint), (3::smallint)) AS p(priority)
CROSS JOIN LATERAL (
    SELECT count(*) AS n
    FROM messages
    WHERE queue_id = $1 AND priority = p.priority AND delivery_attempts = 0
) AS waiting
LEFT JOIN LATERAL (
    SELECT enqueued_at
    FROM messages
    WHERE queue_id = $1 AND priority = p.priority AND delivery_attempts = 0 AND expires_at > now()
    ORDER BY seq
    LIMIT 1
) AS head ON true
LEFT JOIN waiting_expired USING (priority)
LEFT JOIN delivered USING (priority)
LEFT JOIN dead USING (priority)
ORDER BY p.priority`
