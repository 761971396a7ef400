package process_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/retsu/retsu/app/process"
)

const sqsSecret = "sqs-secret-0123456789abcdef"

func TestParseServeConfig_SQS_OffByDefault(t *testing.T) {
	t.Parallel()
	is := is.New(t)

	c, err := process.ParseServeConfig(nil, env(withDatabase), io.Discard)

	is.NoErr(err)
	is.Equal(c.SQSAddr, "")                   // no SQS endpoint unless asked for
	is.Equal(c.SQSCredentials, []string(nil)) // and no credentials
	is.Equal(c.SQSRegion, "")                 // and ARNs in the region of each request's signature
}

func TestParseServeConfig_SQS_Region(t *testing.T) {
	t.Parallel()
	is := is.New(t)

	c, err := process.ParseServeConfig([]string{"--sqs-region", "eu-north-1"}, env(withDatabase), io.Discard)
	_, badErr := process.ParseServeConfig(nil, env(merge(withDatabase, "RETSU_SQS_REGION", "EU West 1")), io.Discard)

	is.NoErr(err)
	is.Equal(c.SQSRegion, "eu-north-1")
	var configErr *process.ConfigError
	is.True(errors.As(badErr, &configErr))          // not a region's name
	is.Equal(configErr.Setting, "RETSU_SQS_REGION") // naming the setting
}

func TestParseServeConfig_SQS_AddressAndCredentials(t *testing.T) {
	t.Parallel()
	is := is.New(t)

	c, err := process.ParseServeConfig([]string{"--sqs-addr", "127.0.0.1:9324"},
		env(merge(withDatabase, "RETSU_SQS_CREDENTIALS", "AKID1:"+sqsSecret+", AKID2:"+sqsSecret+"2")), io.Discard)

	is.NoErr(err)
	is.Equal(c.SQSAddr, "127.0.0.1:9324")
	is.Equal(c.SQSCredentials, []string{"AKID1:" + sqsSecret, "AKID2:" + sqsSecret + "2"}) // every pair, trimmed
}

func TestParseServeConfig_SQS_BadCredentials_AreRefusedWithoutTheSecret(t *testing.T) {
	t.Parallel()
	for name, value := range map[string]string{
		"no colon":     "AKID" + sqsSecret,
		"short secret": "AKID:short-secret",
		"no key ID":    ":" + sqsSecret,
		"repeated key": "AKID:" + sqsSecret + ",AKID:" + sqsSecret,
		"only a comma": ",",
		"space in key": "AK ID:" + sqsSecret,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)

			_, err := process.ParseServeConfig(nil, env(merge(withDatabase, "RETSU_SQS_CREDENTIALS", value)), io.Discard)

			var configErr *process.ConfigError
			is.True(errors.As(err, &configErr))                     // refused
			is.Equal(configErr.Setting, "RETSU_SQS_CREDENTIALS")    // naming the setting
			is.True(!strings.Contains(err.Error(), "short-secret")) // never the secret
			is.True(!strings.Contains(err.Error(), sqsSecret))
		})
	}
}

func TestParseServeConfig_SQS_WithAPITokensButNoCredentials_IsRefused(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	vars := merge(merge(withDatabase, "RETSU_API_TOKENS", "tok-0123456789abcdef"), "RETSU_SQS_ADDR", "127.0.0.1:9324")

	_, err := process.ParseServeConfig(nil, env(vars), io.Discard)
	_, withCredentials := process.ParseServeConfig(nil, env(merge(vars, "RETSU_SQS_CREDENTIALS", "AKID:"+sqsSecret)), io.Discard)

	var configErr *process.ConfigError
	is.True(errors.As(err, &configErr))                                   // an open SQS endpoint beside a protected API
	is.True(strings.Contains(configErr.Setting, "RETSU_SQS_CREDENTIALS")) // names what is missing
	is.NoErr(withCredentials)                                             // credentials settle it
}

func TestConfigLog_CountsTheSQSCredentials(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	cfg, err := process.ParseServeConfig([]string{"--sqs-addr", "127.0.0.1:9324"},
		env(merge(withDatabase, "RETSU_SQS_CREDENTIALS", "AKID:"+sqsSecret)), io.Discard)
	is.NoErr(err)
	var logs bytes.Buffer

	slog.New(slog.NewTextHandler(&logs, nil)).Info("configuration", "config", cfg)

	is.True(!strings.Contains(logs.String(), sqsSecret))                 // the secret never reaches the log
	is.True(strings.Contains(logs.String(), "config.sqs_credentials=1")) // they are counted
	is.True(strings.Contains(logs.String(), "config.sqs_addr=127.0.0.1:9324"))
}

func TestServer_APIAndSQSEndpoint_ShareTheConnectionLimit(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	client := &http.Client{Timeout: 300 * time.Millisecond, Transport: &http.Transport{DisableKeepAlives: true}}
	apiAddr, sqsAddr := startWithSQS(t, client, "--max-connections=16")

	var held []net.Conn
	for range 16 {
		conn, err := net.Dial("tcp", sqsAddr)
		is.NoErr(err)
		defer conn.Close()
		held = append(held, conn)
	}
	time.Sleep(200 * time.Millisecond) // the SQS endpoint accepts its 16 connections

	_, err := client.Get("http://" + apiAddr + "/healthz")
	is.True(err != nil) // the API accepts no 17th: the SQS port used up the limit of both
	is.NoErr(held[0].Close())
	res, err := client.Get("http://" + apiAddr + "/healthz")
	is.NoErr(err) // one closed, the API accepts again
	res.Body.Close()
}

func TestServer_SQSEndpoint_RefusesRequestsFramedTwoWays(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	client := &http.Client{Timeout: 5 * time.Second}
	_, sqsAddr := startWithSQS(t, client)
	conn, err := net.Dial("tcp", sqsAddr)
	is.NoErr(err)
	defer conn.Close()
	body := `{"QueueNamePrefix":"x"}`

	_, err = io.WriteString(conn, "POST / HTTP/1.1\r\nHost: "+sqsAddr+"\r\nContent-Type: application/x-amz-json-1.0\r\n"+
		"X-Amz-Target: AmazonSQS.ListQueues\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n"+
		fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", len(body), body))
	is.NoErr(err)
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	is.NoErr(err)
	defer res.Body.Close()

	is.Equal(res.StatusCode, http.StatusBadRequest) // the SQS port refuses what the API's refuses
	is.True(res.Close)                              // and closes the connection
	answer, err := io.ReadAll(res.Body)
	is.NoErr(err)
	is.True(strings.Contains(string(answer), "Content-Length and Transfer-Encoding")) // saying why
}

// startWithSQS serves the API and the SQS endpoint over the memory stores, with args, on
// free ports until the test ends, and returns their addresses once the API answers.
func startWithSQS(t *testing.T, client *http.Client, args ...string) (apiAddr, sqsAddr string) {
	t.Helper()
	is := is.New(t)
	apiAddr, sqsAddr = freeAddress(t), freeAddress(t)
	cfg, err := process.ParseServeConfig(append([]string{"--store=memory", "--workers=false", "--addr", apiAddr, "--sqs-addr", sqsAddr},
		args...), env(nil), io.Discard)
	is.NoErr(err)
	ctx, cancel := context.WithCancel(context.Background())
	server, err := process.NewServer(ctx, cfg, slog.New(slog.DiscardHandler))
	is.NoErr(err)
	stopped := make(chan error, 1)
	go func() { stopped <- server.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		is.NoErr(<-stopped)
		server.Close()
	})
	waitForHealthz(t, client, apiAddr)
	return apiAddr, sqsAddr
}

// freeAddress returns a loopback address with a port that was free a moment ago.
func freeAddress(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// waitForHealthz polls the API at addr until it answers.
func waitForHealthz(t *testing.T, client *http.Client, addr string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if res, err := client.Get("http://" + addr + "/healthz"); err == nil {
			res.Body.Close()
			return
		}
	}
	t.Fatal("the API did not answer /healthz")
}
