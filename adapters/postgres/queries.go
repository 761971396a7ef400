package postgres

// The statements of the adapter. Each names the index it relies on.
//
// Time: every statement reads the clock once, when it runs, through a CTE or scalar subquery
// on clock_timestamp() ("now" below), and never uses now(), the start of the transaction: a
// round's statements run after the round waited for its turn, and a lease must start when
// its claim is made, not before (CONTRACT.md, and issue 10's point 4). A scalar subquery is
// evaluated once, after the statement got its locks, and can bound an index scan, which a
// bare volatile function cannot.
//
// Message states (migrations/000003): 0 ready (in line), 1 delayed, 2 leased.

const queueColumns = `id, name, visibility_timeout_seconds, max_delivery_attempts, default_message_ttl_seconds`

// insertQueue relies on queues_name_key to refuse a second queue with the same name, also
// when two inserts race.
const insertQueue = `
INSERT INTO queues (` + queueColumns + `)
VALUES ($1, $2, $3, $4, $5)`

// selectQueue uses the primary key.
const selectQueue = `SELECT ` + queueColumns + ` FROM queues WHERE id = $1`

// selectQueues walks queues_name_key in name order from the cursor $2; $1, when not NULL,
// keeps the one queue with that name.
const selectQueues = `
SELECT ` + queueColumns + `
FROM queues
WHERE ($1::text IS NULL OR name = $1) AND name > $2
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

// deleteQueue removes the queue by primary key, which frees its name, and records the
// deletion in deleted_queues in the same step; no row comes back when there was no queue.
// A notification wakes the queue's waiting dequeues on every instance, which then find it
// gone.
const deleteQueue = `
WITH gone AS (
    DELETE FROM queues WHERE id = $1 RETURNING id
), recorded AS (
    INSERT INTO deleted_queues (queue_id, deleted_at)
    SELECT id, clock_timestamp() FROM gone
    RETURNING queue_id
), notified AS (
    SELECT pg_notify('` + wakeupChannel + `', queue_id::text || ' 0 0') FROM recorded
)
SELECT queue_id FROM recorded WHERE (SELECT count(*) FROM notified) >= 0`

// selectDeletedQueues lists a page of the recorded deletions after queue $1, by primary key,
// with their age in seconds.
const selectDeletedQueues = `
SELECT queue_id, extract(epoch FROM clock_timestamp() - deleted_at)::float8
FROM deleted_queues
WHERE queue_id > $1
ORDER BY queue_id
LIMIT $2`

// forgetDeletedQueue drops a recorded deletion, by primary key.
const forgetDeletedQueue = `DELETE FROM deleted_queues WHERE queue_id = $1`

// selectIdempotencyKey reads a key's unexpired record, by primary key, for a request that
// would replay it but is not stored (see MessageStore.Replay).
const selectIdempotencyKey = `
SELECT fingerprint, message_ids FROM idempotency_keys
WHERE queue_id = $1 AND key = $2 AND expires_at > clock_timestamp()`

// insertMessages stores the enqueues of a round, given as parallel arrays of requests ($1–$4)
// and of messages ($5–$13, each with the position of its request), in array order, so that
// seq follows the order of the round and of each batch. Nothing of a deleted queue
// (deleted_queues) is stored. A request with an idempotency key takes its key's advisory
// lock (pg_try_advisory_xact_lock: a request of another round that holds it is "in use"),
// then either finds the key's unexpired record (idempotency_keys, by primary key) to replay
// or refuse, or stores its record, which expires after the request's retention (in $4),
// replacing an expired one, and its messages together. Lifetimes and delays count from the
// statement's clock; the settings come with each message, so the queues table is not read.
// One notification per queue and kind tells every instance's waiting dequeues (listen.go)
// how many messages are deliverable now, and when the first delayed one will be.
//
// It returns a row for each request that it did not store: 'gone' (a deleted queue),
// 'found' with the record's fingerprint and IDs, or 'in_use' (another round holds the key, or
// committed it since this statement's snapshot).
const insertMessages = `
WITH clock AS MATERIALIZED (SELECT clock_timestamp() AS now),
request AS MATERIALIZED (
    SELECT r.queue_id, r.key, r.fingerprint, r.retention_seconds, r.position, d.queue_id IS NOT NULL AS gone,
           r.key IS NOT NULL AND d.queue_id IS NULL
               AND pg_try_advisory_xact_lock(hashtextextended(r.key, 0) # hashtextextended(r.queue_id::text, 1)) AS locked
    FROM unnest($1::uuid[], $2::text[], $3::bytea[], $4::float8[])
         WITH ORDINALITY AS r(queue_id, key, fingerprint, retention_seconds, position)
    LEFT JOIN deleted_queues d ON d.queue_id = r.queue_id
), message AS MATERIALIZED (
    SELECT *
    FROM unnest($5::bigint[], $6::uuid[], $7::smallint[], $8::bytea[], $9::bytea[], $10::integer[], $11::integer[],
                $12::integer[], $13::integer[])
         WITH ORDINALITY AS m(request, id, priority, payload, attributes, ttl_seconds, delay_seconds,
                              visibility_timeout_seconds, max_delivery_attempts, ord)
), recorded AS MATERIALIZED (
    -- By primary key: with the expiry in this join's condition, the planner may choose
    -- idempotency_keys_expiry_idx and read every live key of the queue for each request.
    SELECT r.position, k.fingerprint, k.message_ids, k.expires_at
    FROM request r
    JOIN idempotency_keys k ON k.queue_id = r.queue_id AND k.key = r.key
    WHERE r.locked
), found AS MATERIALIZED (
    SELECT position, fingerprint, message_ids FROM recorded WHERE expires_at > (SELECT now FROM clock)
), new_key AS (
    INSERT INTO idempotency_keys (queue_id, key, fingerprint, message_ids, created_at, expires_at)
    SELECT r.queue_id, r.key, r.fingerprint, ids.ids, c.now, c.now + make_interval(secs => r.retention_seconds)
    FROM request r
    JOIN (SELECT request, array_agg(id ORDER BY ord) AS ids FROM message GROUP BY request) AS ids ON ids.request = r.position
    CROSS JOIN clock c
    WHERE r.locked AND NOT EXISTS (SELECT FROM found f WHERE f.position = r.position)
    ON CONFLICT (queue_id, key) DO UPDATE
        SET fingerprint = excluded.fingerprint, message_ids = excluded.message_ids,
            created_at = excluded.created_at, expires_at = excluded.expires_at
        WHERE idempotency_keys.expires_at <= excluded.created_at
    RETURNING queue_id, key
), storing AS MATERIALIZED (
    SELECT r.position, r.queue_id
    FROM request r
    WHERE NOT r.gone AND (r.key IS NULL OR EXISTS (SELECT FROM new_key k WHERE k.queue_id = r.queue_id AND k.key = r.key))
), stored AS (
    INSERT INTO messages (queue_id, id, priority, payload, attributes, enqueued_at, expires_at, visible_at, state,
                          visibility_timeout_seconds, max_delivery_attempts)
    SELECT s.queue_id, m.id, m.priority, m.payload, m.attributes, c.now,
           c.now + make_interval(secs => m.ttl_seconds), c.now + make_interval(secs => m.delay_seconds),
           CASE WHEN m.delay_seconds = 0 THEN 0 ELSE 1 END,
           m.visibility_timeout_seconds, m.max_delivery_attempts
    FROM message m
    JOIN storing s ON s.position = m.request
    CROSS JOIN clock c
    ORDER BY m.ord
    RETURNING queue_id, state, visible_at
), notified AS (
    SELECT pg_notify('` + wakeupChannel + `', queue_id::text || ' ' ||
               round(extract(epoch FROM at - (SELECT now FROM clock)) * 1000)::bigint || ' ' ||
               CASE WHEN state = 0 THEN n ELSE 1 END)
    FROM (SELECT queue_id, state, count(*) AS n, min(visible_at) AS at FROM stored GROUP BY queue_id, state) AS w
)
SELECT r.position, CASE WHEN r.gone THEN 'gone' WHEN f.position IS NOT NULL THEN 'found' ELSE 'in_use' END,
       f.fingerprint, f.message_ids
FROM request r
LEFT JOIN found f ON f.position = r.position
WHERE (SELECT count(*) FROM notified) >= 0
  AND NOT EXISTS (SELECT FROM storing s WHERE s.position = r.position)
ORDER BY r.position`

// claimMessages delivers up to $2 messages of queue $1 in one statement, and moves the
// queue's messages whose moment came: into line, or to dead_letters once they used their
// attempts. Its work is bounded by $2, duePerClaim and exhaustedPerClaim, whatever the queue
// holds:
//   - ready: the first $2 unexpired messages of the line, from messages_ready_idx in
//     (priority, seq) order; expires_at is a key of that index, so that expired messages at
//     the head of the line are passed over in the index, never fetched;
//   - due: up to duePerClaim leased and as many delayed messages with attempts left whose
//     moment came, the best priority first and in each the earliest moment first, from
//     messages_leased_idx and messages_delayed_idx (range scans, one per priority, that stop
//     once enough are found);
//   - candidates: the best $2 of the ready and the unexpired due messages by (priority,
//     seq), which are delivered: a message whose lease ended goes out at its original place
//     in line. The other unexpired due ones join the line (state 0), so that the next claims
//     take them in order; the line is in strict delivery order whenever no more than
//     duePerClaim of each kind came due since the last claim;
//   - exhausted: up to exhaustedPerClaim messages that used their attempts and whose lease
//     or delay ended, from messages_exhausted_idx, which move to dead_letters in the same
//     statement (never both or neither);
//   - expired: the due and exhausted messages read on the way whose lifetime ended are
//     deleted, as the expired-message cleaner would, so that no later claim reads them again.
//
// Every row is locked with SKIP LOCKED, so that concurrent claims never take the same row;
// rows read but left out stay locked until the round commits, and a concurrent claim skips
// them as it skips every locked row, taking a later message, or none, in that moment. Writes
// find the locked rows by ctid (a TID scan), which no statistics can turn into a scan of the
// queue; the ctid of a row this statement holds locked cannot change under it. Nothing is
// delivered for a deleted queue, and the first row says so (gone).
//
// With $3, the first row also carries in how many milliseconds the queue's first delayed or
// leased message may be delivered, from messages_leased_idx and messages_delayed_idx, for a
// dequeue that is about to wait. A notification tells every instance when the leases just
// given may end.
//
// The first row always exists and carries gone, how many were moved to dead_letters
// (dead_lettered) and deleted as expired (expired), and next; its message columns are NULL
// when none was delivered.
const claimMessages = `
WITH clock AS MATERIALIZED (SELECT clock_timestamp() AS now),
live AS MATERIALIZED (
    SELECT NOT EXISTS (SELECT FROM deleted_queues WHERE queue_id = $1) AS yes
), ready AS MATERIALIZED (
    SELECT ctid, priority, seq
    FROM messages
    WHERE queue_id = $1 AND state = 0 AND expires_at > (SELECT now FROM clock) AND (SELECT yes FROM live)
    ORDER BY priority, seq
    LIMIT $2
    FOR UPDATE SKIP LOCKED
), due_leased AS MATERIALIZED (
    SELECT d.ctid, d.priority, d.seq, d.expires_at
    FROM (VALUES (1::smallint), (2::smallint), (3::smallint)) AS p(priority)
    CROSS JOIN LATERAL (
        SELECT ctid, priority, seq, expires_at
        FROM messages
        WHERE queue_id = $1 AND state = 2 AND delivery_attempts < max_delivery_attempts
          AND priority = p.priority AND visible_at <= (SELECT now FROM clock) AND (SELECT yes FROM live)
        ORDER BY visible_at
        LIMIT ` + duePerClaim + `
        FOR UPDATE SKIP LOCKED
    ) AS d
    LIMIT ` + duePerClaim + `
), due_delayed AS MATERIALIZED (
    SELECT d.ctid, d.priority, d.seq, d.expires_at
    FROM (VALUES (1::smallint), (2::smallint), (3::smallint)) AS p(priority)
    CROSS JOIN LATERAL (
        SELECT ctid, priority, seq, expires_at
        FROM messages
        WHERE queue_id = $1 AND state = 1 AND delivery_attempts < max_delivery_attempts
          AND priority = p.priority AND visible_at <= (SELECT now FROM clock) AND (SELECT yes FROM live)
        ORDER BY visible_at
        LIMIT ` + duePerClaim + `
        FOR UPDATE SKIP LOCKED
    ) AS d
    LIMIT ` + duePerClaim + `
), due AS MATERIALIZED (
    SELECT * FROM due_leased WHERE expires_at > (SELECT now FROM clock)
    UNION ALL
    SELECT * FROM due_delayed WHERE expires_at > (SELECT now FROM clock)
), candidates AS MATERIALIZED (
    SELECT ctid FROM (
        SELECT ctid, priority, seq FROM ready
        UNION ALL
        SELECT ctid, priority, seq FROM due
        ORDER BY priority, seq
        LIMIT $2
    ) AS best
), promoted AS (
    UPDATE messages m
    SET state = 0
    WHERE m.ctid = ANY (ARRAY(SELECT ctid FROM due EXCEPT SELECT ctid FROM candidates))
), exhausted_rows AS MATERIALIZED (
    SELECT ctid, expires_at FROM messages
    WHERE queue_id = $1 AND state <> 0 AND delivery_attempts >= max_delivery_attempts
      AND visible_at <= (SELECT now FROM clock) AND (SELECT yes FROM live)
    ORDER BY visible_at
    LIMIT ` + exhaustedPerClaim + `
    FOR UPDATE SKIP LOCKED
), exhausted AS (
    DELETE FROM messages m
    WHERE m.ctid = ANY (ARRAY(SELECT ctid FROM exhausted_rows WHERE expires_at > (SELECT now FROM clock)))
    RETURNING m.queue_id, m.id, m.priority, m.payload, m.attributes, m.delivery_attempts, m.enqueued_at
), moved AS (
    INSERT INTO dead_letters (queue_id, id, priority, payload, attributes, delivery_attempts, enqueued_at, dead_lettered_at)
    SELECT queue_id, id, priority, payload, attributes, delivery_attempts, enqueued_at, (SELECT now FROM clock) FROM exhausted
    RETURNING id
), expired AS (
    DELETE FROM messages m
    WHERE m.ctid = ANY (ARRAY(
        SELECT ctid FROM due_leased WHERE expires_at <= (SELECT now FROM clock)
        UNION ALL
        SELECT ctid FROM due_delayed WHERE expires_at <= (SELECT now FROM clock)
        UNION ALL
        SELECT ctid FROM exhausted_rows WHERE expires_at <= (SELECT now FROM clock)))
    RETURNING 1
), delivered AS (
    UPDATE messages m
    SET state = 2,
        receipt_handle = gen_random_uuid(),
        delivery_attempts = m.delivery_attempts + 1,
        visible_at = (SELECT now FROM clock) + make_interval(secs => m.visibility_timeout_seconds),
        first_delivered_at = coalesce(m.first_delivered_at, (SELECT now FROM clock))
    WHERE m.ctid = ANY (ARRAY(SELECT ctid FROM candidates))
    RETURNING m.id, m.payload, m.priority, m.receipt_handle, m.delivery_attempts, m.seq, m.attributes,
              m.enqueued_at, m.first_delivered_at, m.visible_at
), notified AS (
    SELECT pg_notify('` + wakeupChannel + `', $1::text || ' ' ||
               round(extract(epoch FROM min(visible_at) - (SELECT now FROM clock)) * 1000)::bigint || ' ' || count(*))
    FROM delivered
    HAVING count(*) > 0
), next AS MATERIALIZED (
    SELECT round(extract(epoch FROM least(
        (SELECT visible_at FROM messages WHERE queue_id = $1 AND state = 2 AND delivery_attempts < max_delivery_attempts
            AND priority = 1 ORDER BY visible_at LIMIT 1),
        (SELECT visible_at FROM messages WHERE queue_id = $1 AND state = 2 AND delivery_attempts < max_delivery_attempts
            AND priority = 2 ORDER BY visible_at LIMIT 1),
        (SELECT visible_at FROM messages WHERE queue_id = $1 AND state = 2 AND delivery_attempts < max_delivery_attempts
            AND priority = 3 ORDER BY visible_at LIMIT 1),
        (SELECT visible_at FROM messages WHERE queue_id = $1 AND state = 1 AND delivery_attempts < max_delivery_attempts
            AND priority = 1 ORDER BY visible_at LIMIT 1),
        (SELECT visible_at FROM messages WHERE queue_id = $1 AND state = 1 AND delivery_attempts < max_delivery_attempts
            AND priority = 2 ORDER BY visible_at LIMIT 1),
        (SELECT visible_at FROM messages WHERE queue_id = $1 AND state = 1 AND delivery_attempts < max_delivery_attempts
            AND priority = 3 ORDER BY visible_at LIMIT 1)
    ) - (SELECT now FROM clock)) * 1000)::bigint AS ms
    WHERE $3
)
SELECT NOT (SELECT yes FROM live) AS gone,
       (SELECT count(*) FROM moved) AS dead_lettered,
       (SELECT count(*) FROM expired) AS expired,
       (SELECT ms FROM next) AS next_ms,
       (SELECT count(*) FROM notified) AS done,
       d.id, d.payload, d.priority, d.receipt_handle, d.delivery_attempts, d.attributes, d.enqueued_at, d.first_delivered_at
FROM (SELECT 1) AS one
LEFT JOIN delivered d ON true
ORDER BY d.priority, d.seq`

// duePerClaim bounds the leased and the delayed messages whose moment came that one claim
// reads: up to this many of each kind join the line, or go out, per claim.
const duePerClaim = "1000"

// exhaustedPerClaim bounds the exhausted messages one claim moves to dead_letters: a backlog
// of them (a consumer fleet that crashed on a queue allowing one attempt) costs each claim
// at most this many moves, and a few claims empty it.
const exhaustedPerClaim = "1000"

// lockRoundSlot takes, for its transaction, the advisory lock of one round slot
// (advisoryLockClass, roundLockKey), and returns how long it waited for it, in seconds:
// every instance on the database takes the same lock for its slot of the same number, so
// that rounds run one per slot across all of them, as they do within one instance. A slot
// that had to wait, or whose last round ended with requests waiting, takes the lock before
// it gathers its next round (gate.go), so that the requests that arrived meanwhile go with
// it: several instances then send about as few, as large rounds as one instance would. An
// idle database grants the lock at once. Only rounds take these locks, and always first, so
// no wait for them can be part of a deadlock.
const lockRoundSlot = `
WITH locked AS MATERIALIZED (SELECT pg_advisory_xact_lock(` + roundLockArguments + `))
SELECT extract(epoch FROM clock_timestamp() - statement_timestamp())::float8 FROM locked`

// roundLockArguments are the two keys of a round slot's lock from advisoryLockClass ($1) and
// the slot's number ($2): the second is a hash of the schema Retsu's tables are in and the
// slot, so that Retsu deployments in different schemas of one database (or tests, each in a
// schema of its own) do not take turns with each other's rounds.
const roundLockArguments = `$1::int4, hashtext(coalesce(current_schema(), '') || '/' || $2::int4)`

// deleteAcknowledged removes the messages whose receipt handle names their current lease,
// by primary key, and returns the queue, ID and receipt handle of each, which name the
// acknowledgement that removed it. The lease is checked against the clock of each row's
// check, after any wait for its lock.
const deleteAcknowledged = `
DELETE FROM messages m
USING unnest($1::uuid[], $2::uuid[], $3::uuid[]) AS a(queue_id, id, receipt_handle)
WHERE m.queue_id = a.queue_id AND m.id = a.id
  AND m.state = 2 AND m.receipt_handle = a.receipt_handle AND m.visible_at > clock_timestamp()
RETURNING m.queue_id, m.id, m.receipt_handle`

// extendLeases makes each lease named by a receipt end the given seconds from now, by
// primary key, and returns the receipts that held their lease. An extension may shorten a
// lease, so it notifies every instance of the soonest new end in each queue.
const extendLeases = `
WITH extended AS (
    UPDATE messages m
    SET visible_at = clock_timestamp() + make_interval(secs => a.seconds)
    FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::integer[]) AS a(queue_id, id, receipt_handle, seconds)
    WHERE m.queue_id = a.queue_id AND m.id = a.id
      AND m.state = 2 AND m.receipt_handle = a.receipt_handle AND m.visible_at > clock_timestamp()
    RETURNING m.queue_id, m.id, m.receipt_handle, a.seconds
), notified AS (
    SELECT pg_notify('` + wakeupChannel + `', queue_id::text || ' ' || min(seconds) * 1000 || ' 1')
    FROM extended GROUP BY queue_id
)
SELECT queue_id, id, receipt_handle FROM extended WHERE (SELECT count(*) FROM notified) >= 0`

// releaseLeases ends each lease named by a receipt now, by primary key: the message waits
// the given delay (state 1), or rejoins the line at once (state 0) when there is none and it
// has attempts left; the handle is dropped. It returns the receipts that held their lease,
// and notifies every instance when each queue's released messages are deliverable.
const releaseLeases = `
WITH released AS (
    UPDATE messages m
    SET state = CASE WHEN a.seconds = 0 AND m.delivery_attempts < m.max_delivery_attempts THEN 0 ELSE 1 END,
        receipt_handle = NULL,
        visible_at = clock_timestamp() + make_interval(secs => a.seconds)
    FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::integer[]) AS a(queue_id, id, receipt_handle, seconds)
    WHERE m.queue_id = a.queue_id AND m.id = a.id
      AND m.state = 2 AND m.receipt_handle = a.receipt_handle AND m.visible_at > clock_timestamp()
    RETURNING m.queue_id, m.id, a.receipt_handle, a.seconds
), notified AS (
    SELECT pg_notify('` + wakeupChannel + `', queue_id::text || ' ' || seconds * 1000 || ' ' || count(*))
    FROM released GROUP BY queue_id, seconds
)
SELECT queue_id, id, receipt_handle FROM released WHERE (SELECT count(*) FROM notified) >= 0`

// undeliverLeases takes back deliveries that never reached their consumer, by primary key:
// the attempt does not count and the message rejoins the line at its place.
const undeliverLeases = `
WITH undelivered AS (
    UPDATE messages m
    SET state = 0,
        receipt_handle = NULL,
        delivery_attempts = m.delivery_attempts - 1,
        visible_at = clock_timestamp(),
        first_delivered_at = CASE WHEN m.delivery_attempts = 1 THEN NULL ELSE m.first_delivered_at END
    FROM unnest($1::uuid[], $2::uuid[], $3::uuid[]) AS a(queue_id, id, receipt_handle)
    WHERE m.queue_id = a.queue_id AND m.id = a.id
      AND m.state = 2 AND m.receipt_handle = a.receipt_handle AND m.visible_at > clock_timestamp()
    RETURNING m.queue_id
)
SELECT pg_notify('` + wakeupChannel + `', queue_id::text || ' 0 ' || count(*)) FROM undelivered GROUP BY queue_id`

// purgeMessages deletes up to $4 messages of queue $1 enqueued up to seq $2 whose ID follows
// $3, in ID order along the primary key, and returns how many it deleted and the last ID it
// read: a purge pass repeats it from there, so that no batch walks the entries of the
// batches before it. Rows that a round holds are skipped, and taken by a later pass.
const purgeMessages = `
WITH doomed AS MATERIALIZED (
    SELECT ctid, id FROM messages
    WHERE queue_id = $1 AND id > $3 AND seq <= $2
    ORDER BY id
    LIMIT $4
    FOR UPDATE SKIP LOCKED
), purged AS (
    DELETE FROM messages m WHERE m.ctid = ANY (ARRAY(SELECT ctid FROM doomed)) RETURNING 1
)
SELECT (SELECT count(*) FROM purged), (SELECT id FROM doomed ORDER BY id DESC LIMIT 1)`

// purgeLeft says whether queue $1 still holds a message enqueued up to seq $2: one that a
// round held while the purge passed it.
const purgeLeft = `SELECT EXISTS (SELECT FROM messages WHERE queue_id = $1 AND seq <= $2)`

// selectLastSeq is the highest enqueue order given out so far: a purge removes the messages
// up to it.
const selectLastSeq = `SELECT last_value FROM messages_seq_seq`

// deleteExpired deletes up to $2 removable messages of queue $1: expired, and not held by a
// delivery (ready, delayed, or leased with its lease ended). Unleased ones come from the
// expired range of messages_unleased_expiry_idx (seq > 0, always true, is the part of that
// index's predicate that reserves it for this statement and selectStats), one range scan per
// state in expiry order: with state IN (0, 1) instead, a plan made from statistics that
// estimate about one row for it (an empty or never-analyzed table, or one of leased messages)
// puts the list in a filter, and without an equality on state, the index's middle column,
// expires_at bounds nothing, so the scan reads every unleased message of the queue
// (TestDeleteExpired_PlannedBeforeABacklog_ReadsOnlyTheExpiredRanges). The ORDER BY is the
// index's own order, and deletes the oldest first; leased ones from
// messages_leased_idx and messages_exhausted_idx over the ended leases only. The victims are
// chosen once, in a materialized CTE: as an IN (subquery) the planner may run the subquery
// again and delete more than the limit.
const deleteExpired = `
WITH clock AS MATERIALIZED (SELECT clock_timestamp() AS now),
expired_unleased AS MATERIALIZED (
    SELECT d.ctid
    FROM (VALUES (0::smallint), (1::smallint)) AS s(state)
    CROSS JOIN LATERAL (
        SELECT ctid FROM messages
        WHERE queue_id = $1 AND state = s.state AND state <> 2 AND seq > 0 AND expires_at <= (SELECT now FROM clock)
        ORDER BY expires_at
        LIMIT $2
        FOR UPDATE SKIP LOCKED
    ) AS d
    LIMIT $2
), expired_leased AS MATERIALIZED (
    SELECT d.ctid
    FROM (VALUES (1::smallint), (2::smallint), (3::smallint)) AS p(priority)
    CROSS JOIN LATERAL (
        SELECT ctid FROM messages
        WHERE queue_id = $1 AND state = 2 AND delivery_attempts < max_delivery_attempts AND priority = p.priority
          AND visible_at <= (SELECT now FROM clock) AND expires_at <= (SELECT now FROM clock)
        ORDER BY visible_at
        LIMIT $2
        FOR UPDATE SKIP LOCKED
    ) AS d
    UNION ALL
    SELECT ctid FROM (
        SELECT ctid FROM messages
        WHERE queue_id = $1 AND state <> 0 AND delivery_attempts >= max_delivery_attempts
          AND visible_at <= (SELECT now FROM clock) AND state = 2 AND expires_at <= (SELECT now FROM clock)
        ORDER BY visible_at
        LIMIT $2
        FOR UPDATE SKIP LOCKED
    ) AS e
), doomed AS MATERIALIZED (
    SELECT ctid FROM expired_unleased
    UNION ALL
    SELECT ctid FROM expired_leased
    LIMIT $2
)
DELETE FROM messages m
WHERE m.ctid = ANY (ARRAY(SELECT ctid FROM doomed))`

// deleteDeadLetters deletes up to $3 dead letters of queue $1 older than $2 seconds, from
// the old range of dead_letters_age_idx, choosing them once as deleteExpired does and
// deleting them by ctid. The cutoff is computed once in a CTE: a volatile clock_timestamp()
// in the condition would be a filter over every dead letter of the queue, not the scan's
// bound.
const deleteDeadLetters = `
WITH cutoff AS MATERIALIZED (SELECT clock_timestamp() - make_interval(secs => $2) AS at),
doomed AS MATERIALIZED (
    SELECT ctid FROM dead_letters
    WHERE queue_id = $1 AND dead_lettered_at <= (SELECT at FROM cutoff)
    ORDER BY dead_lettered_at
    LIMIT $3
    FOR UPDATE SKIP LOCKED
)
DELETE FROM dead_letters
WHERE ctid = ANY (ARRAY(SELECT ctid FROM doomed))`

// deleteIdempotencyKeys deletes up to $2 idempotency keys of queue $1 whose own expiry
// (expires_at, fixed by the retention of the request that stored them) has passed: the
// expired range of idempotency_keys_expiry_idx, the oldest first, chosen once in a
// materialized CTE and deleted by ctid, so that the statement reads no more of the index
// than the batch. The clock is the one of insertMessages and selectIdempotencyKey (a key
// no request would replay any more), read once in a CTE: a volatile clock_timestamp() in the
// condition would be a filter over the whole of the queue's index range, not its bound.
const deleteIdempotencyKeys = `
WITH clock AS MATERIALIZED (SELECT clock_timestamp() AS now),
doomed AS MATERIALIZED (
    SELECT ctid FROM idempotency_keys
    WHERE queue_id = $1 AND expires_at <= (SELECT now FROM clock)
    ORDER BY expires_at
    LIMIT $2
    FOR UPDATE SKIP LOCKED
)
DELETE FROM idempotency_keys
WHERE ctid = ANY (ARRAY(SELECT ctid FROM doomed))`

// The statements of DeleteQueueData, one per table of a deleted queue's data in the order it
// empties them: each deletes up to $3 rows of queue $1 after key $2 in its primary key's
// order (keyset: it starts where the batch before it ended, reading none of the index
// entries that batch left dead), and returns the last key it deleted as text, with how many
// it deleted and how many it chose (fewer only when another transaction deleted some
// first). A row that another transaction locks (a round racing the deletion) fails the
// batch at once (NOWAIT) rather than being skipped: a skipped row would need a scan from
// the table's first key to be found again, through every index entry the batches left dead
// (more than a second after a million), where a failed batch is simply tried again from its
// own key by the next pass.
var deleteQueueData = [...]string{
	`WITH doomed AS MATERIALIZED (
    SELECT ctid, id FROM messages WHERE queue_id = $1 AND id > $2::text::uuid ORDER BY id LIMIT $3 FOR UPDATE NOWAIT
), gone AS (
    DELETE FROM messages WHERE ctid = ANY (ARRAY(SELECT ctid FROM doomed)) RETURNING 1
)
SELECT (SELECT count(*) FROM gone), (SELECT count(*) FROM doomed), coalesce((SELECT id::text FROM doomed ORDER BY id DESC LIMIT 1), $2)`,
	`WITH doomed AS MATERIALIZED (
    SELECT ctid, id FROM dead_letters WHERE queue_id = $1 AND id > $2::text::uuid ORDER BY id LIMIT $3 FOR UPDATE NOWAIT
), gone AS (
    DELETE FROM dead_letters WHERE ctid = ANY (ARRAY(SELECT ctid FROM doomed)) RETURNING 1
)
SELECT (SELECT count(*) FROM gone), (SELECT count(*) FROM doomed), coalesce((SELECT id::text FROM doomed ORDER BY id DESC LIMIT 1), $2)`,
	`WITH doomed AS MATERIALIZED (
    SELECT ctid, key FROM idempotency_keys WHERE queue_id = $1 AND key > $2::text ORDER BY key LIMIT $3 FOR UPDATE NOWAIT
), gone AS (
    DELETE FROM idempotency_keys WHERE ctid = ANY (ARRAY(SELECT ctid FROM doomed)) RETURNING 1
)
SELECT (SELECT count(*) FROM gone), (SELECT count(*) FROM doomed), coalesce((SELECT max(key) FROM doomed), $2)`,
}

// queueDataFirstKeys are the keys before every key of each table of deleteQueueData.
var queueDataFirstKeys = [...]string{"00000000-0000-0000-0000-000000000000", "00000000-0000-0000-0000-000000000000", ""}

// claimCleanerPass records the start of cleaner $1's pass, by primary key, unless another
// started less than $2 seconds ago; a row comes back when this call got the pass.
const claimCleanerPass = `
INSERT INTO cleaner_passes (cleaner, started_at) VALUES ($1, clock_timestamp())
ON CONFLICT (cleaner) DO UPDATE SET started_at = excluded.started_at
    WHERE cleaner_passes.started_at <= excluded.started_at - make_interval(secs => $2)`

// deadLetterColumns are the columns of a dead letter, as scanDeadLetter reads them.
const deadLetterColumns = `queue_id, id, priority, payload, attributes, delivery_attempts, enqueued_at, dead_lettered_at`

// selectDeadLetters reads a page of queue $1's dead letters after ID $2 (NULL: from the
// first) in ID order, from the primary key.
const selectDeadLetters = `
SELECT ` + deadLetterColumns + `
FROM dead_letters
WHERE queue_id = $1 AND ($2::uuid IS NULL OR id > $2)
ORDER BY id
LIMIT $3`

// selectDeadLetter reads one dead letter by primary key.
const selectDeadLetter = `SELECT ` + deadLetterColumns + ` FROM dead_letters WHERE queue_id = $1 AND id = $2`

// deleteDeadLetter deletes one dead letter by primary key.
const deleteDeadLetter = `DELETE FROM dead_letters WHERE queue_id = $1 AND id = $2`

// deleteAllDeadLetters deletes up to $2 of queue $1's dead letters, from the primary key; a
// caller repeats it until it comes back short.
const deleteAllDeadLetters = `
WITH doomed AS MATERIALIZED (
    SELECT ctid FROM dead_letters WHERE queue_id = $1 LIMIT $2 FOR UPDATE SKIP LOCKED
)
DELETE FROM dead_letters l WHERE l.ctid = ANY (ARRAY(SELECT ctid FROM doomed))`

// redriveMoves moves the dead letters chosen by the CTE "chosen" (their IDs, and ord, the
// order they go in) back into queue $1, in one statement, so that each is in exactly one table
// at every moment: deleted from dead_letters and inserted into messages together, in that
// order, which is their new enqueue order at the end of their priority's line, with no
// attempt, the queue's current settings ($3: visibility timeout, $4: attempts) and a lifetime
// of $5 seconds from now. Nothing moves for a deleted queue. A notification wakes the
// queue's waiting dequeues.
const redriveMoves = `
), taken AS (
    DELETE FROM dead_letters l
    USING chosen c
    WHERE l.queue_id = $1 AND l.id = c.id AND NOT EXISTS (SELECT FROM deleted_queues WHERE queue_id = $1)
    RETURNING l.id, l.priority, l.payload, l.attributes, c.ord
), redriven AS (
    INSERT INTO messages (queue_id, id, priority, payload, attributes, enqueued_at, expires_at, visible_at, state,
                          visibility_timeout_seconds, max_delivery_attempts)
    SELECT $1, t.id, t.priority, t.payload, t.attributes, c.now, c.now + make_interval(secs => $5), c.now, 0, $3, $4
    FROM taken t CROSS JOIN clock c
    ORDER BY t.ord
    RETURNING id
), notified AS (
    SELECT pg_notify('` + wakeupChannel + `', $1::text || ' 0 ' || count(*)) FROM redriven HAVING count(*) > 0
)
SELECT t.id FROM taken t
WHERE (SELECT count(*) FROM notified) >= 0 AND (SELECT count(*) FROM redriven) >= 0
ORDER BY t.ord`

// redriveByIDs redrives the dead letters of queue $1 named by $2, in that order, each found
// by primary key (see redriveMoves).
const redriveByIDs = `
WITH clock AS MATERIALIZED (SELECT clock_timestamp() AS now),
chosen AS MATERIALIZED (
    SELECT l.id, given.ord
    FROM unnest($2::uuid[]) WITH ORDINALITY AS given(id, ord)
    JOIN dead_letters l ON l.queue_id = $1 AND l.id = given.id
    ORDER BY given.ord
    FOR UPDATE OF l SKIP LOCKED
` + redriveMoves

// redriveOldest redrives the $2 dead letters of queue $1 with the lowest IDs, the oldest
// enqueued, in ID order, from the primary key (see redriveMoves).
const redriveOldest = `
WITH clock AS MATERIALIZED (SELECT clock_timestamp() AS now),
chosen AS MATERIALIZED (
    SELECT id, row_number() OVER (ORDER BY id) AS ord
    FROM (SELECT id FROM dead_letters WHERE queue_id = $1 ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED) AS l
` + redriveMoves

// selectStats counts the queue's messages and dead letters per priority in one statement
// whose cost grows with the queue's messages, never with the table's, and which counts the
// line, the bulk of a deep queue, from an index alone:
//   - line: messages in line per priority, by an index-only scan of messages_ready_idx,
//     expired ones included, since the index cannot tell;
//   - line_expired: those of them that expired, from the expired range of
//     messages_unleased_expiry_idx, which the expired-message cleaner keeps short, to
//     subtract;
//   - scheduled: delayed and leased messages, from messages_leased_idx,
//     messages_delayed_idx and messages_exhausted_idx and their rows: in flight while a lease runs, delayed while a
//     delay runs, and ready once either ended (exhausted ones awaiting their move to
//     dead_letters included);
//   - dead: dead letters, from the queue's part of dead_letters;
//   - head: per priority, the first unexpired message in line, whose enqueue time gives the
//     age of the oldest ready message unless a due one is older.
const selectStats = `
WITH clock AS MATERIALIZED (SELECT clock_timestamp() AS now),
line_expired AS (
    SELECT priority, count(*) AS n
    FROM messages
    WHERE queue_id = $1 AND state = 0 AND state <> 2 AND seq > 0 AND expires_at <= (SELECT now FROM clock)
    GROUP BY priority
), scheduled AS (
    SELECT priority,
           count(*) FILTER (WHERE state = 2 AND visible_at > c.now) AS in_flight,
           count(*) FILTER (WHERE state = 1 AND visible_at > c.now AND expires_at > c.now) AS delayed,
           count(*) FILTER (WHERE visible_at <= c.now AND expires_at > c.now) AS due,
           min(enqueued_at) FILTER (WHERE visible_at <= c.now AND expires_at > c.now) AS oldest_due
    FROM (
        SELECT priority, state, visible_at, expires_at, enqueued_at FROM messages
        WHERE queue_id = $1 AND state = 2 AND delivery_attempts < max_delivery_attempts
        UNION ALL
        SELECT priority, state, visible_at, expires_at, enqueued_at FROM messages
        WHERE queue_id = $1 AND state = 1 AND delivery_attempts < max_delivery_attempts
        UNION ALL
        SELECT priority, state, visible_at, expires_at, enqueued_at FROM messages
        WHERE queue_id = $1 AND state <> 0 AND delivery_attempts >= max_delivery_attempts
    ) AS s
    CROSS JOIN clock c
    GROUP BY priority
), dead AS (
    SELECT priority, count(*) AS n
    FROM dead_letters
    WHERE queue_id = $1
    GROUP BY priority
)
SELECT p.priority,
       line.n - coalesce(line_expired.n, 0) + coalesce(scheduled.due, 0),
       coalesce(scheduled.in_flight, 0),
       coalesce(scheduled.delayed, 0),
       coalesce(dead.n, 0),
       coalesce(extract(epoch FROM (SELECT now FROM clock) - least(head.enqueued_at, scheduled.oldest_due)), 0)::float8
FROM (VALUES (1::smallint), (2::smallint), (3::smallint)) AS p(priority)
CROSS JOIN LATERAL (
    SELECT count(*) AS n
    FROM messages
    WHERE queue_id = $1 AND priority = p.priority AND state = 0
) AS line
LEFT JOIN LATERAL (
    SELECT enqueued_at
    FROM messages
    WHERE queue_id = $1 AND priority = p.priority AND state = 0 AND expires_at > (SELECT now FROM clock)
    ORDER BY seq
    LIMIT 1
) AS head ON true
LEFT JOIN line_expired USING (priority)
LEFT JOIN scheduled USING (priority)
LEFT JOIN dead USING (priority)
ORDER BY p.priority`

// claimRoundLeader renews the round leader's lease ($2 seconds from now) when instance $1
// holds it, or gives it to $1 when there is none or it lapsed, and returns the address of
// the leader, this instance or another (forward.go).
const claimRoundLeader = `
WITH claimed AS (
    INSERT INTO round_leader (one, address, expires_at)
    VALUES (true, $1, clock_timestamp() + make_interval(secs => $2))
    ON CONFLICT (one) DO UPDATE SET address = excluded.address, expires_at = excluded.expires_at
        WHERE round_leader.address = excluded.address OR round_leader.expires_at < clock_timestamp()
    RETURNING address)
SELECT address FROM claimed
UNION ALL
SELECT address FROM round_leader WHERE NOT EXISTS (SELECT FROM claimed) AND expires_at > clock_timestamp()`

// releaseRoundLeader gives up the round leader's lease of instance $1, if it holds it.
const releaseRoundLeader = `DELETE FROM round_leader WHERE address = $1`
