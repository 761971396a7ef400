// Package sqsapi serves an Amazon SQS-compatible endpoint over Retsu's use cases (app.Retsu),
// so that code written for SQS, and the official AWS SDKs, run on Retsu with the endpoint
// URL changed. It speaks the AWS JSON 1.0 protocol of current SDKs (POST with
// X-Amz-Target: AmazonSQS.<Action> and Content-Type: application/x-amz-json-1.0); the
// query protocol of older SDKs is not served, and its requests get an XML error that says
// so.
//
// Everything SQS-specific lives here: the wire shapes of each action, queue URLs and ARNs,
// receipt handles that carry what Retsu needs to acknowledge, the queue attributes mapped
// onto Retsu's settings, message attributes with the MD5 digests the SDKs verify, SQS's
// error codes (one table maps Retsu's codes to them), and Signature Version 4. What Retsu
// cannot honour (FIFO queues, tags, policies, a dead-letter queue elsewhere…) is refused
// with an SQS error, never silently changed. docs/sqs.md lists every action and attribute
// with its status.
package sqsapi
