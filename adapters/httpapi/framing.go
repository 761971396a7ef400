package httpapi

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/retsu/retsu/domain"
)

// This file refuses requests that announce their body both with Content-Length and with
// Transfer-Encoding: chunked. RFC 9112 (section 6.1) lets a server take the chunked framing,
// which net/http does, but such a request "ought to be handled as an error": a proxy in
// front that took the Content-Length instead would see another request boundary than Retsu,
// which is how requests are smuggled past it. net/http deletes the Content-Length header
// before any handler runs, so the two framings cannot be seen in the request; a framer
// follows each connection's bytes instead, with the framing rules of net/http, and records
// for each request that it had both headers. It reads nothing itself: it watches the reads
// of net/http. On anything it does not follow, it stops watching that connection and never
// refuses a request of it.

// codeAmbiguousFraming answers a request with both Content-Length and chunked framing.
const codeAmbiguousFraming domain.Code = "ambiguous_framing"

// NewListener returns l whose connections are watched for requests with two framings, which
// the API handler then refuses. Serve the handler of NewHandler on it with the server of
// NewServer.
func NewListener(l net.Listener) net.Listener { return framingListener{l} }

type framingListener struct{ net.Listener }

func (l framingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &framingConn{Conn: c, framer: &framer{}}, nil
}

// framingConn is a connection whose incoming bytes a framer follows.
type framingConn struct {
	net.Conn
	framer *framer
}

func (c *framingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.framer.feed(p[:n])
	return n, err
}

// CloseWrite half-closes the connection when it can, as net/http does before it hangs up on
// a client whose headers were too large.
func (c *framingConn) CloseWrite() error {
	if closer, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return closer.CloseWrite()
	}
	return nil
}

// framerKey finds the framer of a request's connection in its context.
type framerKey struct{}

// withFramer is the http.Server's ConnContext: it makes a connection's framer reachable
// from its requests.
func withFramer(ctx context.Context, c net.Conn) context.Context {
	if fc, ok := c.(*framingConn); ok {
		return context.WithValue(ctx, framerKey{}, fc.framer)
	}
	return ctx
}

// refuseAmbiguousFraming answers 400 ambiguous_framing, and closes the connection, to a
// request whose connection's framer saw both Content-Length and chunked framing in its
// headers. Requests of other connections (httptest's recorder, a server on another
// listener) pass.
func refuseAmbiguousFraming(next http.Handler, fail func(http.ResponseWriter, *http.Request, error)) http.Handler {
	refused := requestError(codeAmbiguousFraming, "the request announces its body with both Content-Length and Transfer-Encoding: chunked")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f, ok := r.Context().Value(framerKey{}).(*framer); ok && f.nextIsAmbiguous() {
			w.Header().Set("Connection", "close")
			fail(w, r, refused)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// The parts of the incoming stream a framer can be in.
type framerState int

const (
	stateRequestLine framerState = iota // before a request, or in its first line
	stateHeader                         // in a header line
	stateBody                           // in a body of Content-Length bytes
	stateChunkSize                      // in the line that gives a chunk's size
	stateChunkData                      // in a chunk's data, and its closing CRLF
	stateTrailer                        // in the trailer lines after the last chunk
	stateLost                           // following nothing any more
)

// keptLineBytes is as much of a line as a framer keeps: enough for the names and values it
// looks for. A longer value is never "chunked" nor a length that net/http accepts, and
// net/http refuses such a request and closes the connection.
const keptLineBytes = 256

// framer follows the requests of one connection as net/http frames them (net/http's
// readRequest and its transfer reader): a request line, header lines up to an empty line,
// then a body of Content-Length bytes, or chunks when HTTP/1.1 or later says
// Transfer-Encoding: chunked, which wins over any Content-Length (before HTTP/1.1,
// net/http ignores Transfer-Encoding). It records for each
// request whether it had both.
type framer struct {
	mu    sync.Mutex
	state framerState
	// line holds the start of the line being read.
	line []byte
	// remaining counts the bytes left of a body or a chunk (its CRLF included).
	remaining int64
	// What the headers of the request being read said.
	beforeHTTP11                      bool
	contentLengths, transferEncodings []string
	// ambiguous holds, for each request read whose handler has not asked yet, whether it
	// had both framings.
	ambiguous []bool
}

// nextIsAmbiguous reports whether the oldest request not asked about yet had both framings.
func (f *framer) nextIsAmbiguous() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.ambiguous) == 0 {
		return false
	}
	next := f.ambiguous[0]
	f.ambiguous = f.ambiguous[1:]
	return next
}

// feed follows the bytes p, just read from the connection.
func (f *framer) feed(p []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for len(p) > 0 && f.state != stateLost {
		switch f.state {
		case stateBody, stateChunkData:
			n := min(int64(len(p)), f.remaining)
			f.remaining -= n
			p = p[n:]
			if f.remaining == 0 {
				f.endOfData()
			}
		default:
			i := bytes.IndexByte(p, '\n')
			if i < 0 {
				f.keep(p)
				return
			}
			f.keep(p[:i])
			p = p[i+1:]
			f.endOfLine(strings.TrimSuffix(string(f.line), "\r"))
			f.line = f.line[:0]
		}
	}
}

// keep adds b to the line, up to keptLineBytes.
func (f *framer) keep(b []byte) {
	if room := keptLineBytes - len(f.line); room > 0 {
		f.line = append(f.line, b[:min(len(b), room)]...)
	}
}

// endOfData moves on after a body or a chunk.
func (f *framer) endOfData() {
	if f.state == stateBody {
		f.state = stateRequestLine
		return
	}
	f.state = stateChunkSize
}

// endOfLine follows one complete line, without its line break.
func (f *framer) endOfLine(line string) {
	switch f.state {
	case stateRequestLine:
		f.requestLine(line)
	case stateHeader:
		if line == "" {
			f.endOfHeaders()
			return
		}
		name, value, _ := strings.Cut(line, ":")
		switch {
		case strings.EqualFold(name, "Content-Length"):
			f.contentLengths = append(f.contentLengths, strings.TrimSpace(value))
		case strings.EqualFold(name, "Transfer-Encoding"):
			f.transferEncodings = append(f.transferEncodings, strings.TrimSpace(value))
		}
	case stateChunkSize:
		f.chunkSize(line)
	case stateTrailer:
		if line == "" {
			f.state = stateRequestLine
		}
	}
}

// requestLine starts a request. Empty lines before it are skipped, as net/http skips them
// after a POST (and refuses them otherwise, closing the connection).
func (f *framer) requestLine(line string) {
	if line == "" {
		return
	}
	proto := line[strings.LastIndexByte(line, ' ')+1:]
	major, minor, ok := http.ParseHTTPVersion(proto)
	if !ok {
		f.state = stateLost
		return
	}
	f.beforeHTTP11 = major < 1 || major == 1 && minor < 1
	f.contentLengths, f.transferEncodings = nil, nil
	f.state = stateHeader
}

// endOfHeaders records whether the request had both framings, and follows its body.
func (f *framer) endOfHeaders() {
	chunked := false
	if len(f.transferEncodings) > 0 && !f.beforeHTTP11 {
		// net/http answers 501 and hangs up unless there is one Transfer-Encoding, chunked.
		if len(f.transferEncodings) != 1 || !strings.EqualFold(f.transferEncodings[0], "chunked") {
			f.state = stateLost
			return
		}
		chunked = true
	}
	f.ambiguous = append(f.ambiguous, chunked && len(f.contentLengths) > 0)
	switch {
	case chunked:
		f.state = stateChunkSize
	case len(f.contentLengths) > 0:
		f.contentLength()
	default:
		f.state = stateRequestLine
	}
}

// contentLength follows a body of Content-Length bytes. Several equal values are one;
// net/http refuses different ones, and any that is not a plain decimal number (ParseUint
// takes no sign).
func (f *framer) contentLength() {
	for _, v := range f.contentLengths[1:] {
		if v != f.contentLengths[0] {
			f.state = stateLost
			return
		}
	}
	n, err := strconv.ParseUint(f.contentLengths[0], 10, 63)
	if err != nil {
		f.state = stateLost
		return
	}
	f.remaining, f.state = int64(n), stateBody
	if n == 0 {
		f.state = stateRequestLine
	}
}

// chunkSize follows the chunk whose size line is line: its data and CRLF, or, for the last
// chunk (size 0), the trailer.
func (f *framer) chunkSize(line string) {
	size, _, _ := strings.Cut(line, ";")
	n, err := strconv.ParseUint(strings.TrimRight(size, " \t"), 16, 63)
	if err != nil {
		f.state = stateLost
		return
	}
	if n == 0 {
		f.state = stateTrailer
		return
	}
	f.remaining, f.state = int64(n)+int64(len("\r\n")), stateChunkData
}
