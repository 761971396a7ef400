package test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/matryer/is"
)

// sqsWork sizes the SQS worker scenario at a chaos scale.
type sqsWork struct {
	messages, producers, workers int
	// slowEvery makes every slowEvery-th message a slow job, which extends its lease.
	slowEvery int
}

func sqsWorkOf(scale chaosScale) sqsWork {
	if scale.name == "long" {
		return sqsWork{messages: 10000, producers: 4, workers: 8, slowEvery: 50}
	}
	return sqsWork{messages: 2000, producers: 4, workers: 8, slowEvery: 50}
}

// testSQSWorker runs workers written as SQS users write them (ReceiveMessage with a 20 s
// wait, DeleteMessageBatch, ChangeMessageVisibility for slow jobs) through kill -9s of the
// server, and checks that every message sent was processed and deleted: nothing lost.
func (e *chaosEnv) testSQSWorker(t *testing.T) {
	is := is.New(t)
	work := sqsWorkOf(e.scale)
	e.databases++
	url, db := e.pg.createDatabase(t, fmt.Sprintf("chaos_%d", e.databases))
	redis := startRedis(t)
	server := startSQSServer(t, e.binary, "RETSU_DATABASE_URL="+url, "RETSU_REDIS_URL="+redis.URL(),
		"RETSU_MIGRATE=true", "RETSU_LOG_LEVEL=warn")
	// The SDK's own retries, as an SQS user has them, with the outer loops of the workers
	// for what outlasts them.
	client := server.client(t, sqsKeyID, sqsSecret, config.WithRetryMaxAttempts(5))
	queueURL := createSQSQueue(t, client, map[string]string{"VisibilityTimeout": "3", "RedrivePolicy": `{"maxReceiveCount":100}`})
	ctx, cancel := context.WithTimeout(t.Context(), e.scale.deadline)
	defer cancel()
	run := &sqsRun{client: client, queueURL: queueURL, work: work, done: make(map[string]int)}
	start := time.Now()

	var wg sync.WaitGroup
	for p := range work.producers {
		wg.Go(func() { run.produce(ctx, p) })
	}
	workCtx, stopWorkers := context.WithCancel(ctx)
	for range work.workers {
		wg.Go(func() { run.consume(workCtx) })
	}
	for i := range e.scale.kills {
		if !run.waitDone(ctx, work.messages*(i+1)/(e.scale.kills+1)) {
			break
		}
		server.retsu.kill()
		time.Sleep(200 * time.Millisecond) // clients meet a closed port
		is.NoErr(server.retsu.start())
	}
	drained := run.waitDone(ctx, work.messages)
	stopWorkers()
	wg.Wait()

	var remaining, deadLetters int
	is.NoErr(db.QueryRow(t.Context(), `SELECT (SELECT count(*) FROM messages), (SELECT count(*) FROM dead_letters)`).Scan(&remaining, &deadLetters))
	t.Logf("SQS workers (%s, %v): %d messages, %d kills, %d sent again after a lost answer, %d processed more than once, %d receive errors, %d delete errors",
		e.scale.name, time.Since(start).Round(time.Second), work.messages, e.scale.kills, run.resent.Load(), run.duplicates(),
		run.receiveErrors.Load(), run.deleteErrors.Load())
	is.True(drained)                         // every message sent was processed and deleted: nothing lost
	is.Equal(run.doneCount(), work.messages) // exactly the messages sent
	is.Equal(remaining, 0)                   // none left in the queue
	is.Equal(deadLetters, 0)                 // nor among the dead letters
}

// sqsRun is the state of one SQS worker scenario.
type sqsRun struct {
	client   *sqs.Client
	queueURL string
	work     sqsWork

	mu sync.Mutex
	// done counts, by body, the deletes that succeeded after processing.
	done map[string]int

	resent, receiveErrors, deleteErrors atomic.Int64
}

// produce sends the producer's share in batches of 10, each until it is answered: a batch
// whose answer was lost is sent again, so its messages may be stored twice.
func (r *sqsRun) produce(ctx context.Context, producer int) {
	for first := producer; first < r.work.messages; first += 10 * r.work.producers {
		var entries []types.SendMessageBatchRequestEntry
		for i := first; i < min(first+10*r.work.producers, r.work.messages); i += r.work.producers {
			entries = append(entries, types.SendMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), MessageBody: aws.String("m-" + strconv.Itoa(i))})
		}
		for ctx.Err() == nil {
			out, err := r.client.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: &r.queueURL, Entries: entries})
			if err == nil && len(out.Failed) == 0 {
				break
			}
			r.resent.Add(1)
			time.Sleep(100 * time.Millisecond)
		}
	}
}

// consume is an SQS worker: it long-polls, processes each message (a slow one after
// extending its lease), and deletes what it processed in one batch.
func (r *sqsRun) consume(ctx context.Context) {
	for ctx.Err() == nil {
		out, err := r.client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &r.queueURL, MaxNumberOfMessages: 10, WaitTimeSeconds: 20})
		if err != nil {
			r.receiveErrors.Add(1)
			time.Sleep(100 * time.Millisecond)
			continue
		}
		var entries []types.DeleteMessageBatchRequestEntry
		for i, m := range out.Messages {
			if r.isSlow(aws.ToString(m.Body)) {
				// A slow job asks for more time before it starts; losing the answer only
				// means the message may come back.
				_, _ = r.client.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: &r.queueURL, ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: 10})
				time.Sleep(50 * time.Millisecond)
			}
			entries = append(entries, types.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: m.ReceiptHandle})
		}
		if len(entries) > 0 {
			r.delete(ctx, out.Messages, entries)
		}
	}
}

// delete deletes the processed messages, retrying the batch until it is answered, and
// counts the bodies whose delete succeeded.
func (r *sqsRun) delete(ctx context.Context, messages []types.Message, entries []types.DeleteMessageBatchRequestEntry) {
	for ctx.Err() == nil {
		out, err := r.client.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: &r.queueURL, Entries: entries})
		if err != nil {
			r.deleteErrors.Add(1)
			time.Sleep(100 * time.Millisecond)
			continue
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		for _, ok := range out.Successful {
			i, _ := strconv.Atoi(aws.ToString(ok.Id))
			r.done[aws.ToString(messages[i].Body)]++
		}
		return
	}
}

func (r *sqsRun) isSlow(body string) bool {
	n, _ := strconv.Atoi(body[len("m-"):])
	return n%r.work.slowEvery == 0
}

func (r *sqsRun) doneCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.done)
}

// duplicates counts the processings beyond the first of each message.
func (r *sqsRun) duplicates() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, count := range r.done {
		n += count - 1
	}
	return n
}

// waitDone waits until n distinct messages were processed and deleted and, once that is
// every message, until the queue holds none (a stale delete removes nothing, and its
// message comes back); false when ctx ends first.
func (r *sqsRun) waitDone(ctx context.Context, n int) bool {
	for ; ctx.Err() == nil; time.Sleep(50 * time.Millisecond) {
		if r.doneCount() < n {
			continue
		}
		if n < r.work.messages || r.queueEmpty(ctx) {
			return true
		}
	}
	return false
}

// queueEmpty reports whether the queue holds no message, ready, in flight or delayed.
func (r *sqsRun) queueEmpty(ctx context.Context) bool {
	out, err := r.client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: &r.queueURL,
		AttributeNames: []types.QueueAttributeName{"ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible", "ApproximateNumberOfMessagesDelayed"}})
	if err != nil {
		return false
	}
	for _, count := range out.Attributes {
		if count != "0" {
			return false
		}
	}
	return true
}
