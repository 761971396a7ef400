-- Part 2 of the contract: delayed messages, leases that are extended or released, dead letters
-- that are listed and redriven, deleted queues and idempotency keys.
--
-- A message's state says where it stands in its queue:
--   0 ready:   in line, deliverable unless it expired;
--   1 delayed: held back until visible_at, by its enqueue's delay or a release's;
--   2 leased:  held by a delivery (receipt_handle) until visible_at.
-- A delayed or leased message whose visible_at has passed is deliverable too: the next claim
-- of its queue moves it into line (state 0) at its original place, or, once it has used its
-- attempts, to dead_letters. So the line is an index of its own, and its cost never grows with
-- the messages waiting for a delay or a lease to end, whose own index orders them by when.
ALTER TABLE messages
    ADD COLUMN state smallint NOT NULL DEFAULT 0 CHECK (state BETWEEN 0 AND 2),
    ADD COLUMN first_delivered_at timestamptz,
    -- The SQS endpoint's message attributes, as JSON; NULL when a message has none.
    ADD COLUMN attributes bytea;

UPDATE messages SET state = 2, first_delivered_at = enqueued_at WHERE delivery_attempts > 0;

DROP INDEX messages_waiting_idx;
DROP INDEX messages_delivered_idx;
DROP INDEX messages_waiting_expiry_idx;

-- The line, in delivery order: what a claim takes.
CREATE INDEX messages_ready_idx ON messages (queue_id, priority, seq) WHERE state = 0;

-- Leased and delayed messages that may still be delivered, by priority and the moment they
-- may be: a claim moves the due ones of each priority into line, the best priority first,
-- reading only those whose moment has come. Two indexes, so that the leases every claim
-- writes go into an index as large as the messages in flight, whatever the delayed ones.
CREATE INDEX messages_leased_idx ON messages (queue_id, priority, visible_at)
    WHERE state = 2 AND delivery_attempts < max_delivery_attempts;
CREATE INDEX messages_delayed_idx ON messages (queue_id, priority, visible_at)
    WHERE state = 1 AND delivery_attempts < max_delivery_attempts;

-- Delayed and leased messages that have used their attempts: a claim moves the due ones to
-- dead_letters in bulk.
CREATE INDEX messages_exhausted_idx ON messages (queue_id, visible_at)
    WHERE state <> 0 AND delivery_attempts >= max_delivery_attempts;

-- The expiry of the messages no delivery holds (ready and delayed), for the expired-message
-- cleaner and the statistics, which state seq > 0 (always true) to use it: no plan of the
-- claim can trade messages_ready_idx for it.
CREATE INDEX messages_unleased_expiry_idx ON messages (queue_id, state, expires_at) WHERE state <> 2 AND seq > 0;

ALTER TABLE dead_letters ADD COLUMN attributes bytea;

-- The queues deleted whose data the deleted-queue cleaner has not finished removing, and for
-- an hour after that: while a queue is here, no insert or claim touches its messages.
CREATE TABLE deleted_queues (
    queue_id   uuid        PRIMARY KEY,
    deleted_at timestamptz NOT NULL
);

-- Idempotency keys: the first request with a key on a queue, to replay until expires_at
-- (its creation plus the retention of the instance that stored it).
CREATE TABLE idempotency_keys (
    queue_id    uuid        NOT NULL,
    key         text        COLLATE "C" NOT NULL,
    fingerprint bytea       NOT NULL,
    message_ids uuid[]      NOT NULL,
    created_at  timestamptz NOT NULL,
    expires_at  timestamptz NOT NULL,
    PRIMARY KEY (queue_id, key)
);

-- The idempotency-key cleaner.
CREATE INDEX idempotency_keys_age_idx ON idempotency_keys (queue_id, created_at);

-- The start of each cleaner's last pass, by which the instances on this database make one
-- pass per interval between them.
CREATE TABLE cleaner_passes (
    cleaner    text        PRIMARY KEY,
    started_at timestamptz NOT NULL
);
