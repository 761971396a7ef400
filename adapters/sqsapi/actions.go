package sqsapi

import "strings"

// action runs one SQS action and returns its answer.
type action func(c *call) (any, error)

// actions are the SQS actions this endpoint serves, by name.
var actions = map[string]action{
	"CreateQueue":                  createQueue,
	"GetQueueUrl":                  getQueueURL,
	"ListQueues":                   listQueues,
	"GetQueueAttributes":           getQueueAttributes,
	"SetQueueAttributes":           setQueueAttributes,
	"DeleteQueue":                  deleteQueue,
	"PurgeQueue":                   purgeQueue,
	"SendMessage":                  sendMessage,
	"SendMessageBatch":             sendMessageBatch,
	"ReceiveMessage":               receiveMessage,
	"DeleteMessage":                deleteMessage,
	"DeleteMessageBatch":           deleteMessageBatch,
	"ChangeMessageVisibility":      changeMessageVisibility,
	"ChangeMessageVisibilityBatch": changeMessageVisibilityBatch,
}

// unsupportedActions are the other actions of SQS, with why Retsu does not serve them.
var unsupportedActions = map[string]string{
	"AddPermission":              "Retsu has no queue policies: access is by the endpoint's credentials",
	"RemovePermission":           "Retsu has no queue policies: access is by the endpoint's credentials",
	"TagQueue":                   "Retsu queues have no tags",
	"UntagQueue":                 "Retsu queues have no tags",
	"ListQueueTags":              "Retsu queues have no tags",
	"ListDeadLetterSourceQueues": "Retsu keeps each queue's dead letters with the queue, not in another queue; see them with Retsu's API",
	"StartMessageMoveTask":       "Retsu redrives dead letters with its own API (POST /v1/queues/{id}/dead-letters/redrive)",
	"CancelMessageMoveTask":      "Retsu redrives dead letters with its own API, at once",
	"ListMessageMoveTasks":       "Retsu redrives dead letters with its own API, at once",
}

// lookupAction returns the action that an X-Amz-Target header names.
func lookupAction(target string) (action, error) {
	name, ok := strings.CutPrefix(target, targetPrefix)
	if !ok {
		return nil, fail(errInvalidAction, "The request needs the header %s: %s<Action>.", targetHeader, targetPrefix)
	}
	if act, ok := actions[name]; ok {
		return act, nil
	}
	if why, ok := unsupportedActions[name]; ok {
		return nil, fail(errUnsupportedOperation, "%s is not supported: %s.", name, why)
	}
	return nil, fail(errInvalidAction, "The action %q is not valid for this endpoint.", name)
}
