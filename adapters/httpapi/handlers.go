package httpapi

import (
	"net/http"

	"github.com/retsu/retsu/domain"
)

// This file serves the routes of queues; messages.go those of messages, deadletters.go
// those of dead letters, operations.go the statistics and the probes.

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
	p, err := readListQuery(r)
	if err != nil {
		return err
	}
	queues, err := a.svc.ListQueues(r.Context(), p)
	if err != nil {
		return err
	}
	return writeList(w, http.StatusOK, "queues", queues, toQueueJSON)
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

// deleteQueue answers DELETE /v1/queues/{queue_id}.
func (a *api) deleteQueue(w http.ResponseWriter, r *http.Request) error {
	queueID, err := pathID(r, "queue_id")
	if err != nil {
		return err
	}
	if err := a.svc.DeleteQueue(r.Context(), queueID); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// purgeQueue answers DELETE /v1/queues/{queue_id}/messages.
func (a *api) purgeQueue(w http.ResponseWriter, r *http.Request) error {
	queueID, err := pathID(r, "queue_id")
	if err != nil {
		return err
	}
	n, err := a.svc.PurgeQueue(r.Context(), queueID)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, deletedJSON{Deleted: n})
}
