package capacity_test

import (
	"errors"
	"net"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/retsu/retsu/adapters/capacity"
)

func TestSlots_TakeUpToTheLimit_ReleaseOnce(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	slots := capacity.NewSlots(2)

	first, ok := slots.TryTake()
	is.True(ok) // a first place
	_, ok = slots.TryTake()
	is.True(ok) // and a second
	_, ok = slots.TryTake()
	is.True(!ok) // but not a third
	first()
	first() // giving a place back twice gives back one
	_, ok = slots.TryTake()
	is.True(ok) // the place given back is taken again
	_, ok = slots.TryTake()
	is.True(!ok) // and only that one

	var unlimited *capacity.Slots
	for range 1000 {
		_, ok := unlimited.TryTake()
		is.True(ok) // no limit has a place for everyone
	}
}

func TestBytes_ReserveWithinTheBudget(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	budget := capacity.NewBytes(100)

	release, ok := budget.TryReserve(60)
	is.True(ok) // 60 of 100
	_, ok = budget.TryReserve(41)
	is.True(!ok) // 41 more would be 101
	small, ok := budget.TryReserve(40)
	is.True(ok) // 40 more is exactly 100
	release()
	release()
	small()
	_, ok = budget.TryReserve(100)
	is.True(ok) // all given back, once each
}

func TestListener_HoldsConnectionsPastTheLimitUntilOneCloses(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	slots := capacity.NewSlots(1)
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	is.NoErr(err)
	other, err := net.Listen("tcp", "127.0.0.1:0")
	is.NoErr(err)
	first, second := capacity.Listener(inner, slots), capacity.Listener(other, slots)
	defer first.Close()
	accepted := make(chan net.Conn, 2)
	for _, l := range []net.Listener{first, second} {
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				accepted <- c
			}
		}()
	}
	for _, addr := range []string{inner.Addr().String(), other.Addr().String()} {
		c, err := net.Dial("tcp", addr)
		is.NoErr(err)
		defer c.Close()
	}

	held := <-accepted
	select {
	case <-accepted:
		t.Fatal("a second connection was accepted past the shared limit of one")
	case <-time.After(200 * time.Millisecond):
	}
	is.NoErr(held.Close())
	select {
	case c := <-accepted:
		c.Close() // closing the first let the other listener accept its connection
	case <-time.After(5 * time.Second):
		t.Fatal("the waiting connection was not accepted after one closed")
	}
	is.NoErr(second.Close())
	_, err = second.Accept()
	is.True(errors.Is(err, net.ErrClosed)) // a closed listener accepts nothing
}
