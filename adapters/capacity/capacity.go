package capacity

import (
	"net"
	"sync"
)

// Shared is the capacity of a process, which its listeners take from. A nil field has no
// limit.
type Shared struct {
	// Requests caps the requests served at once, long polls apart.
	Requests *Slots
	// Waiting caps the long polls waiting at once.
	Waiting *Slots
	// BodyBytes caps the bytes of request bodies held at once.
	BodyBytes *Bytes
	// Connections caps the open connections of every listener together.
	Connections *Slots
}

// Options size a Shared capacity; zero or less is no limit.
type Options struct {
	MaxRequests, MaxWaiting int
	MaxBodyBytes            int64
	MaxConnections          int
}

// New returns the capacity that o describes.
func New(o Options) *Shared {
	return &Shared{
		Requests:    NewSlots(o.MaxRequests),
		Waiting:     NewSlots(o.MaxWaiting),
		BodyBytes:   NewBytes(o.MaxBodyBytes),
		Connections: NewSlots(o.MaxConnections),
	}
}

// Slots is a number of places that holders take and give back. A nil *Slots has a place
// for everyone.
type Slots struct {
	places chan struct{}
}

// NewSlots returns max places, or nil (no limit) when max is not positive.
func NewSlots(max int) *Slots {
	if max <= 0 {
		return nil
	}
	return &Slots{places: make(chan struct{}, max)}
}

// TryTake takes a place without waiting and returns the function that gives it back,
// which may be called more than once; ok is false when every place is taken.
func (s *Slots) TryTake() (release func(), ok bool) {
	if s == nil {
		return func() {}, true
	}
	select {
	case s.places <- struct{}{}:
		return s.releaser(), true
	default:
		return nil, false
	}
}

// take waits for a place, or for done to close (ok false).
func (s *Slots) take(done <-chan struct{}) (release func(), ok bool) {
	if s == nil {
		return func() {}, true
	}
	select {
	case s.places <- struct{}{}:
		return s.releaser(), true
	case <-done:
		return nil, false
	}
}

func (s *Slots) releaser() func() {
	var once sync.Once
	return func() { once.Do(func() { <-s.places }) }
}

// Bytes is a budget of bytes that holders reserve and give back. A nil *Bytes has room for
// everything.
type Bytes struct {
	mu         sync.Mutex
	max, taken int64
}

// NewBytes returns a budget of max bytes, or nil (no limit) when max is not positive.
func NewBytes(max int64) *Bytes {
	if max <= 0 {
		return nil
	}
	return &Bytes{max: max}
}

// TryReserve reserves n bytes without waiting and returns the function that gives them
// back, which may be called more than once; ok is false when the budget lacks room.
func (b *Bytes) TryReserve(n int64) (release func(), ok bool) {
	if b == nil || n <= 0 {
		return func() {}, true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.taken+n > b.max {
		return nil, false
	}
	b.taken += n
	var once sync.Once
	return func() {
		once.Do(func() {
			b.mu.Lock()
			b.taken -= n
			b.mu.Unlock()
		})
	}, true
}

// Listener returns l whose Accept, once it has a connection, waits for a place of
// connections before it returns it, and whose connections give their place back when
// closed. Each listener thus holds at most one connection past the limit, unread, and the
// others wait in the kernel's backlog; a listener with no connection to accept holds no
// place that another listener could use. Closing the listener ends the wait.
func Listener(l net.Listener, connections *Slots) net.Listener {
	return &limitedListener{Listener: l, connections: connections, closed: make(chan struct{})}
}

type limitedListener struct {
	net.Listener
	connections *Slots
	closeOnce   sync.Once
	closed      chan struct{}
}

func (l *limitedListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	release, ok := l.connections.take(l.closed)
	if !ok {
		c.Close()
		return nil, net.ErrClosed
	}
	return &limitedConn{Conn: c, release: release}, nil
}

func (l *limitedListener) Close() error {
	l.closeOnce.Do(func() { close(l.closed) })
	return l.Listener.Close()
}

// limitedConn gives its place back when closed.
type limitedConn struct {
	net.Conn
	release func()
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.release()
	return err
}

// CloseWrite half-closes the connection when it can, as net/http does before it hangs up on
// a client whose headers were too large.
func (c *limitedConn) CloseWrite() error {
	if closer, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return closer.CloseWrite()
	}
	return nil
}
