package redis_test

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/matryer/is"
	"github.com/redis/rueidis"

	"github.com/retsu/retsu/adapters/redis"
	"github.com/retsu/retsu/domain"
	"github.com/retsu/retsu/ports"
	"github.com/retsu/retsu/ports/porttest"
)

var (
	// redisURL names the test database, from RETSU_TEST_REDIS_URL.
	redisURL string
	// shared is a client of the test database for the tests that need no client of their own.
	shared rueidis.Client
)

// TestMain connects to the Redis named by RETSU_TEST_REDIS_URL and fails when it is missing:
// these tests are the proof that the cache keeps its contract on a real Redis, so they never
// skip.
func TestMain(m *testing.M) {
	redisURL = os.Getenv("RETSU_TEST_REDIS_URL")
	if redisURL == "" {
		fmt.Fprintln(os.Stderr, "RETSU_TEST_REDIS_URL is not set: start the services with `make test` (or scripts/services.sh up and its env)")
		os.Exit(1)
	}
	var err error
	shared, err = redis.Connect(context.Background(), redisURL, redis.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "RETSU_TEST_REDIS_URL:", err)
		os.Exit(1)
	}
	code := m.Run()
	shared.Close()
	os.Exit(code)
}

func TestQueueCache(t *testing.T) {
	t.Parallel()
	cache := redis.NewQueueCache(shared, redis.Options{})
	porttest.TestQueueCache(t, func(*testing.T) ports.QueueCache { return cache })
}

func TestQueueCache_Store_WritesVersionedJSONThatExpires(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	const prefix = "retsu-test:encoding:"
	cache := redis.NewQueueCache(shared, redis.Options{KeyPrefix: prefix, EntryTTL: 42 * time.Second})
	id := newID()
	q := domain.Queue{ID: id, Name: "orders.eu-1", Settings: domain.Settings{
		VisibilityTimeout: 45 * time.Second, MaxDeliveryAttempts: 7, DefaultMessageTTL: 24 * time.Hour,
	}}

	is.NoErr(cache.Store(t.Context(), q))

	key := prefix + id.String()
	value, err := shared.Do(t.Context(), shared.B().Get().Key(key).Build()).ToString()
	is.NoErr(err)
	want := `{"v":1,"id":"` + id.String() + `","name":"orders.eu-1","visibility_timeout_seconds":45,"max_delivery_attempts":7,"default_message_ttl_seconds":86400}`
	is.Equal(value, want) // the value is the versioned JSON that other versions of Retsu read
	ttl, err := shared.Do(t.Context(), shared.B().Pttl().Key(key).Build()).AsInt64()
	is.NoErr(err)
	is.True(ttl > 40_000 && ttl <= 42_000) // the key expires after EntryTTL
}

func TestQueueCache_OddValue_IsAMiss(t *testing.T) {
	t.Parallel()
	const prefix = "retsu-test:odd:"
	cache := redis.NewQueueCache(shared, redis.Options{KeyPrefix: prefix})
	valid := func(id domain.ID) string {
		return `{"v":1,"id":"` + id.String() + `","name":"orders","visibility_timeout_seconds":30,"max_delivery_attempts":5,"default_message_ttl_seconds":604800}`
	}
	tests := []struct {
		name  string
		value func(id domain.ID) string
		found bool
	}{
		{"valid entry", valid, true},
		{"uppercase ID", func(id domain.ID) string {
			return strings.Replace(valid(id), id.String(), strings.ToUpper(id.String()), 1)
		}, true},
		{"empty", func(domain.ID) string { return "" }, false},
		{"not JSON", func(domain.ID) string { return "orders" }, false},
		{"JSON null", func(domain.ID) string { return "null" }, false},
		{"JSON array", func(domain.ID) string { return "[1]" }, false},
		{"truncated", func(id domain.ID) string { return valid(id)[:40] }, false},
		{"data after the object", func(id domain.ID) string { return valid(id) + "{}" }, false},
		{"other version", func(id domain.ID) string { return strings.Replace(valid(id), `"v":1`, `"v":2`, 1) }, false},
		{"no version", func(id domain.ID) string { return strings.Replace(valid(id), `"v":1,`, ``, 1) }, false},
		{"unknown field", func(id domain.ID) string { return strings.Replace(valid(id), `"v":1,`, `"v":1,"priority":3,`, 1) }, false},
		{"ID of another queue", func(domain.ID) string { return valid(newID()) }, false},
		{"ID not canonical", func(id domain.ID) string {
			return strings.Replace(valid(id), id.String(), strings.ReplaceAll(id.String(), "-", ""), 1)
		}, false},
		{"invalid name", func(id domain.ID) string { return strings.Replace(valid(id), `"orders"`, `"Orders!"`, 1) }, false},
		{"no visibility timeout", func(id domain.ID) string {
			return strings.Replace(valid(id), `"visibility_timeout_seconds":30,`, ``, 1)
		}, false},
		{"visibility timeout too long", func(id domain.ID) string {
			return strings.Replace(valid(id), `"visibility_timeout_seconds":30`, `"visibility_timeout_seconds":21601`, 1)
		}, false},
		{"visibility timeout as a string", func(id domain.ID) string {
			return strings.Replace(valid(id), `"visibility_timeout_seconds":30`, `"visibility_timeout_seconds":"30"`, 1)
		}, false},
		{"no delivery attempts", func(id domain.ID) string {
			return strings.Replace(valid(id), `"max_delivery_attempts":5`, `"max_delivery_attempts":0`, 1)
		}, false},
		{"too many delivery attempts", func(id domain.ID) string {
			return strings.Replace(valid(id), `"max_delivery_attempts":5`, `"max_delivery_attempts":101`, 1)
		}, false},
		{"negative message lifetime", func(id domain.ID) string {
			return strings.Replace(valid(id), `"default_message_ttl_seconds":604800`, `"default_message_ttl_seconds":-1`, 1)
		}, false},
		{"message lifetime that overflows", func(id domain.ID) string {
			return strings.Replace(valid(id), `"default_message_ttl_seconds":604800`, `"default_message_ttl_seconds":9223372036854775807`, 1)
		}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			id := newID()
			set := shared.B().Set().Key(prefix + id.String()).Value(tc.value(id)).Px(time.Minute).Build()
			is.NoErr(shared.Do(t.Context(), set).Error())

			q, found, err := cache.Queue(t.Context(), id)

			is.NoErr(err)             // an odd value is no failure of Redis
			is.Equal(found, tc.found) // only a valid entry of this queue is found
			if tc.found {
				is.Equal(q.ID, id) // and it is decoded
			}
		})
	}
}

func TestQueueCache_StoreOnOneInstance_ReachesAnotherWithinOneSecond(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	writer := redis.NewQueueCache(connect(t, redisURL), redis.Options{})
	reader := redis.NewQueueCache(connect(t, redisURL), redis.Options{})
	q := newQueue()

	_, found, err := reader.Queue(t.Context(), q.ID) // the reader now holds the miss in memory
	is.NoErr(err)
	is.True(!found)
	is.NoErr(writer.Fill(t.Context(), q))
	within(t, time.Second, "the reader finds the entry that the writer filled", func() bool {
		got, found, err := reader.Queue(t.Context(), q.ID)
		is.NoErr(err)
		return found && got == q
	})

	updated := q
	updated.VisibilityTimeout = 5 * time.Minute
	updated.MaxDeliveryAttempts = 9
	is.NoErr(writer.Store(t.Context(), updated))
	within(t, time.Second, "the reader sees the settings that the writer stored", func() bool {
		got, found, err := reader.Queue(t.Context(), q.ID)
		is.NoErr(err)
		is.True(found) // the entry is never missing on the way
		return got == updated
	})
}

func TestQueueCache_ReadAfterOwnWrite_SeesTheWrite(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	cache := redis.NewQueueCache(connect(t, redisURL), redis.Options{})
	// Redis invalidates the writer's own copy asynchronously, so a race shows only now and
	// then: many goroutines, many rounds, and counts to check at the end.
	var rounds, missesAfterFill, oldDetailsAfterStore atomic.Int64
	var firstErr atomic.Pointer[error]
	note := func(err error) {
		if err != nil {
			firstErr.CompareAndSwap(nil, &err)
		}
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 200 {
				q := newQueue()
				_, _, err := cache.Queue(t.Context(), q.ID) // holds the miss in memory
				note(err)
				note(cache.Fill(t.Context(), q))
				_, found, err := cache.Queue(t.Context(), q.ID)
				note(err)
				if !found {
					missesAfterFill.Add(1)
				}
				q.MaxDeliveryAttempts = 9
				note(cache.Store(t.Context(), q))
				got, _, err := cache.Queue(t.Context(), q.ID)
				note(err)
				if got.MaxDeliveryAttempts != 9 {
					oldDetailsAfterStore.Add(1)
				}
				rounds.Add(1)
			}
		})
	}
	wg.Wait()
	if err := firstErr.Load(); err != nil {
		is.NoErr(*err) // every call succeeds
	}
	is.Equal(rounds.Load(), int64(1600))            // every round ran
	is.Equal(missesAfterFill.Load(), int64(0))      // a read right after Fill sees the entry, not the remembered miss
	is.Equal(oldDetailsAfterStore.Load(), int64(0)) // a read right after Store sees the new details
}

func TestQueueCache_RepeatedReads_AreServedFromMemory(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	const prefix = "retsu-test:local:"
	cache := redis.NewQueueCache(connect(t, redisURL), redis.Options{KeyPrefix: prefix})
	q := newQueue()
	is.NoErr(cache.Store(t.Context(), q))

	// Redis keeps, per key, when a command last read it (OBJECT IDLETIME, in whole seconds).
	// After a pause of more than a second, reads served from memory leave that at least one
	// second; a single GET would reset it to zero. A FLUSHDB anywhere on the server (another
	// test's) drops every client's copies, and the read after it rightly goes to Redis, so
	// the measurement gets three tries.
	served := false
	for try := 0; try < 3 && !served; try++ {
		_, _, err := cache.Queue(t.Context(), q.ID) // the first read fetches the entry
		is.NoErr(err)
		time.Sleep(1250 * time.Millisecond)
		for range 100 {
			got, found, err := cache.Queue(t.Context(), q.ID)
			is.NoErr(err)
			is.True(found)   // every read finds the entry
			is.Equal(got, q) // with every detail
		}
		idle, err := shared.Do(t.Context(), shared.B().ObjectIdletime().Key(prefix+q.ID.String()).Build()).AsInt64()
		is.NoErr(err)
		served = idle >= 1
	}
	is.True(served) // 100 reads after the first did not read the key in Redis
}

func TestQueueCache_AfterFlushDB_MissesUntilFilled(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	// FLUSHDB empties a whole database, so this test has one of its own: the others' entries
	// live in the database of RETSU_TEST_REDIS_URL.
	flushURL := withDatabase(t, redisURL, 15)
	cache := redis.NewQueueCache(connect(t, flushURL), redis.Options{})
	operator := connect(t, flushURL)
	q := newQueue()
	is.NoErr(cache.Store(t.Context(), q))
	_, found, err := cache.Queue(t.Context(), q.ID) // the cache now holds the entry in memory
	is.NoErr(err)
	is.True(found)

	is.NoErr(operator.Do(t.Context(), operator.B().Flushdb().Build()).Error())

	within(t, time.Second, "the flushed entry is a miss", func() bool {
		_, found, err := cache.Queue(t.Context(), q.ID)
		is.NoErr(err)
		return !found
	})
	is.NoErr(cache.Fill(t.Context(), q))
	got, found, err := cache.Queue(t.Context(), q.ID)
	is.NoErr(err)
	is.True(found)   // a fill after the flush restores the entry
	is.Equal(got, q) // with every detail
}

func TestQueueCache_RedisUnavailable_CallsFailFast(t *testing.T) {
	t.Parallel()
	const opTimeout = 150 * time.Millisecond
	tests := []struct {
		name  string
		fail  func(p *proxy, client rueidis.Client)
		limit time.Duration // how long a call may take to fail
	}{
		// The bounds are generous for a loaded machine; what they rule out is waiting for
		// reconnection attempts or retries, which would take many seconds.
		{"client closed", func(_ *proxy, client rueidis.Client) { client.Close() }, time.Second},
		{"Redis stopped", func(p *proxy, _ rueidis.Client) { p.stop() }, time.Second},
		{"Redis hung", func(p *proxy, _ rueidis.Client) { p.hang() }, opTimeout + time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			p := newProxy(t, redisURL)
			client := connect(t, p.url)
			cache := redis.NewQueueCache(client, redis.Options{OpTimeout: opTimeout})
			q := newQueue()
			is.NoErr(cache.Store(t.Context(), q)) // Redis answers through the proxy

			tc.fail(p, client)

			calls := map[string]func() error{
				"Queue": func() error { _, _, err := cache.Queue(t.Context(), newID()); return err },
				"Fill":  func() error { return cache.Fill(t.Context(), newQueue()) },
				"Store": func() error { return cache.Store(t.Context(), q) },
			}
			for name, call := range calls {
				start := time.Now()
				err := call()
				took := time.Since(start)
				is.True(err != nil) // a call fails when Redis does not answer
				if took > tc.limit {
					t.Errorf("%s took %v to fail, want at most %v", name, took, tc.limit)
				}
			}
		})
	}
}

func TestQueueCache_RedisHung_StopsServingFromMemory(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	p := newProxy(t, redisURL)
	cache := redis.NewQueueCache(connect(t, p.url), redis.Options{OpTimeout: 100 * time.Millisecond})
	q := newQueue()
	is.NoErr(cache.Store(t.Context(), q))
	_, found, err := cache.Queue(t.Context(), q.ID) // the cache now holds the entry in memory
	is.NoErr(err)
	is.True(found)

	// A hung Redis delivers no invalidation, so the copy in memory could be stale: it may
	// be served only until rueidis finds the connection dead.
	p.hang()

	within(t, 3*time.Second, "the cache stops serving the entry from memory", func() bool {
		_, found, err := cache.Queue(t.Context(), q.ID)
		return err != nil || !found
	})
}

func TestConnect_Failure_IsFastAndKeepsThePasswordOut(t *testing.T) {
	t.Parallel()
	const password = "s3cret-p4ss"
	hung := newProxy(t, redisURL)
	hung.hang()
	tests := []struct {
		name string
		url  string
	}{
		{"nothing listens", "redis://retsu:" + password + "@" + closedAddress(t) + "/1"},
		{"Redis hung", "redis://retsu:" + password + "@" + hung.address + "/1"},
		{"wrong password", strings.Replace(redisURL, "redis://", "redis://retsu:"+password+"@", 1)},
		{"bad escape in the password", "redis://retsu:" + password + "%zz@127.0.0.1:1/1"},
		{"bad port", "redis://retsu:" + password + "@127.0.0.1:port/1"},
		{"bad database", "redis://retsu:" + password + "@127.0.0.1:1/db"},
		{"no scheme", "retsu:" + password + "@127.0.0.1:1/1"},
		{"other scheme", "http://retsu:" + password + "@127.0.0.1:1/1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			start := time.Now()
			client, err := redis.Connect(t.Context(), tc.url, redis.Options{})
			if client != nil {
				client.Close()
			}
			is.True(err != nil)                                 // Connect fails
			is.True(time.Since(start) < 2*time.Second)          // within about a second, not rueidis' 5 s
			is.True(!strings.Contains(err.Error(), password))   // without the password in its error
			is.True(!strings.Contains(err.Error(), "@127.0.0")) // nor the URL
		})
	}
}

// connect returns a client of the Redis at url that the test closes when it ends: another
// instance of Retsu, with a memory of its own.
func connect(t *testing.T, url string) rueidis.Client {
	t.Helper()
	client, err := redis.Connect(t.Context(), url, redis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(client.Close)
	return client
}

// within calls ok every 10 ms until it returns true, and fails the test if that takes longer
// than limit.
func within(t *testing.T, limit time.Duration, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %s", limit, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// withDatabase returns base with another database number.
func withDatabase(t *testing.T, base string, database int) string {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = fmt.Sprintf("/%d", database)
	return u.String()
}

// closedAddress returns a local address where nothing listens. Its port is below Linux's
// ephemeral range (32768 and up): a dial to a closed port in that range can be given the
// same port as its own local port and connect to itself, and the port is then taken.
func closedAddress(t *testing.T) string {
	t.Helper()
	for port := 20000 + rand.IntN(10000); ; port++ {
		listener, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			continue
		}
		address := listener.Addr().String()
		listener.Close()
		return address
	}
}

func newID() domain.ID { return domain.ID(uuid.Must(uuid.NewV7())) }

func newQueue() domain.Queue {
	return domain.Queue{ID: newID(), Name: "orders", Settings: domain.DefaultSettings()}
}

// proxy forwards TCP connections to Redis until it is stopped, which refuses and drops
// connections like a stopped Redis, or hung, which accepts connections and bytes and answers
// nothing, like a Redis that is paused or cut off by the network.
type proxy struct {
	address string // where the proxy listens
	url     string // the target URL with the proxy's address
	target  string // Redis' address

	listener net.Listener
	hung     atomic.Bool
	mu       sync.Mutex
	conns    []net.Conn
}

func newProxy(t *testing.T, target string) *proxy {
	t.Helper()
	return newProxyAt(t, target, "127.0.0.1:0")
}

// newProxyAt is newProxy listening on address.
func newProxyAt(t *testing.T, target, address string) *proxy {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	listener, err := net.Listen("tcp", address)
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{address: listener.Addr().String(), target: u.Host, listener: listener}
	u.Host = p.address
	p.url = u.String()
	go p.serve()
	t.Cleanup(p.stop)
	return p
}

func (p *proxy) serve() {
	for {
		conn, err := p.listener.Accept()
		if err != nil {
			return
		}
		p.track(conn)
		if !p.hung.Load() {
			go p.forward(conn)
		}
	}
}

func (p *proxy) forward(client net.Conn) {
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		client.Close()
		return
	}
	p.track(server)
	go p.copy(server, client)
	p.copy(client, server)
}

// copy moves bytes from src to dst until either closes or the proxy hangs, which leaves both
// open.
func (p *proxy) copy(dst io.Writer, src io.Reader) {
	buffer := make([]byte, 32<<10)
	for {
		n, err := src.Read(buffer)
		if err != nil || p.hung.Load() {
			return
		}
		if _, err := dst.Write(buffer[:n]); err != nil {
			return
		}
	}
}

func (p *proxy) track(conn net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.conns = append(p.conns, conn)
}

func (p *proxy) hang() { p.hung.Store(true) }

func (p *proxy) stop() {
	p.listener.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, conn := range p.conns {
		conn.Close()
	}
}
