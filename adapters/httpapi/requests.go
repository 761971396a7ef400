package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/retsu/retsu/domain"
	"github.com/retsu/retsu/ports"
)

// This file reads requests: the IDs of the address, the Idempotency-Key header, the members
// of each body and the query of a listing. decode.go holds the rules of the body itself
// (content type, size, JSON).

// The members each request body, or each entry of a batch, accepts.
var (
	createQueueFields      = []string{"name", "visibility_timeout_seconds", "max_delivery_attempts", "default_message_ttl_seconds"}
	updateQueueFields      = []string{"visibility_timeout_seconds", "max_delivery_attempts", "default_message_ttl_seconds"}
	enqueueFields          = []string{"payload", "priority", "ttl_seconds", "delay_seconds"}
	batchFields            = []string{"messages"}
	dequeueFields          = []string{"wait_seconds"}
	dequeueBatchFields     = []string{"max_messages", "wait_seconds"}
	acknowledgeFields      = []string{"receipt_handle"}
	acknowledgeEntryFields = []string{"id", "receipt_handle"}
	extendFields           = []string{"receipt_handle", "visibility_timeout_seconds"}
	releaseFields          = []string{"receipt_handle", "delay_seconds"}
	redriveFields          = []string{"ids", "limit"}
)

// pathID returns the ID in the path variable name. Returns invalid_path.
func pathID(r *http.Request, name string) (domain.ID, error) {
	id, err := domain.ParseID(routingOf(r.Context()).vars[name])
	if err != nil {
		return domain.ID{}, requestError(codeInvalidPath, name+" in the address must be a UUID such as 019c9a65-7d3a-7c6b-8a9d-123456789abc")
	}
	return id, nil
}

// pathIDs returns the queue ID and the message ID of the path. Returns invalid_path.
func pathIDs(r *http.Request) (queueID, messageID domain.ID, err error) {
	if queueID, err = pathID(r, "queue_id"); err != nil {
		return queueID, messageID, err
	}
	messageID, err = pathID(r, "message_id")
	return queueID, messageID, err
}

// idempotencyKeyHeader carries the key that makes an enqueue safe to retry.
const idempotencyKeyHeader = "Idempotency-Key"

// idempotencyKey returns the Idempotency-Key of r, "" when it has none. Returns
// invalid_idempotency_key for an empty or malformed key, or for two of them. The service
// checks the key too, for its other callers; the adapter cannot leave it to the service,
// since the contract checks it before the body, which the adapter reads first, and only
// the adapter sees an empty or a second header.
func idempotencyKey(r *http.Request) (string, error) {
	keys := r.Header.Values(idempotencyKeyHeader)
	switch {
	case len(keys) == 0:
		return "", nil
	case len(keys) > 1:
		return "", errRepeatedIdempotencyKey
	}
	return keys[0], domain.ValidateIdempotencyKey(keys[0])
}

// errRepeatedIdempotencyKey answers a request with more than one Idempotency-Key header,
// whose keys may each be valid: which one the client meant is not for the server to guess.
var errRepeatedIdempotencyKey = requestError(domain.CodeInvalidIdempotencyKey,
	"Idempotency-Key was given more than once; send exactly one key")

// readObject reads a JSON body holding one object with members among allowed.
func readObject(r *http.Request, allowed []string) (object, error) {
	body, err := readJSONBody(r)
	if err != nil {
		return nil, err
	}
	return parseObject(body, allowed...)
}

// readOptionalObject reads a body that may be left out: no body at all is an empty object;
// one that is there must be a JSON object with members among allowed.
func readOptionalObject(r *http.Request, allowed []string) (object, error) {
	if r.ContentLength == 0 {
		return object{}, nil
	}
	var first [1]byte
	n, _ := io.ReadFull(r.Body, first[:])
	if n == 0 {
		return object{}, nil
	}
	r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(first[:n]), r.Body))
	return readObject(r, allowed)
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

// newMessage reads the members of one message to enqueue: a single enqueue's body (entry
// "") or the batch entry at the JSON Pointer entry, whose errors then point at the member.
// A priority other than the three is left as the zero Priority, which the service refuses
// with invalid_priority after the other members' types were checked.
func (o object) newMessage(entry string) (domain.NewMessage, error) {
	var n domain.NewMessage
	at := func(member string, err error) error { return pointAt(entryMember(entry, member), err) }
	payload, present, err := o.text("payload")
	if err != nil {
		return n, at("payload", err)
	}
	if !present {
		return n, at("payload", errInvalidJSON("payload is required"))
	}
	priorityName, _, err := o.text("priority")
	if err != nil {
		return n, at("priority", err)
	}
	if n.TTL, err = o.seconds("ttl_seconds"); err != nil {
		return n, at("ttl_seconds", err)
	}
	if n.Delay, err = o.seconds("delay_seconds"); err != nil {
		return n, at("delay_seconds", err)
	}
	n.Payload = payload
	n.Priority, _ = domain.ParsePriority(priorityName)
	return n, nil
}

// entryMember returns the JSON Pointer of member in the entry at the pointer entry, or ""
// when entry is "" (a single request, whose errors point nowhere).
func entryMember(entry, member string) string {
	if entry == "" {
		return ""
	}
	return entry + "/" + member
}

// readMessageBatch reads the body of a batch enqueue, {"messages":[…]}. An entry's error of
// JSON shape or type points at the entry, or at its member.
func readMessageBatch(r *http.Request) ([]domain.NewMessage, error) {
	entries, err := readEntries(r, batchFields, "messages", enqueueFields)
	if err != nil {
		return nil, err
	}
	messages := make([]domain.NewMessage, len(entries))
	for i, entry := range entries {
		if messages[i], err = entry.newMessage(entryPointer("messages", i)); err != nil {
			return nil, err
		}
	}
	return messages, nil
}

// readReceipts reads the body of a batch acknowledgement, {"messages":[{"id","receipt_handle"}, …]}.
func readReceipts(r *http.Request) ([]domain.Receipt, error) {
	entries, err := readEntries(r, batchFields, "messages", acknowledgeEntryFields)
	if err != nil {
		return nil, err
	}
	receipts := make([]domain.Receipt, len(entries))
	for i, entry := range entries {
		pointer := entryPointer("messages", i)
		if receipts[i].MessageID, err = entry.uuid("id", "the ID of a message"); err != nil {
			return nil, pointAt(pointer+"/id", err)
		}
		if receipts[i].ReceiptHandle, err = entry.uuid("receipt_handle", "the UUID of a delivery"); err != nil {
			return nil, pointAt(pointer+"/receipt_handle", err)
		}
	}
	return receipts, nil
}

// readEntries reads a body with members among allowed whose member name, required, is an
// array of objects with members among entryFields.
func readEntries(r *http.Request, allowed []string, name string, entryFields []string) ([]object, error) {
	obj, err := readObject(r, allowed)
	if err != nil {
		return nil, err
	}
	raws, present, err := obj.array(name)
	if err != nil {
		return nil, err
	}
	if !present {
		return nil, errInvalidJSON(name + " is required")
	}
	entries := make([]object, len(raws))
	for i, raw := range raws {
		if entries[i], err = parseObject(raw, entryFields...); err != nil {
			return nil, pointAt(entryPointer(name, i), err)
		}
	}
	return entries, nil
}

// entryPointer returns the JSON Pointer of entry i of the array member name.
func entryPointer(name string, i int) string { return "/" + name + "/" + strconv.Itoa(i) }

// readReceipt reads the receipt_handle of a body with members among allowed, for the
// message of the path, and returns the body for its other members.
func readReceipt(r *http.Request, messageID domain.ID, allowed []string) (domain.Receipt, object, error) {
	obj, err := readObject(r, allowed)
	if err != nil {
		return domain.Receipt{}, nil, err
	}
	handle, err := obj.uuid("receipt_handle", "the UUID of a delivery")
	return domain.Receipt{MessageID: messageID, ReceiptHandle: handle}, obj, err
}

// uuid returns the required member name, a string holding a canonical UUID, which what
// describes in the error. Returns invalid_json.
func (o object) uuid(name, what string) (domain.ID, error) {
	text, present, err := o.text(name)
	id, parseErr := domain.ParseID(text)
	if err != nil || !present || parseErr != nil {
		return domain.ID{}, errInvalidJSON(name + " must be " + what)
	}
	return id, nil
}

// requiredSeconds is seconds for a member that must be there. Returns invalid_json when it
// is missing.
func (o object) requiredSeconds(name string) (time.Duration, error) {
	d, err := o.seconds(name)
	if err != nil {
		return 0, err
	}
	if d == nil {
		return 0, errInvalidJSON(name + " is required")
	}
	return *d, nil
}

// optionalSeconds is seconds for a member whose absence is zero.
func (o object) optionalSeconds(name string) (time.Duration, error) {
	d, err := o.seconds(name)
	if err != nil || d == nil {
		return 0, err
	}
	return *d, nil
}

// seconds reads a member holding whole seconds as a duration; nil when it is missing. A
// number that is not a whole number from 0 to 2^31-1 is -1 s, which every range refuses.
func (o object) seconds(name string) (*time.Duration, error) {
	n, present, err := o.wholeNumber(name)
	if err != nil || !present {
		return nil, err
	}
	d := time.Duration(n) * time.Second
	return &d, nil
}

// readDequeue reads the optional body of a single dequeue, {} or {"wait_seconds": n}.
// The HTTP adapter checks the wait's range itself, before the request is admitted, since
// the wait decides the request's cap. Returns invalid_json or invalid_wait.
func readDequeue(r *http.Request) (time.Duration, error) {
	obj, err := readOptionalObject(r, dequeueFields)
	if err != nil {
		return 0, err
	}
	wait, err := obj.optionalSeconds("wait_seconds")
	if err != nil {
		return 0, err
	}
	return wait, domain.ValidateWait(wait)
}

// readDequeueBatch reads the optional body of a batch dequeue, checking the values in the
// order of the members, max_messages then wait_seconds. Returns invalid_json,
// invalid_max_messages or invalid_wait.
func readDequeueBatch(r *http.Request) (max int, wait time.Duration, err error) {
	obj, err := readOptionalObject(r, dequeueBatchFields)
	if err != nil {
		return 0, 0, err
	}
	n, present, err := obj.wholeNumber("max_messages")
	if err != nil {
		return 0, 0, err
	}
	if wait, err = obj.optionalSeconds("wait_seconds"); err != nil {
		return 0, 0, err
	}
	max = domain.DefaultDequeueBatch
	if present {
		max = int(n)
	}
	if err := domain.ValidateMaxMessages(max); err != nil {
		return 0, 0, err
	}
	return max, wait, domain.ValidateWait(wait)
}

// readRedrive reads the body of a redrive: exactly one of ids, an array of UUIDs, or limit.
// Returns invalid_json.
func readRedrive(r *http.Request) (domain.Redrive, error) {
	obj, err := readObject(r, redriveFields)
	if err != nil {
		return domain.Redrive{}, err
	}
	raws, hasIDs, err := obj.array("ids")
	if err != nil {
		return domain.Redrive{}, err
	}
	limit, hasLimit, err := obj.wholeNumber("limit")
	if err != nil {
		return domain.Redrive{}, err
	}
	if hasIDs == hasLimit {
		return domain.Redrive{}, errInvalidJSON("the body must hold exactly one of ids and limit")
	}
	if hasLimit {
		return domain.Redrive{Limit: int(limit)}, nil
	}
	ids := make([]domain.ID, len(raws))
	for i, raw := range raws {
		// An entry is read as a member would be, with the same rules of strings.
		if ids[i], err = (object{"ids": raw}).uuid("ids", "an array of UUIDs"); err != nil {
			return domain.Redrive{}, pointAt(entryPointer("ids", i), errInvalidJSON("every entry of ids must be the UUID of a dead letter"))
		}
	}
	return domain.Redrive{IDs: ids}, nil
}

// listQueryParameters and deadLetterQueryParameters are the query parameters of
// GET /v1/queues and GET /v1/queues/{queue_id}/dead-letters.
var (
	listQueryParameters       = []string{"name", "after", "limit"}
	deadLetterQueryParameters = []string{"after", "limit"}
)

// readListQuery reads name, after and limit; the service checks their values. Returns
// invalid_query.
func readListQuery(r *http.Request) (ports.ListQueuesParams, error) {
	query, err := readQuery(r, listQueryParameters)
	if err != nil {
		return ports.ListQueuesParams{}, err
	}
	p := ports.ListQueuesParams{After: query.Get("after"), Limit: limitOf(query)}
	if query.Has("name") {
		// ?name= asks for the queue named "", of which there is none; it is no absent filter.
		p.Name = new(query.Get("name"))
	}
	return p, nil
}

// readDeadLetterQuery reads after, a canonical UUID, and limit. Returns invalid_query.
func readDeadLetterQuery(r *http.Request) (ports.DeadLetterPage, error) {
	query, err := readQuery(r, deadLetterQueryParameters)
	if err != nil {
		return ports.DeadLetterPage{}, err
	}
	p := ports.DeadLetterPage{Limit: limitOf(query)}
	if query.Has("after") {
		if p.After, err = domain.ParseID(query.Get("after")); err != nil {
			return p, requestError(domain.CodeInvalidQuery, "after must be the UUID of a dead letter, such as the last of a page")
		}
	}
	return p, nil
}

// readQuery reads the query of r, whose parameters must be among accepted, each at most
// once, and whose values must be valid UTF-8. A malformed query (a bad escape, a semicolon)
// is refused: URL.Query would silently drop its pairs, and ?name=%zz would then list every
// queue. Returns invalid_query.
func readQuery(r *http.Request, accepted []string) (url.Values, error) {
	query, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, requestError(domain.CodeInvalidQuery, "the query is not a well-formed URL query")
	}
	for key, values := range query {
		if !slices.Contains(accepted, key) || len(values) != 1 {
			return nil, requestError(domain.CodeInvalidQuery, fmt.Sprintf("the query accepts %s, each at most once; %s is not accepted",
				strings.Join(accepted, ", "), quoteField(key)))
		}
		if !utf8.ValidString(values[0]) {
			return nil, requestError(domain.CodeInvalidQuery, fmt.Sprintf("%s must be valid UTF-8 once its escapes are decoded", key))
		}
	}
	return query, nil
}

// limitOf returns the limit parameter of query: 0 when it is missing, which the service
// takes as the default, and -1 when it is not a whole number from 1 up, which the service
// refuses with the range in its message.
func limitOf(query url.Values) int {
	if !query.Has("limit") {
		return 0
	}
	n, err := strconv.Atoi(query.Get("limit"))
	if err != nil || n < 1 {
		return -1
	}
	return n
}

// array returns the member name, a JSON array, as its raw elements. present is false when
// it is missing. Returns invalid_json when the member is not an array (null included).
func (o object) array(name string) (elements []json.RawMessage, present bool, err error) {
	raw, present := o[name]
	if !present {
		return nil, false, nil
	}
	notArray := errInvalidJSON(fmt.Sprintf("%s must be an array", name))
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		return nil, true, notArray
	}
	elements = []json.RawMessage{}
	for dec.More() {
		var element json.RawMessage
		if err := dec.Decode(&element); err != nil {
			return nil, true, notArray
		}
		elements = append(elements, element)
	}
	return elements, true, nil
}
