-- Queues: the source of truth for queue settings. Names sort and compare byte by byte
-- (COLLATE "C"), whatever the database's locale, so that listings page predictably.
CREATE TABLE queues (
    id                          uuid        PRIMARY KEY,
    name                        text        COLLATE "C" NOT NULL,
    visibility_timeout_seconds  integer     NOT NULL CHECK (visibility_timeout_seconds BETWEEN 1 AND 21600),
    max_delivery_attempts       integer     NOT NULL CHECK (max_delivery_attempts BETWEEN 1 AND 100),
    default_message_ttl_seconds integer     NOT NULL CHECK (default_message_ttl_seconds BETWEEN 1 AND 2592000),
    created_at                  timestamptz NOT NULL DEFAULT now(),
    updated_at                  timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT queues_name_key UNIQUE (name)
);

-- Messages. Each row carries the settings it was enqueued with, so that delivery never reads
-- the queues table, and there is deliberately no foreign key to it (an insert would read it).
-- Every key and index leads with queue_id so the table can be distributed by queue.
--
-- seq is the enqueue order shared by all API instances. Its identity sequence keeps the
-- default CACHE 1: a session-local cache would hand later inserts smaller numbers than
-- earlier inserts of another session.
--
-- payload is bytea because a message may contain U+0000, which text cannot hold.
CREATE TABLE messages (
    queue_id                   uuid        NOT NULL,
    id                         uuid        NOT NULL,
    seq                        bigint      NOT NULL GENERATED ALWAYS AS IDENTITY,
    priority                   smallint    NOT NULL CHECK (priority BETWEEN 1 AND 3),
    payload                    bytea       NOT NULL,
    enqueued_at                timestamptz NOT NULL DEFAULT now(),
    expires_at                 timestamptz NOT NULL,
    visible_at                 timestamptz NOT NULL DEFAULT now(),
    receipt_handle             uuid,
    delivery_attempts          integer     NOT NULL DEFAULT 0,
    max_delivery_attempts      integer     NOT NULL,
    visibility_timeout_seconds integer     NOT NULL,
    PRIMARY KEY (queue_id, id)
) WITH (
    -- Rows are short-lived: vacuum after a small share of them died, without throttling,
    -- so that dead tuples do not pile up in the indexes that every dequeue walks.
    autovacuum_vacuum_scale_factor = 0.01,
    autovacuum_vacuum_threshold = 1000,
    autovacuum_vacuum_insert_scale_factor = 0.05,
    autovacuum_analyze_scale_factor = 0.02,
    autovacuum_vacuum_cost_delay = 0
);

-- Dequeue, first deliveries: messages never delivered, in delivery order. A message leaves
-- this index on its first delivery, so in-flight and redelivered messages never slow the scan.
CREATE INDEX messages_waiting_idx ON messages (queue_id, priority, seq) WHERE delivery_attempts = 0;

-- Dequeue, redeliveries: delivered messages by the end of their visibility timeout, so the
-- scan reads only those whose timeout has ended, however many are still in flight.
CREATE INDEX messages_delivered_idx ON messages (queue_id, visible_at) WHERE delivery_attempts > 0;

-- The expired-message cleaner.
CREATE INDEX messages_expiry_idx ON messages (queue_id, expires_at);

-- Dead letters: exhausted messages moved out of their queue, with what a later API needs to
-- list and redrive them.
CREATE TABLE dead_letters (
    queue_id          uuid        NOT NULL,
    id                uuid        NOT NULL,
    priority          smallint    NOT NULL,
    payload           bytea       NOT NULL,
    delivery_attempts integer     NOT NULL,
    enqueued_at       timestamptz NOT NULL,
    dead_lettered_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (queue_id, id)
);

-- The dead-letter cleaner.
CREATE INDEX dead_letters_age_idx ON dead_letters (queue_id, dead_lettered_at);
