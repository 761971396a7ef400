package httpapi_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/retsu/retsu/adapters/httpapi"
)

// realServer serves h with the server and listener of package httpapi on a free port, and
// returns its address.
func realServer(t *testing.T, h http.Handler, o httpapi.ServerOptions) string {
	t.Helper()
	is := is.New(t)
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	is.NoErr(err) // a free port
	server := httpapi.NewServer(h, o)
	go func() { _ = server.Serve(httpapi.NewListener(listener)) }()
	t.Cleanup(func() { _ = server.Close() })
	return listener.Addr().String()
}

// rawConn is a connection to a server that a test writes bytes to as they are.
type rawConn struct {
	t      *testing.T
	conn   net.Conn
	reader *bufio.Reader
}

func dialRaw(t *testing.T, addr string) *rawConn {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	return &rawConn{t: t, conn: conn, reader: bufio.NewReader(conn)}
}

// send writes request as it is and reads one answer, body included.
func (c *rawConn) send(request string) *http.Response {
	c.t.Helper()
	if _, err := io.WriteString(c.conn, request); err != nil {
		c.t.Fatal(err)
	}
	return c.read()
}

// read reads one answer, body included.
func (c *rawConn) read() *http.Response {
	c.t.Helper()
	res, err := http.ReadResponse(c.reader, nil)
	if err != nil {
		c.t.Fatalf("read answer: %v", err)
	}
	body, err := io.ReadAll(res.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	res.Body = readCloser(string(body))
	return res
}

// closed reports whether the server closed the connection.
func (c *rawConn) closed() bool {
	_, err := c.reader.ReadByte()
	return err == io.EOF
}

func TestFraming_ContentLengthAndChunked_IsRefusedAndTheConnectionClosed(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setup(t)
	queueID := c.createQueueNamed("emails")
	addr := realServer(t, c.handler, httpapi.ServerOptions{})
	conn := dialRaw(t, addr)
	body := `{"payload":"smuggled","priority":"LOW"}`

	res := conn.send("POST " + messagesPath(queueID) + " HTTP/1.1\r\nHost: retsu\r\nContent-Type: application/json\r\n" +
		"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n" + fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", len(body), body))

	is.True(res.Close) // the server says it closes the connection (Connection: close)
	assertProblem(t, res, http.StatusBadRequest, "ambiguous_framing")
	is.True(conn.closed()) // and does
	_, ok := c.dequeue(queueID)
	is.True(!ok) // the message was not stored
}

func TestFraming_EitherFramingAlone_IsServedOnOneConnection(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setup(t)
	queueID := c.createQueueNamed("emails")
	addr := realServer(t, c.handler, httpapi.ServerOptions{})
	conn := dialRaw(t, addr)
	enqueue := "POST " + messagesPath(queueID) + " HTTP/1.1\r\nHost: retsu\r\nContent-Type: application/json\r\n"
	body := `{"payload":"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n","priority":"LOW"}`
	chunked := fmt.Sprintf("%x;name=value\r\n%s\r\n%x\r\n%s\r\n0\r\nTrailer-Field: x\r\n\r\n", 10, body[:10], len(body)-10, body[10:])

	for i, request := range []string{
		enqueue + fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body),
		enqueue + "Transfer-Encoding: chunked\r\n\r\n" + chunked,
		enqueue + "transfer-encoding: Chunked\r\n\r\n" + chunked,
		"GET /healthz HTTP/1.1\r\nHost: retsu\r\nContent-Length: 0\r\n\r\n",
		"POST " + messagesPath(queueID) + " HTTP/1.0\r\nHost: retsu\r\nConnection: keep-alive\r\nContent-Type: application/json\r\n" +
			fmt.Sprintf("Transfer-Encoding: chunked\r\nContent-Length: %d\r\n\r\n%s", len(body), body),
		enqueue + fmt.Sprintf("Content-Length: %d\r\nContent-Length: %d\r\n\r\n%s", len(body), len(body), body),
	} {
		res := conn.send(request)
		is.True(res.StatusCode == http.StatusCreated || res.StatusCode == http.StatusOK) // each request is served, whatever its body holds
		is.True(i == 0 || res.Header.Get("Connection") != "close")                       // on the same connection
	}
	is.Equal(c.stats(queueID).Priorities[2].Ready, int64(5)) // every enqueue stored its message
}

func TestFraming_AfterPipelinedRequests_TheAmbiguousOneIsRefused(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setup(t)
	queueID := c.createQueueNamed("emails")
	conn := dialRaw(t, realServer(t, c.handler, httpapi.ServerOptions{}))
	enqueue := "POST " + messagesPath(queueID) + " HTTP/1.1\r\nHost: retsu\r\nContent-Type: application/json\r\n"
	body := `{"payload":"a","priority":"LOW"}`

	_, err := io.WriteString(conn.conn,
		enqueue+fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body)+
			enqueue+fmt.Sprintf("Transfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n", len(body), body)+
			enqueue+fmt.Sprintf("Transfer-Encoding: chunked\r\nContent-Length: %d\r\n\r\n%x\r\n%s\r\n0\r\n\r\n", len(body), len(body), body))
	is.NoErr(err)

	is.Equal(conn.read().StatusCode, http.StatusCreated) // the first request is served
	is.Equal(conn.read().StatusCode, http.StatusCreated) // the second too
	assertProblem(t, conn.read(), http.StatusBadRequest, "ambiguous_framing")
	is.Equal(c.stats(queueID).Priorities[2].Ready, int64(2)) // the third stored nothing
}

func TestOptionsAsterisk_NeedsATokenAndNamesNoRoute(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	h := httpapi.NewHandler(stubService{}, httpapi.Options{APITokens: []string{token}})
	conn := dialRaw(t, realServer(t, h, httpapi.ServerOptions{}))

	res := conn.send("OPTIONS * HTTP/1.1\r\nHost: retsu\r\n\r\n")
	assertProblem(t, res, http.StatusUnauthorized, "unauthorized")
	res = conn.send("OPTIONS * HTTP/1.1\r\nHost: retsu\r\nAuthorization: Bearer " + token + "\r\n\r\n")

	assertProblem(t, res, http.StatusNotFound, "not_found")
	is.Equal(res.Header.Get("Allow"), "") // and tells no methods
}

func TestHeadersTooLarge_IsAProblemAndClosesTheConnection(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	const limit = 4096
	h := httpapi.NewHandler(stubService{}, httpapi.Options{MaxHeaderBytes: limit})
	addr := realServer(t, h, httpapi.ServerOptions{MaxHeaderBytes: limit})
	request := func(headerBytes int) string {
		head := "GET /healthz HTTP/1.1\r\nHost: retsu\r\n"
		filler := headerBytes - len(head) - len("X-Filler: \r\n\r\n")
		return head + "X-Filler: " + strings.Repeat("a", filler) + "\r\n\r\n"
	}

	fits := dialRaw(t, addr)
	is.Equal(fits.send(request(limit)).StatusCode, http.StatusOK) // headers of exactly the limit are served
	over := dialRaw(t, addr)
	res := over.send(request(limit + 1))
	is.True(res.Close) // one byte more closes the connection (Connection: close)
	assertProblem(t, res, http.StatusRequestHeaderFieldsTooLarge, "headers_too_large")
	is.True(over.closed())
	far := dialRaw(t, addr)
	res = far.send(request(4 * limit))
	is.Equal(res.StatusCode, http.StatusRequestHeaderFieldsTooLarge)      // far beyond it, net/http answers by itself
	is.True(res.Header.Get("Content-Type") != "application/problem+json") // in plain text, as docs/queue-api.md says
}

func TestRequestTimeout_IsLoggedAsAWarning_AtMostOnceASecond(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	var logs syncBuffer
	h := httpapi.NewHandler(hangingService{}, httpapi.Options{
		RequestTimeout: 10 * time.Millisecond,
		Logger:         slog.New(slog.NewJSONHandler(&logs, nil)),
	})

	for range 3 {
		res := serve(h, newRequest(http.MethodPost, dequeuePath(unknownID), "", ""))
		is.Equal(res.StatusCode, http.StatusServiceUnavailable) // the request ran out of its time
	}

	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	is.Equal(len(lines), 1) // one warning for three timeouts within a second
	var line struct {
		Level, Msg, Path string
		NotLogged        int `json:"not_logged"`
	}
	is.NoErr(json.NewDecoder(bytes.NewReader([]byte(lines[0]))).Decode(&line))
	is.Equal(line.Level, "WARN")                               // at warn level, not only debug
	is.True(strings.Contains(line.Msg, "ran out of its time")) // saying what happened
	is.Equal(line.Path, dequeuePath(unknownID))                // to which request
	is.Equal(line.NotLogged, 0)                                // the first of its second
}

func TestFraming_FoldedOrPaddedFramingHeaders_AreRefusedAndTheConnectionClosed(t *testing.T) {
	t.Parallel()
	body := `{"payload":"smuggled","priority":"LOW"}`
	chunked := fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", len(body), body)
	padding := strings.Repeat(" ", 300)
	for name, headers := range map[string]string{
		"folded Transfer-Encoding":     "Transfer-Encoding:\r\n chunked\r\nContent-Length: 5\r\n",
		"folded Content-Length":        "Transfer-Encoding: chunked\r\nContent-Length:\r\n\t5\r\n",
		"folded into another header":   "X-Note: a\r\n Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n",
		"padded Transfer-Encoding":     "Transfer-Encoding:" + padding + "chunked\r\nContent-Length: 5\r\n",
		"padded Transfer-Encoding, CL": "Content-Length: 5\r\nTransfer-Encoding: \t" + padding + "chunked" + padding + "\r\n",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			c := setup(t)
			queueID := c.createQueueNamed("emails")
			conn := dialRaw(t, realServer(t, c.handler, httpapi.ServerOptions{}))

			res := conn.send("POST " + messagesPath(queueID) + " HTTP/1.1\r\nHost: retsu\r\nContent-Type: application/json\r\n" +
				headers + "\r\n" + chunked)

			is.True(res.Close) // the server closes the connection
			assertProblem(t, res, http.StatusBadRequest, "ambiguous_framing")
			_, ok := c.dequeue(queueID)
			is.True(!ok) // and stored nothing
		})
	}
}

func TestFraming_PaddedValuesAndLongLines_AreServedOnOneConnection(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	c := setup(t)
	queueID := c.createQueueNamed("emails")
	conn := dialRaw(t, realServer(t, c.handler, httpapi.ServerOptions{}))
	enqueue := "POST " + messagesPath(queueID) + "?" + strings.Repeat("x", 400) + " HTTP/1.1\r\nHost: retsu\r\nContent-Type: application/json\r\n"
	body := `{"payload":"a","priority":"LOW"}`
	padding := strings.Repeat(" ", 300)

	for _, request := range []string{
		enqueue + fmt.Sprintf("Content-Length:%s%d%s\r\n\r\n%s", padding, len(body), padding, body),
		enqueue + fmt.Sprintf("Transfer-Encoding:\t%schunked \r\n\r\n%x\r\n%s\r\n0\r\n\r\n", padding, len(body), body),
		enqueue + fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body),
	} {
		res := conn.send(request)
		is.Equal(res.StatusCode, http.StatusCreated) // each request is served
		is.True(!res.Close)                          // on the same connection
	}
}
