package redis_test

import (
	"net/url"
	"testing"
	"time"

	"github.com/matryer/is"
	"github.com/redis/rueidis"

	"github.com/retsu/retsu/adapters/redis"
)

func TestOpen_RedisDownAtStart_FailsFastThenConnectsWhenRedisComesUp(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	address := closedAddress(t)
	u, err := url.Parse(redisURL)
	is.NoErr(err)
	u.Host = address

	cache, err := redis.Open(t.Context(), u.String(), redis.Options{})
	is.NoErr(err) // an unreachable Redis does not stop the cache from opening
	defer cache.Close()
	q := newQueue()
	start := time.Now()
	_, _, err = cache.Queue(t.Context(), q.ID)
	is.True(err != nil)                      // while Redis is down, reads fail
	is.True(time.Since(start) < time.Second) // at once, without waiting for a connection, so the service falls back

	newProxyAt(t, redisURL, address) // Redis comes up at the address
	within(t, 3*time.Second, "the cache connects once Redis answers", func() bool {
		return cache.Store(t.Context(), q) == nil
	})
	got, found, err := cache.Queue(t.Context(), q.ID)
	is.NoErr(err)
	is.True(found)   // the connected cache serves entries
	is.Equal(got, q) // with every detail
}

func TestOpen_MalformedURL_Fails(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	_, err := redis.Open(t.Context(), "http://:secret@127.0.0.1:x", redis.Options{})
	is.True(err != nil) // a URL that is not a Redis URL is refused at once
}

func TestQueueCache_StoreFailed_OutdatedEntryDeletedOnceRedisAnswers(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	address := closedAddress(t)
	p := newProxyAt(t, redisURL, address)
	cache := redis.NewQueueCache(connect(t, p.url), redis.Options{OpTimeout: 200 * time.Millisecond})
	defer cache.Close()
	q := newQueue()
	is.NoErr(cache.Store(t.Context(), q)) // Redis holds the entry

	p.stop()
	q.MaxDeliveryAttempts = 9
	is.True(cache.Store(t.Context(), q) != nil) // the update cannot reach Redis, which keeps the old entry

	newProxyAt(t, redisURL, address) // Redis answers again
	direct := connect(t, redisURL)
	within(t, 5*time.Second, "the outdated entry is deleted", func() bool {
		err := direct.Do(t.Context(), direct.B().Get().Key("retsu:queue:"+q.ID.String()).Build()).Error()
		return rueidis.IsRedisNil(err)
	})
}
