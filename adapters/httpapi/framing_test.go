package httpapi

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"net/textproto"
	"regexp"
	"strings"
	"testing"

	"github.com/matryer/is"
)

// framerFlags feeds stream to a framer in pieces of size bytes and returns its flags, and
// whether it still follows the stream.
func framerFlags(stream string, size int) (flags []bool, following bool) {
	f := &framer{}
	for len(stream) > 0 {
		n := min(size, len(stream))
		f.feed([]byte(stream[:n]))
		stream = stream[n:]
	}
	for _, v := range f.verdicts {
		flags = append(flags, v != verdictClear)
	}
	return flags, f.state != stateLost
}

func TestFramer_FlagsTheRequestsWithBothFramings(t *testing.T) {
	t.Parallel()
	const post = "POST /x HTTP/1.1\r\nHost: h\r\n"
	tests := []struct {
		name   string
		stream string
		flags  []bool
	}{
		{"no body", "GET / HTTP/1.1\r\nHost: h\r\n\r\n", []bool{false}},
		{"length", post + "Content-Length: 3\r\n\r\nabc", []bool{false}},
		{"chunked", post + "Transfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n", []bool{false}},
		{"both", post + "Content-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n", []bool{true}},
		{"both, in another case and order", post + "transfer-encoding: CHUNKED\r\ncontent-length: 99\r\n\r\n0\r\n\r\n", []bool{true}},
		{"both in HTTP/1.0, which ignores Transfer-Encoding", "POST /x HTTP/1.0\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\nabc", []bool{false}},
		{"header lookalikes in a body", post + "Content-Length: 46\r\n\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n", []bool{false}},
		{"header lookalikes in chunks", post + "Transfer-Encoding: chunked\r\n\r\n1a;ext=1\r\nPOST /y HTTP/1.1\r\nContent-\r\n0\r\nX: y\r\n\r\n", []bool{false}},
		{"pipelined", post + "Content-Length: 1\r\n\r\na" + post + "Transfer-Encoding: chunked\r\nContent-Length: 1\r\n\r\n0\r\n\r\n" + "\r\n" + post + "\r\n", []bool{false, true, false}},
		{"equal lengths twice", post + "Content-Length: 1\r\nContent-Length: 1\r\n\r\na" + post + "\r\n", []bool{false, false}},
		{"bare line feeds", "POST /x HTTP/1.1\nHost: h\nContent-Length: 1\nTransfer-Encoding: chunked\n\n0\r\n\r\n", []bool{true}},
		{"folded Transfer-Encoding", post + "Transfer-Encoding:\r\n chunked\r\n\r\n0\r\n\r\n" + post + "\r\n", []bool{true, false}},
		{"folded other header", post + "X: a\r\n\tb\r\nContent-Length: 1\r\n\r\na" + post + "\r\n", []bool{true, false}},
		{"blank folded line", post + "X: a\r\n \r\nContent-Length: 1\r\n\r\na" + post + "\r\n", []bool{true, false}},
		{"padded values", post + "Content-Length:" + strings.Repeat(" \t", 200) + "1" + strings.Repeat(" ", 300) + "\r\n\r\na" +
			post + "Transfer-Encoding:" + strings.Repeat(" ", 300) + "chunked\t\r\n\r\n0\r\n\r\n", []bool{false, false}},
		{"long request line", "POST /x?" + strings.Repeat("q", 1000) + " HTTP/1.1\r\nContent-Length: 1\r\n\r\na" + post + "\r\n", []bool{false, false}},
	}
	for _, tc := range tests {
		for _, size := range []int{1, 7, len(tc.stream)} {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				is := is.New(t)

				flags, following := framerFlags(tc.stream, size)

				is.True(following)        // the framer follows the stream to its end
				is.Equal(flags, tc.flags) // and flags exactly the requests with both framings
			})
		}
	}
}

func TestFramer_StopsFollowingWhatNetHTTPRefuses(t *testing.T) {
	t.Parallel()
	const post = "POST /x HTTP/1.1\r\nHost: h\r\n"
	for name, stream := range map[string]string{
		"two transfer encodings": post + "Transfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n",
		"gzip":                   post + "Transfer-Encoding: gzip, chunked\r\nContent-Length: 1\r\n\r\n",
		"different lengths":      post + "Content-Length: 1\r\nContent-Length: 2\r\n\r\nab",
		"signed length":          post + "Content-Length: +1\r\n\r\na",
		"malformed chunk size":   post + "Transfer-Encoding: chunked\r\n\r\nzz\r\n",
		"no version":             "GET /\r\n\r\n",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)

			flags, following := framerFlags(stream+post+"Content-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n", 5)

			is.True(!following)                                 // the framer stops following the connection
			is.True(!strings.Contains(fmtFlags(flags), "true")) // and gives no verdict past it, which the handler refuses
		})
	}
}

func TestFramer_RefusesAFramingHeaderTooLongToFollow(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	f := &framer{}

	f.feed([]byte("POST /x HTTP/1.1\r\nContent-Length: " + strings.Repeat("0", 300) + "1\r\n\r\na"))

	is.Equal(f.nextVerdict(), verdictUnfollowed) // a length that net/http reads but the framer cannot keep is refused
	is.Equal(f.nextVerdict(), verdictUnfollowed) // and so is any request after it
}

func fmtFlags(flags []bool) string {
	var b strings.Builder
	for _, f := range flags {
		if f {
			b.WriteString("true ")
		}
	}
	return b.String()
}

// FuzzFramer_AgreesWithNetHTTP reads any stream of requests with net/http, as its server
// does, and checks the framer's verdict of every request that net/http reads in full:
// folded when its header block folds a line, else two framings exactly when net/http took
// a chunked body and the header block holds a Content-Length, else clear. The framer may
// refuse to follow (verdictUnfollowed) only a request with a framing header longer than it
// keeps.
func FuzzFramer_AgreesWithNetHTTP(f *testing.F) {
	const post = "POST /x HTTP/1.1\r\nHost: h\r\n"
	for _, seed := range []string{
		post + "Content-Length: 3\r\n\r\nabc" + post + "Transfer-Encoding: chunked\r\nContent-Length: 2\r\n\r\n2\r\nab\r\n0\r\n\r\n",
		post + "Transfer-Encoding: chunked\r\n\r\n3;x=y\r\nabc\r\n0\r\nT: v\r\n\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n",
		"POST /x HTTP/1.0\r\nTransfer-Encoding: chunked\r\nContent-Length: 1\r\n\r\na" + post + "\r\n",
		post + "X: a\r\n b\r\nContent-Length: 1\r\n\r\na",
		"GET / HTTP/1.1\nHost: h\nContent-Length: 0\n\n",
		post + "Transfer-Encoding:\r\n chunked\r\nContent-Length: 1\r\n\r\n0\r\n\r\n",
		post + "Content-Length:   1  \r\n \r\n\r\na" + post + "Transfer-Encoding: \tchunked\t\r\n\r\n0\r\n\r\n",
	} {
		f.Add([]byte(seed), uint8(3))
	}
	f.Fuzz(func(t *testing.T, stream []byte, piece uint8) {
		want := netHTTPFlags(stream)
		framer := &framer{}
		for rest := stream; len(rest) > 0; {
			n := min(int(piece)+1, len(rest))
			framer.feed(rest[:n])
			rest = rest[n:]
		}
		for i, request := range want {
			got := framer.nextVerdict()
			if got != request.verdict && (got != verdictUnfollowed || !request.longFraming) {
				t.Fatalf("request %d: framer says %v, net/http %v; stream %q", i, got, request.verdict, stream)
			}
		}
	})
}

// readRequest is what a test knows of a request that net/http read in full.
type readRequest struct {
	verdict verdict
	// longFraming tells that a Content-Length or Transfer-Encoding line of its header block
	// is longer than a framer keeps.
	longFraming bool
}

// netHTTPFlags reads the requests of stream as net/http's server does, up to the first it
// cannot read in full, and returns the verdict each deserves.
func netHTTPFlags(stream []byte) []readRequest {
	source := bytes.NewReader(stream)
	reader := bufio.NewReader(source)
	var flags []readRequest
	lastMethod := ""
	for {
		if lastMethod == http.MethodPost {
			for peek, _ := reader.Peek(1); len(peek) == 1 && (peek[0] == '\r' || peek[0] == '\n'); peek, _ = reader.Peek(1) {
				_, _ = reader.Discard(1)
			}
		}
		start := len(stream) - source.Len() - reader.Buffered()
		req, err := http.ReadRequest(reader)
		if err != nil {
			return flags
		}
		if _, err := io.Copy(io.Discard, req.Body); err != nil {
			return flags
		}
		request := readRequest{verdict: verdictClear, longFraming: hasLongFramingLine(stream[start:])}
		switch {
		case foldsALine(stream[start:]):
			request.verdict = verdictFolded
		case len(req.TransferEncoding) > 0 && hasContentLength(stream[start:]):
			request.verdict = verdictTwoFramings
		}
		flags = append(flags, request)
		lastMethod = req.Method
	}
}

// headerLines returns the lines of the header block at the start of raw, after its request
// line, as textproto reads them: up to an empty line, without their line breaks.
func headerLines(raw []byte) []string {
	lines := strings.Split(string(raw), "\n")
	if len(lines) > 0 {
		lines = lines[1:]
	}
	for i, line := range lines {
		lines[i] = strings.TrimSuffix(line, "\r")
		if lines[i] == "" {
			return lines[:i]
		}
	}
	return lines
}

// foldsALine reports whether the header block at the start of raw has a line that starts
// with a space or a tab.
func foldsALine(raw []byte) bool {
	for _, line := range headerLines(raw) {
		if line[0] == ' ' || line[0] == '\t' {
			return true
		}
	}
	return false
}

// hasLongFramingLine reports whether the header block at the start of raw has a
// Content-Length or Transfer-Encoding line longer than a framer keeps, once its runs of
// spaces and tabs are cut to one.
func hasLongFramingLine(raw []byte) bool {
	blanks := regexp.MustCompile(`[ \t]+`)
	for _, line := range headerLines(raw) {
		name, _, _ := strings.Cut(line, ":")
		long := len(blanks.ReplaceAllString(line, " ")) > keptLineBytes
		if long && (strings.EqualFold(name, "Content-Length") || strings.EqualFold(name, "Transfer-Encoding")) {
			return true
		}
	}
	return false
}

// hasContentLength reports whether the header block at the start of raw, after its request
// line, has a Content-Length field.
func hasContentLength(raw []byte) bool {
	tp := textproto.NewReader(bufio.NewReader(bytes.NewReader(raw)))
	if _, err := tp.ReadLine(); err != nil {
		return false
	}
	header, err := tp.ReadMIMEHeader()
	return err == nil && len(header["Content-Length"]) > 0
}
