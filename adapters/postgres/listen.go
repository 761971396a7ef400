package postgres

import (
	"context"
	"math/rand/v2"
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
// serves (docs/workers.md). It costs one connection per instance, held by the listener while
// anyone subscribes: every notification wakes every listening backend, which reads it in a
// transaction of its own, so an instance that nobody waits on does not listen (the core
// subscribes only while dequeues wait: see app's waitRoom).
const wakeupChannel = "retsu_wakeups"

// listenTiming is how the listener watches its connection and connects again.
type listenTiming struct {
	// ping is how long the connection may be quiet before the listener pings it: a
	// connection whose server or network went away without a word (a host that lost power,
	// a dropped route, a firewall that forgot the flow) delivers no notification and no
	// error, and would keep every waiter on this instance deaf until its long poll ends.
	ping time.Duration
	// pingTimeout bounds the ping's answer; without one the connection counts as dead.
	pingTimeout time.Duration
	// retryMin and retryMax bound the pause before connecting again, which doubles after
	// each failed attempt and starts again from retryMin once a LISTEN is in place, so that
	// the instances do not all hammer a PostgreSQL that is restarting.
	retryMin, retryMax time.Duration
}

// defaultListenTiming finds a dead connection within 15 s, well inside the longest long
// poll (20 s).
var defaultListenTiming = listenTiming{ping: 10 * time.Second, pingTimeout: 5 * time.Second,
	retryMin: 250 * time.Millisecond, retryMax: 8 * time.Second}

// nextRetry returns the pause after one of retry, doubled and capped at retryMax.
func (t listenTiming) nextRetry(retry time.Duration) time.Duration {
	return min(max(retry*2, t.retryMin), t.retryMax)
}

// listener holds one connection that LISTENs on wakeupChannel while anyone subscribes, and
// hands each notification to the subscribers, one call at a time. The first subscriber
// starts it; the last one to cancel stops it, and closes its connection.
type listener struct {
	config *pgx.ConnConfig
	timing listenTiming

	mu          sync.Mutex
	subscribers map[int]func(ports.Wakeup)
	nextID      int
	// stop ends the listening goroutine; nil while none runs (one that was stopped may still
	// be closing its connection: runs counts them, for close).
	stop   context.CancelFunc
	runs   sync.WaitGroup
	closed bool
	// listening is closed once the running goroutine's first LISTEN is in place.
	listening chan struct{}
}

// firstListenWait bounds how long Subscribe waits for the listener's first LISTEN.
const firstListenWait = 2 * time.Second

func newListener(config *pgx.ConnConfig) *listener {
	return &listener{config: config, timing: defaultListenTiming, subscribers: map[int]func(ports.Wakeup){}}
}

// Subscribe calls notify with every wakeup from now on, of this instance and of every other
// on the database, until cancel is called. Subscribe waits up to firstListenWait for the
// listener's LISTEN (the first Subscribe starts the listener, and the last cancel stops it),
// so that the wakeups of what commits after it returns arrive. After the listener
// (re)connects, notify gets a wakeup with a zero QueueID: some may have been lost while it
// was not listening.
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
		l.stop, l.listening = stop, make(chan struct{})
		l.runs.Add(1)
		go l.run(ctx, l.listening)
	}
	listening := l.listening
	l.mu.Unlock()
	if listening != nil {
		select {
		case <-listening:
		case <-time.After(firstListenWait):
		}
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			delete(l.subscribers, id)
			if len(l.subscribers) == 0 && l.stop != nil {
				l.stop() // its goroutine closes the connection on its own
				l.stop, l.listening = nil, nil
			}
		})
	}
}

// run listens until ctx ends, connecting again after every failure, after a pause that
// grows while the attempts keep failing (with jitter, so that instances spread out). It
// closes listening once its first LISTEN is in place.
func (l *listener) run(ctx context.Context, listening chan struct{}) {
	defer l.runs.Done()
	var listened sync.Once
	retry := time.Duration(0)
	for ctx.Err() == nil {
		if l.listen(ctx, func() { listened.Do(func() { close(listening) }) }) {
			retry = 0
		}
		retry = l.timing.nextRetry(retry)
		select {
		case <-ctx.Done():
		case <-time.After(retry/2 + rand.N(retry/2+1)):
		}
	}
}

// listen connects, LISTENs, and hands over notifications until the connection fails, stops
// answering pings, or ctx ends, calling listened once its LISTEN is in place. It reports
// whether it was.
func (l *listener) listen(ctx context.Context, listened func()) bool {
	conn, err := pgx.ConnectConfig(ctx, l.config.Copy())
	if err != nil {
		return false
	}
	defer func() {
		closing, cancel := context.WithTimeout(context.Background(), l.timing.pingTimeout)
		defer cancel()
		_ = conn.Close(closing) // a dead connection has nothing to say goodbye to
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+wakeupChannel); err != nil {
		return false
	}
	listened()
	// Whatever was notified before this LISTEN is lost (while disconnected, or before the
	// dead connection was found out): every waiter looks again, once.
	l.send(ports.Wakeup{})
	for {
		quiet, cancel := context.WithTimeout(ctx, l.timing.ping)
		n, err := conn.WaitForNotification(quiet)
		cancel()
		switch {
		case err == nil:
			if w, ok := parseWakeup(n.Payload); ok {
				l.send(w)
			}
		case ctx.Err() != nil:
			return true
		case quiet.Err() != nil:
			// Quiet for a while: a live connection answers a ping; notifications that
			// arrive meanwhile are kept by pgx for the next WaitForNotification.
			if !l.answers(ctx, conn) {
				return true
			}
		default:
			return true
		}
	}
}

// answers pings conn and reports whether it answered within the ping timeout.
func (l *listener) answers(ctx context.Context, conn *pgx.Conn) bool {
	ping, cancel := context.WithTimeout(ctx, l.timing.pingTimeout)
	defer cancel()
	return conn.Ping(ping) == nil
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
	if l.stop != nil {
		l.stop()
		l.stop, l.listening = nil, nil
	}
	l.mu.Unlock()
	l.runs.Wait()
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
