-- Copied unchanged from the shared benchmark kit that came with Retsu's performance issue, for
-- scripts/bench/ceiling.sh.
DROP TABLE IF EXISTS messages;
-- Retsu-like message table for the raw-SQL ceiling (not Retsu's real schema:
-- just the columns its contract implies, with the dequeue index it needs).
CREATE TABLE messages (
  id                         uuid        NOT NULL PRIMARY KEY,
  queue_id                   uuid        NOT NULL,
  seq                        bigint      GENERATED ALWAYS AS IDENTITY,
  priority                   smallint    NOT NULL,
  payload                    text        NOT NULL,
  enqueued_at                timestamptz NOT NULL DEFAULT now(),
  expires_at                 timestamptz NOT NULL,
  visible_at                 timestamptz NOT NULL DEFAULT now(),
  receipt_handle             uuid,
  delivery_attempts          integer     NOT NULL DEFAULT 0,
  max_delivery_attempts      integer     NOT NULL,
  visibility_timeout_seconds integer     NOT NULL
);
CREATE INDEX messages_dequeue_idx ON messages (queue_id, priority DESC, seq);
