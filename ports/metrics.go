package ports

import "time"

// Metrics receives counts of what the core does, for monitoring. The service calls it on
// every request and the cleaners after every statement, so implementations must be cheap
// and safe for concurrent use; they never fail.
type Metrics interface {
	// MessagesEnqueued counts the messages stored by an enqueue.
	MessagesEnqueued(n int)
	// EnqueueReplayed counts an enqueue that repeated an earlier one with its idempotency
	// key and stored nothing.
	EnqueueReplayed()
	// MessageDelivered counts a delivery started by a dequeue; redelivery is true when the
	// message had been delivered before.
	MessageDelivered(redelivery bool)
	// MessagesDeadLettered counts exhausted messages that a dequeue moved to dead-letter
	// storage.
	MessagesDeadLettered(n int)
	// Acknowledged counts an acknowledgement; removed is false when it changed nothing
	// (a stale, late, repeated or unknown receipt handle).
	Acknowledged(removed bool)
	// LeaseExtended and LeaseReleased count an extend and a release; held is false when the
	// receipt had lost the lease and nothing changed.
	LeaseExtended(held bool)
	LeaseReleased(held bool)
	// MessagesUndelivered counts deliveries taken back because their requester went away.
	MessagesUndelivered(n int)
	// MessagesRedriven counts dead letters sent back to their queue.
	MessagesRedriven(n int)
	// WaitingDequeues moves the count of dequeues that wait for a message by delta.
	WaitingDequeues(delta int)
	// QueueCacheLookup counts a read of queue details from the QueueCache: a hit, or a
	// miss (no entry, or the cache failed), after which the QueueStore is asked.
	QueueCacheLookup(hit bool)
	// QueueCacheFailed counts a QueueCache call that failed, whatever its kind.
	QueueCacheFailed()
	// ExpiredMessagesRemoved counts messages deleted by the expired-message cleaner.
	ExpiredMessagesRemoved(n int)
	// DeadLettersRemoved counts dead letters deleted by the dead-letter cleaner.
	DeadLettersRemoved(n int)
	// RowsRemoved counts what the other cleaners deleted, by cleaner: idempotency keys past
	// their retention, and the data of deleted queues.
	RowsRemoved(cleaner string, n int)
	// CleanerPassed counts a pass of the named cleaner over every queue, which took
	// duration and ended early with an error when failed.
	CleanerPassed(cleaner string, duration time.Duration, failed bool)
}

// NopMetrics discards every count, for embedders and tests that do not monitor.
type NopMetrics struct{}

var _ Metrics = NopMetrics{}

// MessagesEnqueued does nothing.
func (NopMetrics) MessagesEnqueued(int) {}

// EnqueueReplayed does nothing.
func (NopMetrics) EnqueueReplayed() {}

// MessageDelivered does nothing.
func (NopMetrics) MessageDelivered(bool) {}

// MessagesDeadLettered does nothing.
func (NopMetrics) MessagesDeadLettered(int) {}

// Acknowledged does nothing.
func (NopMetrics) Acknowledged(bool) {}

// LeaseExtended does nothing.
func (NopMetrics) LeaseExtended(bool) {}

// LeaseReleased does nothing.
func (NopMetrics) LeaseReleased(bool) {}

// MessagesUndelivered does nothing.
func (NopMetrics) MessagesUndelivered(int) {}

// MessagesRedriven does nothing.
func (NopMetrics) MessagesRedriven(int) {}

// WaitingDequeues does nothing.
func (NopMetrics) WaitingDequeues(int) {}

// QueueCacheLookup does nothing.
func (NopMetrics) QueueCacheLookup(bool) {}

// QueueCacheFailed does nothing.
func (NopMetrics) QueueCacheFailed() {}

// ExpiredMessagesRemoved does nothing.
func (NopMetrics) ExpiredMessagesRemoved(int) {}

// DeadLettersRemoved does nothing.
func (NopMetrics) DeadLettersRemoved(int) {}

// RowsRemoved does nothing.
func (NopMetrics) RowsRemoved(string, int) {}

// CleanerPassed does nothing.
func (NopMetrics) CleanerPassed(string, time.Duration, bool) {}
