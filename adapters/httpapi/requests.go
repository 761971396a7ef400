package httpapi

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/gorilla/mux"

	"github.com/retsu/retsu/domain"
	"github.com/retsu/retsu/ports"
)

// This file reads requests: the IDs of the address, the members of each body and the query
// of a listing. decode.go holds the rules of the body itself (content type, size, JSON).

// The members each request body accepts.
var (
	createQueueFields = []string{"name", "visibility_timeout_seconds", "max_delivery_attempts", "default_message_ttl_seconds"}
	updateQueueFields = []string{"visibility_timeout_seconds", "max_delivery_attempts", "default_message_ttl_seconds"}
	enqueueFields     = []string{"payload", "priority", "ttl_seconds"}
	acknowledgeFields = []string{"receipt_handle"}
)

// pathID returns the ID in the path variable name. Returns invalid_path.
func pathID(r *http.Request, name string) (domain.ID, error) {
	id, err := domain.ParseID(mux.Vars(r)[name])
	if err != nil {
		return domain.ID{}, requestError(codeInvalidPath, name+" in the address must be a UUID such as 019c9a65-7d3a-7c6b-8a9d-123456789abc")
	}
	return id, nil
}

// readObject reads a JSON body holding one object with members among allowed.
func readObject(r *http.Request, allowed []string) (object, error) {
	body, err := readJSONBody(r)
	if err != nil {
		return nil, err
	}
	return parseObject(body, allowed...)
}

// readOptionalEmptyObject accepts no body at all, or a JSON body holding {}.
func readOptionalEmptyObject(r *http.Request) error {
	if r.ContentLength == 0 {
		return nil
	}
	var first [1]byte
	n, _ := io.ReadFull(r.Body, first[:])
	if n == 0 {
		return nil
	}
	r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(first[:n]), r.Body))
	_, err := readObject(r, nil)
	return err
}

// settingsUpdate reads the settings members of a create or update body.
func (o object) settingsUpdate() (domain.SettingsUpdate, error) {
	var u domain.SettingsUpdate
	var err error
	if u.VisibilityTimeout, err = o.seconds("visibility_timeout_seconds"); err != nil {
		return u, err
	}
	attempts, present, err := o.wholeNumber("max_delivery_attempts")
	if err != nil {
		return u, err
	}
	if present {
		n := int(attempts)
		u.MaxDeliveryAttempts = &n
	}
	if u.DefaultMessageTTL, err = o.seconds("default_message_ttl_seconds"); err != nil {
		return u, err
	}
	return u, nil
}

// seconds reads a member holding whole seconds as a duration; nil when it is missing.
func (o object) seconds(name string) (*time.Duration, error) {
	n, present, err := o.wholeNumber(name)
	if err != nil || !present {
		return nil, err
	}
	d := time.Duration(n) * time.Second
	return &d, nil
}

// listQueryParameters are the query parameters of GET /v1/queues.
var listQueryParameters = []string{"name", "after", "limit"}

// parseListQuery reads name, after and limit, each at most once. Returns invalid_query.
func parseListQuery(query url.Values) (ports.ListQueuesParams, error) {
	for key, values := range query {
		if !slices.Contains(listQueryParameters, key) || len(values) != 1 {
			return ports.ListQueuesParams{}, requestError(domain.CodeInvalidQuery,
				fmt.Sprintf("the query accepts name, after and limit, each at most once; %s is not accepted", quoteField(key)))
		}
	}
	p := ports.ListQueuesParams{Name: query.Get("name"), After: query.Get("after")}
	if limit := query.Get("limit"); query.Has("limit") {
		n, err := strconv.Atoi(limit)
		if err != nil || n < 1 {
			n = -1 // refused below by the service, with the range in its message
		}
		p.Limit = n
	}
	return p, nil
}
