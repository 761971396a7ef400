package redis_test

import (
	"net/url"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/retsu/retsu/adapters/redis"
)

func TestPing_AnswersWhileRedisIsUpAndFailsWhenItStops(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	p := newProxy(t, redisURL)
	cache := redis.NewQueueCache(connect(t, p.url), redis.Options{OpTimeout: 200 * time.Millisecond})
	defer cache.Close()

	is.NoErr(cache.Ping(t.Context())) // Redis answers
	p.stop()
	is.True(cache.Ping(t.Context()) != nil) // a stopped Redis does not
}

func TestPing_BeforeOpenConnected_Fails(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	u, err := url.Parse(redisURL)
	is.NoErr(err)
	u.Host = closedAddress(t)
	cache, err := redis.Open(t.Context(), u.String(), redis.Options{})
	is.NoErr(err)
	defer cache.Close()

	is.True(cache.Ping(t.Context()) != nil) // no connection yet: Redis is reported down
}
