-- The instance that carries the rounds of the others while they contend (round forwarding,
-- adapters/postgres/forward.go): the peer address it takes forwarded rounds at, and the end
-- of its lease, which it renews while it runs. One row at most.
CREATE TABLE round_leader (
    one        boolean     PRIMARY KEY DEFAULT true CHECK (one),
    address    text        NOT NULL,
    expires_at timestamptz NOT NULL
);
