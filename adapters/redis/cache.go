package redis

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"

	"github.com/retsu/retsu/domain"
	"github.com/retsu/retsu/ports"
)

var _ ports.QueueCache = (*QueueCache)(nil)

// The defaults of Options.
const (
	// DefaultKeyPrefix is the default of Options.KeyPrefix.
	DefaultKeyPrefix = "retsu:queue:"
	// DefaultEntryTTL is the default of Options.EntryTTL.
	DefaultEntryTTL = time.Minute
	// DefaultLocalTTL is the default of Options.LocalTTL.
	DefaultLocalTTL = time.Minute
	// DefaultOpTimeout is the default of Options.OpTimeout.
	DefaultOpTimeout = 500 * time.Millisecond
)

// The connection settings that Connect applies; the URL may set the first and the last
// (dial_timeout, write_timeout). rueidis pings a connection that has received nothing for keepAlive and
// closes it when a reply takes longer than connWriteTimeout; closing drops the entries it
// holds in memory, which Redis can no longer invalidate. Together they bound how long an
// instance cut off from a hung Redis serves entries from memory: about a second.
const (
	dialTimeout      = time.Second
	keepAlive        = 250 * time.Millisecond
	connWriteTimeout = 500 * time.Millisecond
)

// Options tune a QueueCache; a zero field takes its default.
type Options struct {
	// KeyPrefix starts every key; the queue ID follows it. The default is "retsu:queue:".
	KeyPrefix string
	// EntryTTL is how long an entry lives in Redis after it was written. It bounds how long
	// a stale entry can survive when writing an update to Redis failed. The default is one
	// minute (DefaultEntryTTL).
	EntryTTL time.Duration
	// LocalTTL is how long an instance may serve an entry from its memory. Invalidation by
	// Redis normally drops the entry much sooner. The default is one minute.
	LocalTTL time.Duration
	// OpTimeout bounds each call, so that a slow Redis delays no request by more than it.
	// The default is 500 ms.
	OpTimeout time.Duration
	// Logger receives what Open has to say about reaching Redis; nil discards it.
	Logger *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.KeyPrefix == "" {
		o.KeyPrefix = DefaultKeyPrefix
	}
	if o.EntryTTL <= 0 {
		o.EntryTTL = DefaultEntryTTL
	}
	if o.LocalTTL <= 0 {
		o.LocalTTL = DefaultLocalTTL
	}
	if o.OpTimeout <= 0 {
		o.OpTimeout = DefaultOpTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// Connect returns a client for a redis:// or rediss:// URL, set up for QueueCache:
// client-side caching on RESP3 (whatever the URL's protocol and client_cache say), one
// connection per Redis node, no retries, and timeouts that make calls fail within about a
// second when Redis is stopped or hung. It connects and pings Redis, within o.OpTimeout for
// the ping, before returning, so it fails when Redis is unreachable. Its errors never contain
// the URL, which may hold a password.
func Connect(ctx context.Context, url string, o Options) (rueidis.Client, error) {
	option, err := clientOption(url)
	if err != nil {
		return nil, err
	}
	client, err := rueidis.NewClient(option)
	if err != nil {
		return nil, fmt.Errorf("redis: connect: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, o.withDefaults().OpTimeout)
	defer cancel()
	if err := client.Do(ctx, client.B().Ping().Build()).Error(); err != nil {
		client.Close()
		return nil, fmt.Errorf("redis: ping: %w", err)
	}
	return client, nil
}

// clientOption parses url and applies the settings that QueueCache relies on.
func clientOption(url string) (rueidis.ClientOption, error) {
	option, err := rueidis.ParseURL(url)
	if err != nil {
		// rueidis' and net/url's messages may quote parts of the URL, the password included.
		return option, errors.New("redis: invalid URL: want redis://[user:password@]host:port/db or rediss://…")
	}
	if option.Dialer.Timeout == 0 {
		option.Dialer.Timeout = dialTimeout
	}
	if option.ConnWriteTimeout == 0 {
		option.ConnWriteTimeout = connWriteTimeout
	}
	option.Dialer.KeepAlive = keepAlive
	option.AlwaysRESP2 = false
	option.DisableCache = false
	// A cache gains nothing from retrying: a failed call falls back to PostgreSQL at once,
	// while rueidis would retry reads with backoff until the deadline of every call.
	option.DisableRetry = true
	// One connection per node carries a key's reads, writes and invalidations in one order,
	// which set relies on; rueidis' default of several would let a read on one connection
	// return a copy whose invalidation is still on its way on another.
	option.PipelineMultiplex = -1
	return option, nil
}

// QueueCache is the queue-details cache shared by the instances that use one Redis. Reads
// are served from process memory after the first, until Redis reports a change of the key
// or LocalTTL passes.
type QueueCache struct {
	o Options
	// client is nil until a connection has been made (see Open).
	client atomic.Pointer[rueidis.Client]
	// stale holds the queues whose entry may be outdated in Redis (see forgetLater).
	stale staleEntries
	// decoded remembers the last decoding of each entry read.
	decoded decodings
	// background is cancelled by Close, which then waits for the background work.
	background context.Context
	stop       context.CancelFunc
	workers    sync.WaitGroup
}

// NewQueueCache returns a cache on client. The client should come from Connect: with more
// than one connection per Redis node, a read right after this instance's own Store could
// still return the entry that Store replaced.
func NewQueueCache(client rueidis.Client, o Options) *QueueCache {
	c := newQueueCache(o)
	c.client.Store(&client)
	return c
}

func newQueueCache(o Options) *QueueCache {
	c := &QueueCache{o: o.withDefaults(), stale: staleEntries{ids: map[domain.ID]struct{}{}}}
	c.background, c.stop = context.WithCancel(context.Background())
	return c
}

// errNotConnected is returned while Open has not connected yet.
var errNotConnected = errors.New("redis: not connected yet")

// redis returns the client, or errNotConnected.
func (c *QueueCache) redis() (rueidis.Client, error) {
	client := c.client.Load()
	if client == nil {
		return nil, errNotConnected
	}
	return *client, nil
}

// Queue returns the entry of queue id. A missing entry, or a value that is not a valid
// entry for id, is a miss; only a failure to reach Redis is an error.
func (c *QueueCache) Queue(ctx context.Context, id domain.ID) (domain.Queue, bool, error) {
	client, err := c.redis()
	if err != nil {
		return domain.Queue{}, false, err
	}
	ctx, cancel := context.WithTimeout(ctx, c.o.OpTimeout)
	defer cancel()
	get := client.B().Get().Key(c.key(id)).Cache()
	value, err := client.DoCache(ctx, get, c.o.LocalTTL).ToString()
	if rueidis.IsRedisNil(err) {
		return domain.Queue{}, false, nil
	}
	if err != nil {
		return domain.Queue{}, false, fmt.Errorf("redis: read queue %s: %w", id, err)
	}
	switch q, state := c.decoded.decode(value, id); state {
	case queueEntry:
		return q, true, nil
	case deletionEntry:
		return domain.Queue{}, false, domain.ErrQueueNotFound
	}
	return domain.Queue{}, false, nil
}

// Fill writes the entry of q unless Redis holds one for it already (SET NX), so that a fill
// from an older read of PostgreSQL never replaces an entry written by Store.
func (c *QueueCache) Fill(ctx context.Context, q domain.Queue) error {
	if err := c.set(ctx, q, true); err != nil {
		return fmt.Errorf("redis: fill queue %s: %w", q.ID, err)
	}
	return nil
}

// Store writes the entry of q, replacing any. Redis then invalidates the copies that every
// instance holds in memory.
// When the write fails, Redis may still hold the entry it was to replace: the entry is then
// deleted as soon as Redis answers again (see forgetLater).
func (c *QueueCache) Store(ctx context.Context, q domain.Queue) error {
	if err := c.set(ctx, q, false); err != nil {
		c.forgetLater(q.ID)
		return fmt.Errorf("redis: store queue %s: %w", q.ID, err)
	}
	return nil
}

// Delete writes the record of the queue's deletion, replacing any entry; Redis then
// invalidates the copies that every instance holds in memory, and Fill's SET NX cannot bring
// back details read before the deletion. When the write fails, the entry is deleted as soon
// as Redis answers again (see forgetLater), after which every instance reads the queue's
// absence from PostgreSQL.
func (c *QueueCache) Delete(ctx context.Context, id domain.ID) error {
	value, err := encodeDeletion(id)
	if err == nil {
		err = c.setValue(ctx, id, value, false)
	}
	if err != nil {
		c.forgetLater(id)
		return fmt.Errorf("redis: delete queue %s: %w", id, err)
	}
	return nil
}

func (c *QueueCache) set(ctx context.Context, q domain.Queue, onlyIfMissing bool) error {
	value, err := encodeEntry(q)
	if err != nil {
		return err
	}
	return c.setValue(ctx, q.ID, value, onlyIfMissing)
}

func (c *QueueCache) setValue(ctx context.Context, id domain.ID, value string, onlyIfMissing bool) error {
	client, err := c.redis()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, c.o.OpTimeout)
	defer cancel()
	set := client.B().Set().Key(c.key(id)).Value(value)
	var command rueidis.Completed
	if onlyIfMissing {
		command = set.Nx().Px(c.o.EntryTTL).Build()
	} else {
		command = set.Px(c.o.EntryTTL).Build()
	}
	// Redis sends the invalidation of this client's own copy on the same connection just
	// after the SET's reply, and rueidis may hand the reply to us before it has handled the
	// invalidation. The PING's reply comes after both, so that a read right after Store or
	// Fill never gets the copy they replaced.
	results := client.DoMulti(ctx, command, client.B().Ping().Build())
	if err := results[0].Error(); err != nil && !rueidis.IsRedisNil(err) { // nil: NX kept an entry
		return err
	}
	return results[1].Error()
}

func (c *QueueCache) key(id domain.ID) string { return c.o.KeyPrefix + id.String() }
