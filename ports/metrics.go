package ports

import "time"

// Metrics receives counts of what the core does, for monitoring. The service calls it on
// every request and the cleaners after every statement, so implementations must be cheap
// and safe for concurrent use; they never fail.
type Metrics interface {
	// MessageEnqueued counts a message stored by an enqueue.
	MessageEnqueued()
	// MessageDelivered counts a delivery started by a dequeue; redelivery is true when the
	// message had been delivered before.
	MessageDelivered(redelivery bool)
	// MessagesDeadLettered counts exhausted messages that a dequeue moved to dead-letter
	// storage.
	MessagesDeadLettered(n int)
	// Acknowledged counts an acknowledgement; removed is false when it changed nothing
	// (a stale, late, repeated or unknown receipt handle).
	Acknowledged(removed bool)
	// QueueCacheLookup counts a read of queue details from the QueueCache: a hit, or a
	// miss (no entry, or the cache failed), after which the QueueStore is asked.
	QueueCacheLookup(hit bool)
	// QueueCacheFailed counts a QueueCache call that failed, whatever its kind.
	QueueCacheFailed()
	// ExpiredMessagesRemoved counts messages deleted by the expired-message cleaner.
	ExpiredMessagesRemoved(n int)
	// DeadLettersRemoved counts dead letters deleted by the dead-letter cleaner.
	DeadLettersRemoved(n int)
	// CleanerPassed counts a pass of the named cleaner over every queue, which took
	// duration and ended early with an error when failed.
	CleanerPassed(cleaner string, duration time.Duration, failed bool)
}

// NopMetrics discards every count, for embedders and tests that do not monitor.
type NopMetrics struct{}

var _ Metrics = NopMetrics{}

// MessageEnqueued does nothing.
func (NopMetrics) MessageEnqueued() {}

// MessageDelivered does nothing.
func (NopMetrics) MessageDelivered(bool) {}

// MessagesDeadLettered does nothing.
func (NopMetrics) MessagesDeadLettered(int) {}

// Acknowledged does nothing.
func (NopMetrics) Acknowledged(bool) {}

// QueueCacheLookup does nothing.
func (NopMetrics) QueueCacheLookup(bool) {}

// QueueCacheFailed does nothing.
func (NopMetrics) QueueCacheFailed() {}

// ExpiredMessagesRemoved does nothing.
func (NopMetrics) ExpiredMessagesRemoved(int) {}

// DeadLettersRemoved does nothing.
func (NopMetrics) DeadLettersRemoved(int) {}

// CleanerPassed does nothing.
func (NopMetrics) CleanerPassed(string, time.Duration, bool) {}
