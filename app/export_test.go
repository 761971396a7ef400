package app

// EmptiedQueues is how many deleted queues c remembers it saw emptied.
func EmptiedQueues(c *Cleaners) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.emptied)
}
