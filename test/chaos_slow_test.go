package test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/retsu/retsu/test/history"
)

// The server timeouts of the slow-clients scenario.
const (
	slowReadHeaderTimeout = time.Second
	slowReadTimeout       = 2 * time.Second
	// slowSlack is how much later than its timeout a connection may be closed on this
	// loaded machine.
	slowSlack = 2 * time.Second
	// slowByteInterval is the pace of the slow clients: one byte at a time.
	slowByteInterval = 50 * time.Millisecond
)

// slowClient is one kind of client that sends its request too slowly.
type slowClient struct {
	name string
	// head is sent at once, tail one byte at a time.
	head, tail string
	// closedWithin bounds how long the server may keep the connection open.
	closedWithin time.Duration
	// reachesHandler is set when the headers arrive whole, so that an answer comes from
	// Retsu's handler and must be problem+json; net/http answers a request whose headers
	// time out with plain text, or not at all.
	reachesHandler bool
}

func slowClients(address, queueID string) []slowClient {
	// Trailing spaces keep the JSON valid and make the body take 10 s at the slow pace.
	body := `{"payload":"slow","priority":"LOW"}` + strings.Repeat(" ", 200)
	headers := fmt.Sprintf("POST /v1/queues/%s/messages HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n",
		queueID, address, len(body))
	return []slowClient{
		{"silent", "", "", slowReadHeaderTimeout + slowSlack, false},
		{"headers one byte at a time", "", headers + body, slowReadHeaderTimeout + slowSlack, false},
		{"body one byte at a time", headers, body, slowReadTimeout + slowSlack, true},
	}
}

// slowOutcome is what became of a slow client's connection.
type slowOutcome struct {
	client slowClient
	lived  time.Duration
	answer string // what the server sent before it closed the connection
	err    error
}

// trickle sends the client's request at its pace until the server closes the connection,
// or until twice the limit has passed.
func trickle(address string, client slowClient) slowOutcome {
	outcome := slowOutcome{client: client}
	conn, err := net.Dial("tcp", address)
	if err != nil {
		outcome.err = err
		return outcome
	}
	defer conn.Close()
	start := time.Now()
	closed := make(chan string, 1)
	go func() {
		answer, _ := io.ReadAll(conn) // until the server closes or resets the connection
		closed <- string(answer)
	}()
	_, _ = io.WriteString(conn, client.head)
	for i := 0; time.Since(start) < 2*client.closedWithin; i++ {
		select {
		case outcome.answer = <-closed:
			outcome.lived = time.Since(start)
			return outcome
		case <-time.After(slowByteInterval):
		}
		if i < len(client.tail) {
			_, _ = conn.Write([]byte{client.tail[i]}) // fails once the server has closed
		}
	}
	outcome.lived, outcome.err = time.Since(start), fmt.Errorf("still open after %v", time.Since(start))
	return outcome
}

func (e *chaosEnv) testSlowClients(t *testing.T) {
	is := is.New(t)
	s := e.newScenario(t, true, drainSize{}, "RETSU_READ_HEADER_TIMEOUT="+slowReadHeaderTimeout.String(),
		"RETSU_READ_TIMEOUT="+slowReadTimeout.String())
	const perKind = 30
	outcomes := make(chan slowOutcome, 3*perKind)
	var slow sync.WaitGroup
	for _, client := range slowClients(s.retsu.address, s.drain.queueID) {
		for range perKind {
			slow.Go(func() { outcomes <- trickle(s.retsu.address, client) })
		}
	}

	slowest := s.servePromptly(t, slowReadTimeout+slowSlack)
	slow.Wait()
	close(outcomes)

	longest, answers := map[string]time.Duration{}, map[string]map[string]int{}
	for o := range outcomes {
		if o.err != nil || o.lived > o.client.closedWithin {
			t.Errorf("%s: connection lived %v (limit %v): %v", o.client.name, o.lived.Round(time.Millisecond), o.client.closedWithin, o.err)
		}
		longest[o.client.name] = max(longest[o.client.name], o.lived.Round(time.Millisecond))
		if answers[o.client.name] == nil {
			answers[o.client.name] = map[string]int{}
		}
		answers[o.client.name][checkSlowAnswer(t, o)]++
	}
	t.Logf("slow connections, the longest-lived of each kind: %v; their answers: %v", longest, answers)
	t.Logf("meanwhile a normal client got %s, the slowest in %v", s.rec.answers, slowest.Round(time.Millisecond))
	final, err := finalState(t.Context(), s.db, s.drain.queueID)
	is.NoErr(err)
	report := history.Check(s.rec.h, final, chaosLimits)
	t.Log(report)
	is.True(report.OK())          // the normal client's messages kept every promise, and no slow request got through
	is.Equal(report.Remaining, 0) // and were all acknowledged
}

// promptly bounds the answers to a normal client while slow clients hold connections.
const promptly = time.Second

// servePromptly works a message through its lifecycle again and again for the given time,
// as a normal client, and checks that every answer is a success that comes promptly. It
// returns the slowest answer's time.
func (s *scenario) servePromptly(t *testing.T, duration time.Duration) time.Duration {
	t.Helper()
	is := is.New(t)
	var slowest time.Duration
	timed := func(op func() history.Outcome) {
		start := time.Now()
		outcome := op()
		slowest = max(slowest, time.Since(start))
		is.Equal(outcome, history.OK) // a normal client is served
	}
	for i, end := 0, time.Now().Add(duration); time.Now().Before(end); i++ {
		timed(func() history.Outcome { return s.rec.enqueue(s.drain.queueID, fmt.Sprintf("normal %d", i), "HIGH") })
		var delivery *history.Delivery
		timed(func() (outcome history.Outcome) { delivery, outcome = s.rec.dequeue(s.drain.queueID); return outcome })
		is.True(delivery != nil) // and gets its message back
		timed(func() history.Outcome { return s.rec.acknowledge(s.drain.queueID, delivery) })
	}
	is.True(slowest < promptly) // promptly
	return slowest
}

// checkSlowAnswer checks the answer that a slow client got before its connection closed,
// if any: never a 5xx, and problem+json when it comes from the handler. It returns the
// answer's status and code, or "none".
func checkSlowAnswer(t *testing.T, o slowOutcome) string {
	t.Helper()
	if o.answer == "" {
		return "none"
	}
	res, err := http.ReadResponse(bufio.NewReader(strings.NewReader(o.answer)), nil)
	if err != nil {
		t.Errorf("%s: the server sent %.200q, not an HTTP answer", o.client.name, o.answer)
		return "garbage"
	}
	body, _ := io.ReadAll(res.Body)
	code := problemCode(res, body)
	if res.StatusCode >= 500 || o.client.reachesHandler && code == "" {
		t.Errorf("%s: the server answered %d %.200q", o.client.name, res.StatusCode, body)
	}
	return strings.TrimSpace(fmt.Sprintf("%d %s", res.StatusCode, code))
}
