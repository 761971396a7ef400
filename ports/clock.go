package ports

import "time"

// Clock tells the time to the adapters that keep their own time, such as the memory stores.
// The PostgreSQL adapter uses the database's clock instead.
type Clock interface {
	Now() time.Time
}
