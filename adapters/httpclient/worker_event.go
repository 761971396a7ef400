package httpclient

import (
	"context"
	"log/slog"
	"time"

	"github.com/retsu/retsu/domain"
)

// WorkerEvent is something a Worker did, for WorkerOptions.OnEvent and the log. The fields
// that do not apply to its Kind are zero.
type WorkerEvent struct {
	Kind WorkerEventKind
	// MessageID and DeliveryAttempts name the delivery of an event about one message.
	MessageID        domain.ID
	DeliveryAttempts int
	// Count is how many messages a poll brought or a batch acknowledged.
	Count int
	// Delay is the delay of a release.
	Delay time.Duration
	// Duration is how long a successful handler ran.
	Duration time.Duration
	// Err is the failure of the event, or, for a release and a give-up, the handler's
	// error.
	Err error
}

// WorkerEventKind says what a WorkerEvent reports.
type WorkerEventKind string

// The kinds of WorkerEvent.
const (
	// EventPolled: a poll brought Count messages (0 when its wait ended empty).
	EventPolled WorkerEventKind = "polled"
	// EventPollFailed: a poll failed with Err; the worker polls again after a backoff,
	// unless Err is final, in which case Run returns it.
	EventPollFailed WorkerEventKind = "poll_failed"
	// EventHandled: the handler returned nil after Duration; an acknowledgement follows.
	EventHandled WorkerEventKind = "handled"
	// EventAcknowledged: a batch acknowledgement removed Count messages.
	EventAcknowledged WorkerEventKind = "acknowledged"
	// EventAckLost: the acknowledgement of a message removed nothing, as its lease had
	// ended: it will be delivered again.
	EventAckLost WorkerEventKind = "ack_lost"
	// EventAckFailed: a batch of Count acknowledgements failed with Err; its messages come
	// back when their leases end.
	EventAckFailed WorkerEventKind = "ack_failed"
	// EventAckUnknown: the outcome of an acknowledgement stayed unknown (its answer was
	// lost, also when sent again with the same receipts) for MessageID, or for a batch of
	// Count: the message is removed, or will be delivered again when its lease ends.
	EventAckUnknown WorkerEventKind = "ack_unknown"
	// EventExtended: the lease of a running message was extended.
	EventExtended WorkerEventKind = "extended"
	// EventExtendFailed: an extension failed with Err; the next one may still succeed.
	EventExtendFailed WorkerEventKind = "extend_failed"
	// EventLeaseLost: the message's lease was lost (it ended, or the message was purged or
	// its queue deleted); its handler's context was cancelled.
	EventLeaseLost WorkerEventKind = "lease_lost"
	// EventLeaseLimit: the handler ran past MaxLease; its context was cancelled with
	// ErrMaxLease, and the message will be delivered again.
	EventLeaseLimit WorkerEventKind = "lease_limit"
	// EventReleased: the handler failed with Err, and the message was released to come
	// back after Delay.
	EventReleased WorkerEventKind = "released"
	// EventReleaseFailed: a release failed with Err; the message comes back when its lease
	// ends.
	EventReleaseFailed WorkerEventKind = "release_failed"
	// EventGivenBack: the worker was stopping and released the message without delay,
	// before its handler started or after it was cut short (Err is then its error).
	EventGivenBack WorkerEventKind = "given_back"
	// EventGaveUp: the handler gave up with Err (see ErrGiveUp), OnGiveUp kept the message,
	// and it is acknowledged.
	EventGaveUp WorkerEventKind = "gave_up"
	// EventGiveUpFailed: OnGiveUp failed with Err; the message is released instead.
	EventGiveUpFailed WorkerEventKind = "give_up_failed"
)

// levels are the log levels of the kinds that are not logged at debug level.
var levels = map[WorkerEventKind]slog.Level{
	EventPollFailed:    slog.LevelWarn,
	EventAckLost:       slog.LevelWarn,
	EventAckFailed:     slog.LevelWarn,
	EventAckUnknown:    slog.LevelWarn,
	EventExtendFailed:  slog.LevelWarn,
	EventLeaseLost:     slog.LevelWarn,
	EventLeaseLimit:    slog.LevelWarn,
	EventReleaseFailed: slog.LevelWarn,
	EventGiveUpFailed:  slog.LevelWarn,
	EventReleased:      slog.LevelInfo,
	EventGivenBack:     slog.LevelInfo,
	EventGaveUp:        slog.LevelInfo,
}

// emit tells OnEvent and the log about e.
func (w *Worker) emit(e WorkerEvent) {
	if w.o.OnEvent != nil {
		w.o.OnEvent(e)
	}
	level, ok := levels[e.Kind]
	if !ok {
		level = slog.LevelDebug
	}
	ctx := context.Background()
	if !w.o.Logger.Enabled(ctx, level) {
		return
	}
	attrs := []slog.Attr{slog.String("event", string(e.Kind)), slog.String("queue_id", w.queueID.String())}
	if !e.MessageID.IsZero() {
		attrs = append(attrs, slog.String("message_id", e.MessageID.String()), slog.Int("delivery_attempts", e.DeliveryAttempts))
	}
	if e.Kind == EventPolled || e.Kind == EventAcknowledged || e.Kind == EventAckFailed || e.Kind == EventAckUnknown {
		attrs = append(attrs, slog.Int("count", e.Count))
	}
	if e.Kind == EventReleased {
		attrs = append(attrs, slog.Duration("delay", e.Delay))
	}
	if e.Duration > 0 {
		attrs = append(attrs, slog.Duration("duration", e.Duration))
	}
	if e.Err != nil {
		attrs = append(attrs, slog.String("err", e.Err.Error()))
	}
	w.o.Logger.LogAttrs(ctx, level, "retsu worker", attrs...)
}
