package postgres_test

import (
	"context"
	"io"
	"net"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/matryer/is"

	"github.com/retsu/retsu/adapters/postgres"
	"github.com/retsu/retsu/domain"
	"github.com/retsu/retsu/ports"
)

// freezingProxy forwards TCP connections to PostgreSQL until freeze, which makes every
// connection open at that moment go silent both ways without closing it: a server or network
// that went away without a word. Connections made afterwards work.
type freezingProxy struct {
	listener net.Listener
	target   string
	mu       sync.Mutex
	frozen   []chan struct{}
}

func startFreezingProxy(t *testing.T, target string) *freezingProxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &freezingProxy{listener: l, target: target}
	t.Cleanup(func() { l.Close() })
	go p.accept()
	return p
}

func (p *freezingProxy) accept() {
	for {
		client, err := p.listener.Accept()
		if err != nil {
			return
		}
		server, err := net.Dial("tcp", p.target)
		if err != nil {
			client.Close()
			continue
		}
		frozen := make(chan struct{})
		p.mu.Lock()
		p.frozen = append(p.frozen, frozen)
		p.mu.Unlock()
		go p.pipe(client, server, frozen)
		go p.pipe(server, client, frozen)
	}
}

// pipe copies from to to until either fails, or holds both open and silent once frozen.
func (p *freezingProxy) pipe(from, to net.Conn, frozen chan struct{}) {
	buffer := make([]byte, 32*1024)
	for {
		n, err := from.Read(buffer)
		select {
		case <-frozen:
			io.Copy(io.Discard, from) // swallow what comes, answer nothing
			return
		default:
		}
		if n > 0 {
			if _, err := to.Write(buffer[:n]); err != nil {
				return
			}
		}
		if err != nil {
			from.Close()
			to.Close()
			return
		}
	}
}

func (p *freezingProxy) freeze() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, frozen := range p.frozen {
		close(frozen)
	}
	p.frozen = nil
}

func TestListener_SilentConnection_FoundByPingAndReplaced(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	config, err := pgx.ParseConfig(os.Getenv("RETSU_TEST_DATABASE_URL"))
	is.NoErr(err)
	proxy := startFreezingProxy(t, net.JoinHostPort(config.Host, strconv.Itoa(int(config.Port))))
	config.Host, config.Port = "127.0.0.1", uint16(proxy.listener.Addr().(*net.TCPAddr).Port)
	listener := postgres.NewListener(config, 300*time.Millisecond, time.Second, 50*time.Millisecond)
	defer listener.Close()
	wakeups := make(chan ports.Wakeup, 100)
	defer listener.Subscribe(func(w ports.Wakeup) { wakeups <- w })()
	// next returns the next wakeup of queue id (the zero ID: every waiter) within the time
	// given. The channel is shared with the other tests' stores, whose wakeups it skips.
	next := func(id domain.ID, within time.Duration) (ports.Wakeup, bool) {
		deadline := time.After(within)
		for {
			select {
			case w := <-wakeups:
				if w.QueueID == id {
					return w, true
				}
			case <-deadline:
				return ports.Wakeup{}, false
			}
		}
	}
	_, ok := next(domain.ID{}, 2*time.Second)
	is.True(ok) // the first LISTEN wakes every waiter

	proxy.freeze()
	_, ok = next(domain.ID{}, 5*time.Second)
	is.True(ok) // the silent connection is found out, and the new LISTEN wakes every waiter once: some notifications were lost
	_, ok = next(domain.ID{}, 100*time.Millisecond)
	is.True(!ok) // only once

	queueID := newID()
	_, err = pool.Exec(context.Background(), "SELECT pg_notify('retsu_wakeups', $1)", queueID.String()+" 0 1")
	is.NoErr(err)
	w, ok := next(queueID, 2*time.Second)
	is.True(ok)                  // the new connection hears notifications
	is.Equal(w.QueueID, queueID) // of the queue that notified
}

func TestListener_Retries_BackOffAndAreCapped(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	retries := postgres.ListenRetries(8)
	is.Equal(retries[0], 250*time.Millisecond) // the first retry comes soon
	for i := 1; i < len(retries); i++ {
		is.True(retries[i] >= retries[i-1]) // each waits at least as long as the one before
	}
	is.Equal(retries[len(retries)-1], 8*time.Second) // up to a cap
}

// Every notification wakes every listening backend, which reads it in a transaction of its
// own: a listener holds its connection only while someone subscribes.
func TestListener_ListensOnlyWhileSubscribed(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	config, err := pgx.ParseConfig(os.Getenv("RETSU_TEST_DATABASE_URL"))
	is.NoErr(err)
	name := "retsu-listener-test-" + newID().String()[:8]
	config.RuntimeParams["application_name"] = name
	listener := postgres.NewListener(config, 10*time.Second, time.Second, 50*time.Millisecond)
	defer listener.Close()
	// backends waits up to 5 s for the listener's connections to number want, and returns
	// how many there are.
	backends := func(want int) int {
		deadline := time.Now().Add(5 * time.Second)
		for {
			var n int
			is.NoErr(pool.QueryRow(context.Background(),
				"SELECT count(*) FROM pg_stat_activity WHERE application_name = $1", name).Scan(&n))
			if n == want || time.Now().After(deadline) {
				return n
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	// subscribe subscribes a channel of the wakeups of queue id and of the zero ID.
	subscribe := func(id domain.ID) (chan ports.Wakeup, func()) {
		c := make(chan ports.Wakeup, 100)
		cancel := listener.Subscribe(func(w ports.Wakeup) {
			if w.QueueID == id || w.QueueID.IsZero() {
				select {
				case c <- w:
				default:
				}
			}
		})
		return c, cancel
	}
	// hears reports whether c gets the wakeup of a notification for id within 2 s.
	hears := func(c chan ports.Wakeup, id domain.ID) bool {
		_, err := pool.Exec(context.Background(), "SELECT pg_notify('retsu_wakeups', $1)", id.String()+" 0 1")
		is.NoErr(err)
		deadline := time.After(2 * time.Second)
		for {
			select {
			case w := <-c:
				if w.QueueID == id {
					return true
				}
			case <-deadline:
				return false
			}
		}
	}

	is.Equal(backends(0), 0) // nobody subscribes: no connection
	queueID := newID()
	first, cancelFirst := subscribe(queueID)
	is.Equal(backends(1), 1)       // the first subscriber starts it
	is.True(hears(first, queueID)) // and hears what commits after Subscribe returns
	second, cancelSecond := subscribe(queueID)
	cancelFirst()
	is.True(hears(second, queueID)) // a subscriber that stays keeps it listening
	is.Equal(backends(1), 1)
	cancelSecond()
	cancelSecond()           // cancelling twice is harmless
	is.Equal(backends(0), 0) // the last one to leave closes the connection

	third, cancelThird := subscribe(queueID)
	defer cancelThird()
	is.Equal(backends(1), 1)
	select {
	case w := <-third:
		is.True(w.QueueID.IsZero()) // a new LISTEN wakes every waiter: what came before it was not heard
	case <-time.After(2 * time.Second):
		t.Fatal("no wakeup after the new LISTEN")
	}
	is.True(hears(third, queueID))
}
