package httpapi

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/textproto"
	"strconv"
	"strings"
	"sync"

	"github.com/retsu/retsu/domain"
)

// This file refuses requests whose framing a proxy in front may read otherwise than
// net/http, which is how requests are smuggled past it:
//
//   - both Content-Length and Transfer-Encoding: chunked. RFC 9112 (section 6.1) lets a
//     server take the chunked framing, which net/http does, but such a request "ought to be
//     handled as an error": a proxy that took the Content-Length would see another request
//     boundary than Retsu;
//   - a header line folded onto the previous one (obs-fold, a line that starts with a space
//     or a tab), which net/http joins to the previous header and others read as a header of
//     its own or refuse. RFC 9112 (section 5.2) lets a server refuse it with 400.
//
// net/http deletes the Content-Length header and joins folded lines before any handler
// runs, so neither can be seen in the request; a framer follows each connection's bytes
// instead, with the framing rules of net/http, and records a verdict for each request. It
// reads nothing itself: it watches the reads of net/http. On anything it cannot follow, it
// stops following the connection, and the requests of it that have no verdict are refused:
// what the framer cannot follow, a proxy may not follow either.

// codeAmbiguousFraming answers a request whose framing a proxy may read another way.
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
// request whose connection's framer saw both Content-Length and chunked framing or a
// folded line in its headers, or could not follow it. Requests of other connections
// (httptest's recorder, a server on another listener) pass.
func refuseAmbiguousFraming(next http.Handler, fail func(http.ResponseWriter, *http.Request, error)) http.Handler {
	return GuardFraming(next, func(w http.ResponseWriter, r *http.Request, reason string) {
		fail(w, r, requestError(codeAmbiguousFraming, reason))
	})
}

// refusalReasons are the sentences that explain each verdict that refuses a request.
var refusalReasons = map[verdict]string{
	verdictTwoFramings: "the request announces its body with both Content-Length and Transfer-Encoding: chunked",
	verdictFolded:      "the request folds a header line onto the previous one (a line that starts with a space or a tab)",
	verdictUnfollowed:  "the request's framing headers could not be followed (such as a Content-Length of more than 256 characters)",
}

// GuardFraming returns next behind the framing checks of the API, for another handler
// served on a listener of NewListener (the SQS endpoint): a request framed two ways, with
// a folded header line, or that the framer could not follow is answered by refuse, with
// the reason in a sentence and Connection: close set, instead of by next. Requests of
// other connections pass.
func GuardFraming(next http.Handler, refuse func(w http.ResponseWriter, r *http.Request, reason string)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f, ok := r.Context().Value(framerKey{}).(*framer)
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		if reason, refused := refusalReasons[f.nextVerdict()]; refused {
			w.Header().Set("Connection", "close")
			refuse(w, r, reason)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// verdict is what a framer concluded about a request's framing.
type verdict int

const (
	verdictClear       verdict = iota // one framing at most, no folded line
	verdictTwoFramings                // Content-Length and chunked framing
	verdictFolded                     // a folded header line
	verdictUnfollowed                 // no verdict: the framer could not follow the request
)

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

// keptLineBytes is as much of a line as a framer keeps, once each run of spaces and tabs is
// cut to one: enough for the names and values it looks for. A framing header longer than
// that gets verdictUnfollowed; of a request line, the framer keeps the end, which holds the
// protocol version.
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
	// line holds the line being read, its runs of spaces and tabs cut to one, and truncated
	// tells that it was longer than keptLineBytes.
	line      []byte
	truncated bool
	// remaining counts the bytes left of a body or a chunk (its CRLF included).
	remaining int64
	// What the headers of the request being read said: the values of its framing headers,
	// which of them the last header line was (a folded line continues it), and whether a
	// line was folded or a framing header too long to keep.
	beforeHTTP11                      bool
	contentLengths, transferEncodings []string
	lastFraming                       *[]string
	folded, unfollowed                bool
	// verdicts holds the verdict of each request read whose handler has not asked yet.
	verdicts []verdict
}

// nextVerdict returns the verdict of the oldest request not asked about yet, and
// verdictUnfollowed when there is none: the framer lost the connection's framing.
func (f *framer) nextVerdict() verdict {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.verdicts) == 0 {
		return verdictUnfollowed
	}
	next := f.verdicts[0]
	f.verdicts = f.verdicts[1:]
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
			f.line, f.truncated = f.line[:0], false
		}
	}
}

// keep adds b to the line, each run of spaces and tabs cut to one, up to keptLineBytes; of
// a request line, it keeps at least the last keptLineBytes. Cutting runs changes no verdict: a
// framing value is trimmed, and one with spaces inside is refused by net/http either way.
func (f *framer) keep(b []byte) {
	for _, c := range b {
		blank := c == ' ' || c == '\t'
		if blank && len(f.line) > 0 && (f.line[len(f.line)-1] == ' ' || f.line[len(f.line)-1] == '\t') {
			continue
		}
		switch {
		case f.state == stateRequestLine && len(f.line) == 2*keptLineBytes:
			// Keep the end: drop the older half, which is enough to copy rarely.
			f.line = append(f.line[:0], f.line[keptLineBytes:]...)
		case f.state != stateRequestLine && len(f.line) == keptLineBytes:
			f.truncated = true
			continue
		}
		f.line = append(f.line, c)
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
		f.headerLine(line)
	case stateChunkSize:
		f.chunkSize(line)
	case stateTrailer:
		if line == "" {
			f.state = stateRequestLine
		}
	}
}

// headerLine follows a line of the header block: the empty line that ends it, a folded
// line, which net/http joins to the previous one with a space, or a header.
func (f *framer) headerLine(line string) {
	switch {
	case line == "":
		f.endOfHeaders()
		return
	case line[0] == ' ' || line[0] == '\t':
		f.folded = true
		if f.lastFraming != nil {
			// The value starts at its first character that is not blank, on whichever line.
			values := *f.lastFraming
			if last := &values[len(values)-1]; *last == "" {
				*last = textproto.TrimString(line)
			} else {
				*last += " " + textproto.TrimString(line)
			}
		}
		return
	}
	f.lastFraming = nil
	name, value, _ := strings.Cut(line, ":")
	switch {
	case strings.EqualFold(name, "Content-Length"):
		f.contentLengths = append(f.contentLengths, textproto.TrimString(value))
		f.lastFraming = &f.contentLengths
	case strings.EqualFold(name, "Transfer-Encoding"):
		f.transferEncodings = append(f.transferEncodings, textproto.TrimString(value))
		f.lastFraming = &f.transferEncodings
	default:
		return
	}
	if f.truncated {
		f.unfollowed = true
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
	f.contentLengths, f.transferEncodings, f.lastFraming = nil, nil, nil
	f.folded, f.unfollowed = false, false
	f.state = stateHeader
}

// endOfHeaders records the request's verdict, and follows its body.
func (f *framer) endOfHeaders() {
	if f.unfollowed {
		f.verdicts = append(f.verdicts, verdictUnfollowed)
		f.state = stateLost
		return
	}
	chunked := false
	if len(f.transferEncodings) > 0 && !f.beforeHTTP11 {
		// net/http answers 501 and hangs up unless there is one Transfer-Encoding, chunked.
		if len(f.transferEncodings) != 1 || !strings.EqualFold(f.transferEncodings[0], "chunked") {
			f.state = stateLost
			return
		}
		chunked = true
	}
	switch {
	case f.folded:
		f.verdicts = append(f.verdicts, verdictFolded)
	case chunked && len(f.contentLengths) > 0:
		f.verdicts = append(f.verdicts, verdictTwoFramings)
	default:
		f.verdicts = append(f.verdicts, verdictClear)
	}
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
	first := textproto.TrimString(f.contentLengths[0])
	for _, v := range f.contentLengths[1:] {
		if textproto.TrimString(v) != first {
			f.state = stateLost
			return
		}
	}
	n, err := strconv.ParseUint(first, 10, 63)
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
