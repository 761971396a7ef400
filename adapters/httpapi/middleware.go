package httpapi

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"runtime/debug"
	"strconv"
	"strings"
)

// openPaths answer without a token: probes must work before anyone holds one.
var openPaths = map[string]bool{"/healthz": true, "/readyz": true}

// authenticate requires "Authorization: Bearer <token>" with one of the configured tokens,
// except on openPaths. Each token is compared in constant time, as a SHA-256 digest so that
// its length does not show either, and every token is compared whatever the outcome.
func authenticate(tokens []string, next http.Handler, fail func(http.ResponseWriter, *http.Request, error)) http.Handler {
	if len(tokens) == 0 {
		return next
	}
	digests := make([][sha256.Size]byte, len(tokens))
	for i, token := range tokens {
		digests[i] = sha256.Sum256([]byte(token))
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if openPaths[r.URL.Path] {
			next.ServeHTTP(w, r)
			return
		}
		given := sha256.Sum256([]byte(bearerToken(r)))
		match := 0
		for _, digest := range digests {
			match |= subtle.ConstantTimeCompare(given[:], digest[:])
		}
		if match != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="retsu"`)
			fail(w, r, requestError(codeUnauthorized, "the request needs the header Authorization: Bearer <token> with a valid token"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// bearerToken returns the token of an Authorization header of the Bearer scheme, or "".
func bearerToken(r *http.Request) string {
	const scheme = "bearer "
	header := r.Header.Get("Authorization")
	if len(header) <= len(scheme) || !strings.EqualFold(header[:len(scheme)], scheme) {
		return ""
	}
	return header[len(scheme):]
}

// refuseCrossOrigin answers 403 cross_origin_request to a state-changing request (any
// method but GET, HEAD and OPTIONS) that a browser sent from a page of another origin: its
// Sec-Fetch-Site is neither same-origin nor none, or, from a browser too old to send that,
// its Origin is not the request's Host (http.CrossOriginProtection). Tokens do not make it
// unnecessary: without tokens any page the operator visits could otherwise dequeue or
// delete through the operator's browser, and a dequeue needs neither a body nor a content
// type, so no CORS preflight stops it. Requests without either header (curl, SDKs, other
// services) pass.
func refuseCrossOrigin(next http.Handler, fail func(http.ResponseWriter, *http.Request, error)) http.Handler {
	protection := http.NewCrossOriginProtection()
	refused := requestError(codeCrossOriginRequest, "a browser sent this state-changing request from a page of another origin")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if protection.Check(r) != nil {
			fail(w, r, refused)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// refuseInvalidHost answers 400 invalid_host to a request whose Host is not a host name or
// an IP address with an optional port (RFC 9112, section 3.2, asks for 400). net/http
// refuses only bytes that cannot appear in a Host; the origin check compares Hosts, so they
// must mean one thing. A request without Host (HTTP/1.0; net/http refuses HTTP/1.1 without
// one) passes.
func refuseInvalidHost(next http.Handler, fail func(http.ResponseWriter, *http.Request, error)) http.Handler {
	refused := requestError(codeInvalidHost, "the Host header must be a host name or an IP address, with an optional port")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !validHost(r.Host) {
			fail(w, r, refused)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// validHost reports whether host is empty, or a host name, an IPv4 address or a bracketed
// IPv6 address, each with an optional :port.
func validHost(host string) bool {
	if host == "" {
		return true
	}
	name := host
	if strings.HasPrefix(host, "[") {
		end := strings.IndexByte(host, ']')
		if end < 0 {
			return false
		}
		if address, err := netip.ParseAddr(host[1:end]); err != nil || !address.Is6() {
			return false
		}
		rest := host[end+1:]
		return rest == "" || rest[0] == ':' && validPort(rest[1:])
	}
	if i := strings.LastIndexByte(host, ':'); i >= 0 {
		if !validPort(host[i+1:]) {
			return false
		}
		name = host[:i]
	}
	if address, err := netip.ParseAddr(name); err == nil {
		return address.Is4()
	}
	return validHostName(name)
}

// validPort reports whether port is empty (RFC 3986 allows "host:") or a number up to 65535.
func validPort(port string) bool {
	if port == "" {
		return true
	}
	_, err := strconv.ParseUint(port, 10, 16)
	return err == nil
}

// validHostName reports whether name is a DNS name: labels of 1 to 63 letters, digits,
// hyphens and underscores (which service discovery uses), no hyphen at either end, at most
// 253 characters, with an optional final dot.
func validHostName(name string) bool {
	name = strings.TrimSuffix(name, ".")
	if name == "" || len(name) > 253 {
		return false
	}
	for label := range strings.SplitSeq(name, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

// withDashboard serves the dashboard's pages (see router.route) ahead of the token check,
// and sends every other request to next.
func withDashboard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if routing := routingOf(r.Context()); routing.dashboard {
			routing.handler.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// limitHeaders answers 431 headers_too_large, and closes the connection, when the request
// line and headers of r take more than max bytes, counted as they travelled (each header
// line with its colon, space and line break). Zero means no bound. net/http refuses larger
// headers by itself, with a plain-text 431, at the bound NewServer gives it, which is
// higher than max so that clients get this problem instead.
func limitHeaders(max int, next http.Handler, fail func(http.ResponseWriter, *http.Request, error)) http.Handler {
	if max <= 0 {
		return next
	}
	tooLarge := requestError(codeHeadersTooLarge, fmt.Sprintf("the request line and headers are larger than %d bytes", max))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if headerBytes(r) > max {
			w.Header().Set("Connection", "close")
			fail(w, r, tooLarge)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// headerBytes returns the size of the request line and headers of r as they travelled,
// Host included (net/http takes it out of the header map).
func headerBytes(r *http.Request) int {
	n := len(r.Method) + 1 + len(r.RequestURI) + 1 + len(r.Proto) + len("\r\n")
	if r.Host != "" {
		n += len("Host: ") + len(r.Host) + len("\r\n")
	}
	for name, values := range r.Header {
		for _, value := range values {
			n += len(name) + len(": ") + len(value) + len("\r\n")
		}
	}
	return n + len("\r\n")
}

// recoverPanics answers 500 internal_error when a handler panics, and logs the panic with
// its stack; without it, net/http would cut the connection without an answer. When the
// handler had already started its answer, a problem would follow the bytes sent: the
// connection is cut instead, so that the client sees the answer incomplete.
func recoverPanics(log *slog.Logger, next http.Handler, fail func(http.ResponseWriter, *http.Request, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			p := recover()
			if p == nil {
				return
			}
			if p == http.ErrAbortHandler {
				panic(p)
			}
			log.Error("handler panicked", "method", r.Method, "path", r.URL.Path, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			if answerStarted(w) {
				panic(http.ErrAbortHandler)
			}
			fail(w, r, fmt.Errorf("panic: %v", p))
		}()
		next.ServeHTTP(w, r)
	})
}

// requestIDHeader carries the ID of a request, for logs on both sides.
const requestIDHeader = "X-Request-ID"

type requestIDKey struct{}

// RequestID returns the ID of the request that ctx belongs to, or "".
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// withRequestID takes the client's X-Request-ID when it is a sensible one (1 to 128
// letters, digits and -_.:), or makes one, puts it in the request's context and echoes it
// in the answer.
func withRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(requestIDHeader)
		if !validRequestID(id) {
			id = newRequestID()
		}
		w.Header().Set(requestIDHeader, id)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), requestIDKey{}, id)))
	})
}

func validRequestID(id string) bool {
	if len(id) == 0 || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' || c == ':') {
			return false
		}
	}
	return true
}

func newRequestID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
