package httpapi

import (
	"net/http"
)

// listDeadLetters answers GET /v1/queues/{queue_id}/dead-letters.
func (a *api) listDeadLetters(w http.ResponseWriter, r *http.Request) error {
	queueID, err := pathID(r, "queue_id")
	if err != nil {
		return err
	}
	page, err := readDeadLetterQuery(r)
	if err != nil {
		return err
	}
	letters, err := a.svc.DeadLetters(r.Context(), queueID, page)
	if err != nil {
		return err
	}
	return writeList(w, http.StatusOK, "dead_letters", letters, toDeadLetterJSON)
}

// getDeadLetter answers GET /v1/queues/{queue_id}/dead-letters/{message_id}.
func (a *api) getDeadLetter(w http.ResponseWriter, r *http.Request) error {
	queueID, messageID, err := pathIDs(r)
	if err != nil {
		return err
	}
	letter, err := a.svc.DeadLetter(r.Context(), queueID, messageID)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, toDeadLetterJSON(letter))
}

// deleteDeadLetter answers DELETE /v1/queues/{queue_id}/dead-letters/{message_id}: 204,
// also when there is no such dead letter.
func (a *api) deleteDeadLetter(w http.ResponseWriter, r *http.Request) error {
	queueID, messageID, err := pathIDs(r)
	if err != nil {
		return err
	}
	return noContent(w, a.svc.DeleteDeadLetter(r.Context(), queueID, messageID))
}

// deleteDeadLetters answers DELETE /v1/queues/{queue_id}/dead-letters.
func (a *api) deleteDeadLetters(w http.ResponseWriter, r *http.Request) error {
	queueID, err := pathID(r, "queue_id")
	if err != nil {
		return err
	}
	n, err := a.svc.DeleteDeadLetters(r.Context(), queueID)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, deletedJSON{Deleted: n})
}

// redrive answers POST /v1/queues/{queue_id}/dead-letters/redrive.
func (a *api) redrive(w http.ResponseWriter, r *http.Request) error {
	// Parse: the address, then exactly one of ids and limit.
	queueID, err := pathID(r, "queue_id")
	if err != nil {
		return err
	}
	selection, err := readRedrive(r)
	if err != nil {
		return err
	}
	// Call: the service checks the sizes.
	moved, err := a.svc.Redrive(r.Context(), queueID, selection)
	if err != nil {
		return err
	}
	// Encode the IDs moved, which leaves out those with no dead letter.
	return writeJSON(w, http.StatusOK, redrivenJSON{Redriven: nonNil(moved)})
}
