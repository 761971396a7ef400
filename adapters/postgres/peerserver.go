package postgres

import (
	"bufio"
	"context"
	"crypto/subtle"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/retsu/retsu/domain"
)

// The leader's side of round forwarding (forward.go): the peer listener.
//
// A connection opens with one line from the follower, peerProtocol and the token, and one
// from the leader, "OK"; after it, each side writes gob values on its own stream: the
// follower peerRequests, the leader peerResponses, in the order their batches' rounds end.

const (
	// peerHandshakeTimeout bounds the opening line of a connection.
	peerHandshakeTimeout = 5 * time.Second
	// maxPeerHandshake bounds the opening line: the protocol, a space and the token.
	maxPeerHandshake = 1024
	// maxPeerConns bounds the connections open at once, those still in their handshake
	// included: one per follower is what instances use.
	maxPeerConns = 256
	// peerCallsPerConn bounds the batches of one connection carried at once; a connection's
	// further requests wait to be read.
	peerCallsPerConn = 4 * forwardsInFlight
)

// forwardMargin is taken off a forwarded batch's timeout for the answer's way back.
const forwardMargin = 100 * time.Millisecond

// peerServer is what ServePeers holds while it serves.
type peerServer struct {
	mu       sync.Mutex
	listener net.Listener
	conns    map[net.Conn]struct{}
	closed   bool
	serving  sync.WaitGroup // one per connection
}

// errNoPeers answers ServePeers on a store without PeerOptions.
var errNoPeers = errors.New("postgres: the message store has no peers")

// ServePeers takes the batches that other instances forward on connections accepted from
// listener, while this instance leads or until they learn it no longer does, and carries
// them out in its rounds. It returns when Close closes the listener (nil) or when accepting
// fails. Only other instances should reach listener: connections must present the token of
// PeerOptions.
func (s *MessageStore) ServePeers(listener net.Listener) error {
	if s.peers == nil {
		return errNoPeers
	}
	srv := &s.peers.server
	srv.mu.Lock()
	if srv.closed {
		srv.mu.Unlock()
		listener.Close()
		return nil
	}
	srv.listener = listener
	srv.mu.Unlock()
	for {
		conn, err := listener.Accept()
		if err != nil {
			srv.mu.Lock()
			closed := srv.closed
			srv.mu.Unlock()
			if closed {
				return nil
			}
			if errors.Is(err, net.ErrClosed) {
				return fmt.Errorf("postgres: accept peers: %w", err)
			}
			// Out of descriptors, say: net/http's backoff, so that the instance serves on.
			s.peers.log.Warn("accepting a peer connection failed", "error", err)
			time.Sleep(100 * time.Millisecond)
			continue
		}
		srv.mu.Lock()
		if srv.closed {
			srv.mu.Unlock()
			conn.Close()
			return nil
		}
		if len(srv.conns) >= maxPeerConns {
			srv.mu.Unlock()
			conn.Close()
			continue
		}
		srv.conns[conn] = struct{}{}
		srv.serving.Add(1)
		srv.mu.Unlock()
		go func() {
			defer srv.serving.Done()
			s.servePeer(conn)
			srv.mu.Lock()
			delete(srv.conns, conn)
			srv.mu.Unlock()
			conn.Close()
		}()
	}
}

// close stops accepting and reading, and waits until every connection's batches were
// answered and it was closed. The store's rounds are closed by then: each batch taken was
// answered or refused.
func (srv *peerServer) close() {
	srv.mu.Lock()
	srv.closed = true
	if srv.listener != nil {
		srv.listener.Close()
	}
	// Each connection stops reading, so that its goroutine returns once the batches it took
	// are answered, and then closes it.
	for conn := range srv.conns {
		_ = conn.SetReadDeadline(time.Now())
	}
	srv.mu.Unlock()
	srv.serving.Wait()
}

// servePeer serves one connection: the handshake, then its batches, each carried in the
// rounds as it arrives, its response written once its rounds are done.
func (s *MessageStore) servePeer(conn net.Conn) {
	_ = conn.SetReadDeadline(time.Now().Add(peerHandshakeTimeout))
	r := bufio.NewReaderSize(io.LimitReader(conn, maxPeerHandshake), maxPeerHandshake)
	line, err := r.ReadString('\n')
	fields := strings.SplitN(strings.TrimSuffix(line, "\n"), " ", 3)
	if err != nil || len(fields) != 3 || fields[0] != peerProtocol ||
		subtle.ConstantTimeCompare([]byte(fields[2]), []byte(s.peers.token)) != 1 {
		s.peers.log.Warn("refused a peer connection: not a peer, or another token", "remote", conn.RemoteAddr().String())
		_, _ = io.WriteString(conn, "REFUSED\n")
		return
	}
	if fields[1] != wireVersion() {
		s.peers.log.Warn("refused a peer connection: another build's wire format; its rounds run where they arrive",
			"remote", conn.RemoteAddr().String(), "version", fields[1], "ours", wireVersion())
		_, _ = io.WriteString(conn, "REFUSED\n")
		return
	}
	if r.Buffered() > 0 { // the follower waits for the answer before it sends anything else
		return
	}
	if _, err := io.WriteString(conn, "OK\n"); err != nil {
		return
	}
	_ = conn.SetReadDeadline(time.Time{})

	var calls sync.WaitGroup
	defer calls.Wait()
	// Cancelled (before the wait above) when the connection ends: the requests of its
	// batches that have not left are withdrawn, their follower gone.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := bufio.NewWriter(conn)
	enc := gob.NewEncoder(w)
	var wmu sync.Mutex
	slots := make(chan struct{}, peerCallsPerConn)
	dec := gob.NewDecoder(bufio.NewReader(conn))
	for {
		var request peerRequest
		if err := dec.Decode(&request); err != nil {
			return // the follower closed, or the store did
		}
		slots <- struct{}{}
		calls.Add(1)
		go func() {
			defer func() { <-slots; calls.Done() }()
			response := s.carry(ctx, request)
			wmu.Lock()
			defer wmu.Unlock()
			if enc.Encode(response) != nil || w.Flush() != nil {
				conn.Close()
			}
		}()
	}
}

// carry carries out a forwarded batch in this instance's rounds, or refuses it whole.
func (s *MessageStore) carry(ctx context.Context, request peerRequest) peerResponse {
	response := peerResponse{ID: request.ID}
	// The requests that have not left when the follower stops waiting are withdrawn: it
	// answers them service_unavailable, and they must not be done after that.
	ctx, cancel := context.WithTimeout(ctx, min(max(request.Timeout-forwardMargin, 0), roundTimeout))
	defer cancel()
	if len(request.Operations) == 0 || len(request.Operations) > maxForwardedOperations {
		response.Refused = true
		return response
	}
	batch := make([]operation, len(request.Operations))
	for i, op := range request.Operations {
		if op.Kind > undeliverOperation {
			response.Refused = true
			return response
		}
		batch[i] = op.operation()
	}
	s.peers.carried.Store(time.Now().UnixNano())
	outcomes, errs, err := s.rounds.doAll(ctx, batch)
	if err != nil { // closed: none of it was taken
		response.Refused = true
		return response
	}
	response.Outcomes = make([]wireOutcome, len(batch))
	for i, out := range outcomes {
		failure := errs[i]
		if failure == nil {
			failure = out.failed
		}
		if errors.Is(failure, context.DeadlineExceeded) || errors.Is(failure, context.Canceled) {
			failure = domain.Unavailable(failure) // withdrawn before its round left: nothing done
		}
		if failure != nil && domain.ErrorCode(failure) == domain.CodeInternal {
			s.peers.log.Error("a forwarded request failed", "error", failure)
		}
		response.Outcomes[i] = toWireOutcome(out, failure)
	}
	return response
}

// carrying reports whether this instance carried a forwarded batch in the last
// sampleInterval.
func (s *MessageStore) carrying() bool {
	return s.peers != nil && time.Now().UnixNano()-s.peers.carried.Load() < int64(s.sampleInterval)
}
