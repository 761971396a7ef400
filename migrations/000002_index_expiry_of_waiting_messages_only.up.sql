-- The expiry index covered every row version, so each claim (which rewrites its row) added an
-- entry to it, and with missing or stale statistics the planner took it for the claim's scans,
-- reading every message of the queue and sorting them. It now holds waiting (never delivered)
-- messages only, so that a claim no longer writes to it, and it is reserved for the
-- statements that state seq > 0 (always true): the expired-message cleaner and the queue
-- statistics, which count the expired waiting messages through it. No plan of the claim can
-- trade messages_waiting_idx for it. The cleaner finds delivered messages whose lease ended
-- through messages_delivered_idx. (This comment was corrected after release; the schema is
-- unchanged.)
DROP INDEX messages_expiry_idx;
CREATE INDEX messages_waiting_expiry_idx ON messages (queue_id, expires_at) WHERE delivery_attempts = 0 AND seq > 0;
