package httpapi

import (
	"net/http"
	"net/url"

	"github.com/retsu/retsu/domain"
)

// createQueue answers POST /v1/queues.
func (a *api) createQueue(w http.ResponseWriter, r *http.Request) error {
	// Parse: content type, size and shape, then the members' types.
	obj, err := readObject(r, createQueueFields)
	if err != nil {
		return err
	}
	name, _, err := obj.text("name")
	if err != nil {
		return err
	}
	settings, err := obj.settingsUpdate()
	if err != nil {
		return err
	}
	// Call: the service checks the values, then creates.
	q, err := a.svc.CreateQueue(r.Context(), domain.NewQueue{Name: name, SettingsUpdate: settings})
	if err != nil {
		return err
	}
	// Encode.
	w.Header().Set("Location", "/v1/queues/"+q.ID.String())
	return writeJSON(w, http.StatusCreated, toQueueJSON(q))
}

// listQueues answers GET /v1/queues.
func (a *api) listQueues(w http.ResponseWriter, r *http.Request) error {
	// Parse the query. A malformed one (a bad escape, a semicolon) is refused: URL.Query
	// would silently drop its pairs, and ?name=%zz would then list every queue.
	query, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return requestError(domain.CodeInvalidQuery, "the query is not a well-formed URL query")
	}
	p, err := parseListQuery(query)
	if err != nil {
		return err
	}
	// Call.
	queues, err := a.svc.ListQueues(r.Context(), p)
	if err != nil {
		return err
	}
	// Encode.
	page := struct {
		Queues []queueJSON `json:"queues"`
	}{Queues: make([]queueJSON, 0, len(queues))}
	for _, q := range queues {
		page.Queues = append(page.Queues, toQueueJSON(q))
	}
	return writeJSON(w, http.StatusOK, page)
}

// getQueue answers GET /v1/queues/{queue_id}.
func (a *api) getQueue(w http.ResponseWriter, r *http.Request) error {
	queueID, err := pathID(r, "queue_id")
	if err != nil {
		return err
	}
	q, err := a.svc.Queue(r.Context(), queueID)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, toQueueJSON(q))
}

// updateQueue answers PATCH /v1/queues/{queue_id}.
func (a *api) updateQueue(w http.ResponseWriter, r *http.Request) error {
	// Parse: the address, then the body.
	queueID, err := pathID(r, "queue_id")
	if err != nil {
		return err
	}
	obj, err := readObject(r, updateQueueFields)
	if err != nil {
		return err
	}
	settings, err := obj.settingsUpdate()
	if err != nil {
		return err
	}
	// Call.
	q, err := a.svc.UpdateQueue(r.Context(), queueID, settings)
	if err != nil {
		return err
	}
	// Encode.
	return writeJSON(w, http.StatusOK, toQueueJSON(q))
}

// enqueue answers POST /v1/queues/{queue_id}/messages.
func (a *api) enqueue(w http.ResponseWriter, r *http.Request) error {
	// Parse: the address, the body's shape and types, then the priority's value.
	queueID, err := pathID(r, "queue_id")
	if err != nil {
		return err
	}
	obj, err := readObject(r, enqueueFields)
	if err != nil {
		return err
	}
	payload, present, err := obj.text("payload")
	if err != nil {
		return err
	}
	if !present {
		return errInvalidJSON("payload is required")
	}
	priorityName, _, err := obj.text("priority")
	if err != nil {
		return err
	}
	ttl, err := obj.seconds("ttl_seconds")
	if err != nil {
		return err
	}
	priority, err := domain.ParsePriority(priorityName)
	if err != nil {
		return err
	}
	// Call: the service checks the lifetime and that the queue exists.
	id, err := a.svc.Enqueue(r.Context(), queueID, domain.NewMessage{Payload: payload, Priority: priority, TTL: ttl})
	if err != nil {
		return err
	}
	// Encode.
	return writeJSON(w, http.StatusCreated, struct {
		ID domain.ID `json:"id"`
	}{id})
}

// dequeue answers POST /v1/queues/{queue_id}/messages/dequeue.
func (a *api) dequeue(w http.ResponseWriter, r *http.Request) error {
	// Parse: the address; a body is optional but must be {} when present.
	queueID, err := pathID(r, "queue_id")
	if err != nil {
		return err
	}
	if err := readOptionalEmptyObject(r); err != nil {
		return err
	}
	// Call.
	d, ok, err := a.svc.Dequeue(r.Context(), queueID)
	if err != nil {
		return err
	}
	// Encode: 204 when nothing is waiting.
	if !ok {
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
	return writeJSON(w, http.StatusOK, struct {
		ID               domain.ID `json:"id"`
		Payload          string    `json:"payload"`
		Priority         string    `json:"priority"`
		ReceiptHandle    domain.ID `json:"receipt_handle"`
		DeliveryAttempts int       `json:"delivery_attempts"`
	}{d.MessageID, d.Payload, d.Priority.String(), d.ReceiptHandle, d.DeliveryAttempts})
}

// acknowledge answers POST /v1/queues/{queue_id}/messages/{message_id}/acknowledge.
func (a *api) acknowledge(w http.ResponseWriter, r *http.Request) error {
	// Parse: both IDs of the address, then the receipt handle.
	queueID, err := pathID(r, "queue_id")
	if err != nil {
		return err
	}
	messageID, err := pathID(r, "message_id")
	if err != nil {
		return err
	}
	obj, err := readObject(r, acknowledgeFields)
	if err != nil {
		return err
	}
	handleText, present, err := obj.text("receipt_handle")
	if err != nil {
		return err
	}
	receiptHandle, parseErr := domain.ParseID(handleText)
	if !present || parseErr != nil {
		return errInvalidJSON("receipt_handle must be the UUID of a delivery")
	}
	// Call: 204 whether or not this delivery removed the message.
	if err := a.svc.Acknowledge(r.Context(), queueID, messageID, receiptHandle); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// healthz answers GET /healthz: the process is alive.
func (a *api) healthz(w http.ResponseWriter, _ *http.Request) error {
	return writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// readyz answers GET /readyz: the instance is ready when it can reach PostgreSQL. Redis'
// state is reported too, but without Redis requests read queue details from PostgreSQL, so
// it does not decide readiness.
func (a *api) readyz(w http.ResponseWriter, r *http.Request) error {
	postgres := stateNotConfigured
	if a.ready != nil {
		if err := a.ready(r.Context()); err != nil {
			return domain.Unavailable(err)
		}
		postgres = stateUp
	}
	return writeJSON(w, http.StatusOK, map[string]string{
		"status":   "ready",
		"postgres": postgres,
		"redis":    probe(r.Context(), a.cacheReady),
	})
}
