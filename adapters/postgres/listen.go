package postgres

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/retsu/retsu/domain"
	"github.com/retsu/retsu/ports"
)

// wakeupChannel is the LISTEN/NOTIFY channel of wakeups. The statements that make messages
// deliverable now or later (insertMessages, claimMessages, releaseLeases, undeliverLeases,
// the redrives) notify it in their transaction, so that every instance hears of a change
// once it is committed, and never of one that rolled back. A payload is
// "<queue ID> <milliseconds from the commit> <count>" (see ports.Wakeup).
//
// PostgreSQL rather than Redis carries them: a notification is part of the transaction that
// made the change, it needs no second service, and Redis may be down while PostgreSQL
// serves (docs/workers.md). It costs one connection per instance, held by the listener.
const wakeupChannel = "retsu_wakeups"

// listenRetry is how long the listener waits before it connects again after losing its
// connection.
const listenRetry = time.Second

// listener holds one connection that LISTENs on wakeupChannel while anyone subscribes, and
// hands each notification to the subscribers, one call at a time.
type listener struct {
	config *pgx.ConnConfig

	mu          sync.Mutex
	subscribers map[int]func(ports.Wakeup)
	nextID      int
	// stop ends the listening goroutine, which closes done; both are nil while it does not
	// run.
	stop   context.CancelFunc
	done   chan struct{}
	closed bool
	// listening is closed once the first LISTEN is in place.
	listening chan struct{}
	listened  sync.Once
}

// firstListenWait bounds how long Subscribe waits for the listener's first LISTEN.
const firstListenWait = 2 * time.Second

func newListener(config *pgx.ConnConfig) *listener {
	return &listener{config: config, subscribers: map[int]func(ports.Wakeup){}, listening: make(chan struct{})}
}

// Subscribe calls notify with every wakeup from now on, of this instance and of every other
// on the database, until cancel is called. The first Subscribe starts the listener and waits
// up to firstListenWait for its LISTEN, so that the wakeups of what commits after it returns
// arrive. After the listener (re)connects, notify gets a wakeup with a zero QueueID: some may
// have been lost while it was not listening.
func (s *MessageStore) Subscribe(notify func(ports.Wakeup)) (cancel func()) {
	return s.listener.subscribe(notify)
}

func (l *listener) subscribe(notify func(ports.Wakeup)) func() {
	l.mu.Lock()
	id := l.nextID
	l.nextID++
	l.subscribers[id] = notify
	if l.stop == nil && !l.closed {
		ctx, stop := context.WithCancel(context.Background())
		l.stop, l.done = stop, make(chan struct{})
		go l.run(ctx, l.done)
	}
	l.mu.Unlock()
	select {
	case <-l.listening:
	case <-time.After(firstListenWait):
	}
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		delete(l.subscribers, id)
	}
}

// run listens until ctx ends, connecting again after every failure.
func (l *listener) run(ctx context.Context, done chan struct{}) {
	defer close(done)
	for ctx.Err() == nil {
		l.listen(ctx)
		select {
		case <-ctx.Done():
		case <-time.After(listenRetry):
		}
	}
}

// listen connects, LISTENs, and hands over notifications until the connection fails or ctx
// ends.
func (l *listener) listen(ctx context.Context) {
	conn, err := pgx.ConnectConfig(ctx, l.config.Copy())
	if err != nil {
		return
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "LISTEN "+wakeupChannel); err != nil {
		return
	}
	l.listened.Do(func() { close(l.listening) })
	// Whatever was notified before this LISTEN is lost: every waiter looks again.
	l.send(ports.Wakeup{})
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return
		}
		if w, ok := parseWakeup(n.Payload); ok {
			l.send(w)
		}
	}
}

// send hands w to every subscriber.
func (l *listener) send(w ports.Wakeup) {
	l.mu.Lock()
	notify := make([]func(ports.Wakeup), 0, len(l.subscribers))
	for _, f := range l.subscribers {
		notify = append(notify, f)
	}
	l.mu.Unlock()
	for _, f := range notify {
		f(w)
	}
}

// close stops listening, for good.
func (l *listener) close() {
	l.mu.Lock()
	l.closed = true
	stop, done := l.stop, l.done
	l.mu.Unlock()
	if stop != nil {
		stop()
		<-done
	}
}

// parseWakeup reads a payload of wakeupChannel; ok is false for anything else.
func parseWakeup(payload string) (ports.Wakeup, bool) {
	fields := strings.Fields(payload)
	if len(fields) != 3 {
		return ports.Wakeup{}, false
	}
	queueID, err := domain.ParseID(fields[0])
	if err != nil {
		return ports.Wakeup{}, false
	}
	milliseconds, err := strconv.ParseInt(fields[1], 10, 64)
	if err != nil {
		return ports.Wakeup{}, false
	}
	count, err := strconv.Atoi(fields[2])
	if err != nil || count < 0 {
		return ports.Wakeup{}, false
	}
	return ports.Wakeup{QueueID: queueID, After: time.Duration(milliseconds) * time.Millisecond, Count: count}, true
}
