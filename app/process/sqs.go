package process

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"regexp"
	"slices"
	"strings"

	"github.com/retsu/retsu/adapters/capacity"
	"github.com/retsu/retsu/adapters/httpapi"
	"github.com/retsu/retsu/adapters/sqsapi"
	"github.com/retsu/retsu/app"
	"github.com/retsu/retsu/domain"
)

// The settings of the SQS-compatible endpoint (docs/sqs.md).
const (
	sqsAddrSetting        = "RETSU_SQS_ADDR (--sqs-addr)"
	sqsCredentialsSetting = "RETSU_SQS_CREDENTIALS (--sqs-credentials)"
)

// sqs registers the settings of the SQS-compatible endpoint.
func (b *binder) sqs(c *Config) {
	b.string(&c.SQSAddr, "sqs-addr", "RETSU_SQS_ADDR", "", "address of the SQS-compatible endpoint, such as 127.0.0.1:9324 (empty: no endpoint)")
	bindSecret(b, &c.SQSCredentials, "sqs-credentials", "RETSU_SQS_CREDENTIALS",
		"comma-separated ACCESS_KEY_ID:SECRET_KEY pairs that SQS requests must be signed with (none: no authentication)", parseSQSCredentials)
	bind(b, &c.SQSRegion, "sqs-region", "RETSU_SQS_REGION", "",
		"region of the SQS endpoint's queue ARNs, such as eu-west-1 (none: the region each request is signed for, else "+sqsapi.DefaultRegion+")", parseSQSRegion)
}

// sqsRegion is the form of an AWS region's name.
var sqsRegion = regexp.MustCompile(`^[a-z0-9-]{1,64}$`)

// parseSQSRegion reads a region's name, which goes into ARNs as it is.
func parseSQSRegion(s string) (string, error) {
	if !sqsRegion.MatchString(s) {
		return "", errors.New("must be a region's name: lowercase letters, digits and hyphens, such as eu-west-1")
	}
	return s, nil
}

// parseSQSCredentials reads ACCESS_KEY_ID:SECRET_KEY pairs. Malformed values are reported
// without the secrets themselves.
func parseSQSCredentials(s string) ([]string, error) {
	var pairs, keyIDs []string
	for pair := range strings.SplitSeq(s, ",") {
		pair = strings.TrimSpace(pair)
		if pair == "" {
			continue
		}
		keyID, secret, ok := strings.Cut(pair, ":")
		switch {
		case !ok || keyID == "" || strings.ContainsAny(keyID, " \t\r\n/"):
			return nil, errors.New("every pair must be ACCESS_KEY_ID:SECRET_KEY, with an access key ID without spaces or slashes")
		case len(secret) < minTokenLength || strings.ContainsAny(secret, " \t\r\n"):
			return nil, fmt.Errorf("the secret key of %s must be at least %d characters without spaces", keyID, minTokenLength)
		case slices.Contains(keyIDs, keyID):
			return nil, fmt.Errorf("the access key ID %s appears twice", keyID)
		}
		pairs, keyIDs = append(pairs, pair), append(keyIDs, keyID)
	}
	if len(pairs) == 0 {
		return nil, errors.New("must hold at least one ACCESS_KEY_ID:SECRET_KEY pair when set")
	}
	return pairs, nil
}

// checkSQS refuses an SQS endpoint without credentials beside an API that needs tokens:
// it would serve without authentication what the API protects.
func checkSQS(c Config) error {
	if c.SQSAddr != "" && len(c.APITokens) > 0 && len(c.SQSCredentials) == 0 {
		return &ConfigError{sqsCredentialsSetting, "is required when RETSU_API_TOKENS is set: the SQS endpoint would serve without authentication what the API protects"}
	}
	return nil
}

// newSQSHandler returns the SQS endpoint's handler over svc, or nil when cfg has no SQS
// address.
func newSQSHandler(svc app.Retsu, cfg Config, shared *capacity.Shared, log *slog.Logger) http.Handler {
	if cfg.SQSAddr == "" {
		return nil
	}
	credentials := make(map[string]string, len(cfg.SQSCredentials))
	for _, pair := range cfg.SQSCredentials {
		keyID, secret, _ := strings.Cut(pair, ":")
		credentials[keyID] = secret
	}
	handler := sqsapi.NewHandler(svc, sqsapi.Options{
		Logger:         log.With("endpoint", "sqs"),
		Credentials:    credentials,
		Capacity:       shared,
		RequestTimeout: cfg.RequestTimeout,
		Region:         cfg.SQSRegion,
	})
	// Its listener follows the framing of requests as the API's does, so that the
	// endpoint refuses the same smuggling attempts.
	return httpapi.GuardFraming(handler, sqsapi.RefuseRequest)
}

// sqsEndpoint is the SQS endpoint's server while it serves; nil when there is none.
type sqsEndpoint struct {
	server *http.Server
	served chan error
}

// startSQS listens on cfg.SQSAddr and serves the SQS endpoint there, beside the API. Its
// server has the API's bounds, except that an answer may take the longest wait of a
// ReceiveMessage longer.
func (s *Server) startSQS() (*sqsEndpoint, error) {
	if s.sqsHandler == nil {
		return nil, nil
	}
	listener, err := net.Listen("tcp", s.cfg.SQSAddr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s for the SQS endpoint: %w", s.cfg.SQSAddr, err)
	}
	e := &sqsEndpoint{served: make(chan error, 1), server: httpapi.NewServer(s.sqsHandler, httpapi.ServerOptions{
		ReadHeaderTimeout: s.cfg.ReadHeaderTimeout,
		ReadTimeout:       s.cfg.ReadTimeout,
		WriteTimeout:      s.cfg.WriteTimeout + domain.MaxWait,
		IdleTimeout:       s.cfg.IdleTimeout,
		MaxHeaderBytes:    s.cfg.MaxHeaderBytes,
		Logger:            s.log,
	})}
	go func() {
		e.served <- e.server.Serve(httpapi.NewListener(capacity.Listener(listener, s.capacity.Connections)))
	}()
	s.log.Info("serving the SQS endpoint", "addr", listener.Addr().String(), "signed", len(s.cfg.SQSCredentials) > 0)
	return e, nil
}

// failed receives the error of a server that stopped serving by itself; never without one.
func (e *sqsEndpoint) failed() <-chan error {
	if e == nil {
		return nil
	}
	return e.served
}

// shutdown stops the server as the API's stops: no new connections, and the requests in
// flight answered until ctx ends. The service's Close has already ended the waits of the
// receives.
func (e *sqsEndpoint) shutdown(ctx context.Context) error {
	if e == nil {
		return nil
	}
	if err := e.server.Shutdown(ctx); err != nil {
		return fmt.Errorf("shutdown of the SQS endpoint: %w", err)
	}
	if err := <-e.served; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve the SQS endpoint: %w", err)
	}
	return nil
}
