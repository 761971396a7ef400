package porttest

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/retsu/retsu/domain"
	"github.com/retsu/retsu/ports"
)

// MessageHarness is what the suites of the message store's roles need from an adapter: its
// message store and the other roles of that store, on one backing. Every suite needs every
// field: a suite checks its port, and uses the others to set up and to look.
type MessageHarness struct {
	Store       ports.MessageStore
	DeadLetters ports.DeadLetterStore
	Cleaning    ports.Cleaning
	Wakeups     ports.Wakeups
	// Queues is the QueueStore on the same backing, whose deletions the store honours.
	Queues ports.QueueStore
	// Wait lets d pass on the store's clock: a store on a real clock sleeps, a store on
	// a manual clock advances it.
	Wait func(d time.Duration)
}

// missing names the fields of h that are not set.
func (h MessageHarness) missing() []string {
	var names []string
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"Store", h.Store != nil}, {"DeadLetters", h.DeadLetters != nil}, {"Cleaning", h.Cleaning != nil},
		{"Wakeups", h.Wakeups != nil}, {"Queues", h.Queues != nil}, {"Wait", h.Wait != nil},
	} {
		if !f.set {
			names = append(names, f.name)
		}
	}
	return names
}

// margin is added to every wait so that a deadline has surely passed on a real clock.
const margin = 150 * time.Millisecond

// TestMessageStore runs the MessageStore contract. newHarness may share one store between
// tests: each test works in queues of its own.
func TestMessageStore(t *testing.T, newHarness func(t *testing.T) MessageHarness) {
	runMessageTests(t, newHarness, slices.Concat(messageStoreTests, deliveryTests, leaseTests, idempotencyTests, lifecycleTests))
}

// messageTestCase is one test of a suite over a MessageHarness.
type messageTestCase struct {
	name string
	run  func(t *testing.T, m *messageTest)
}

// runMessageTests runs each test in parallel, with a harness and a queue of its own.
func runMessageTests(t *testing.T, newHarness func(t *testing.T) MessageHarness, tests []messageTestCase) {
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			if missing := h.missing(); len(missing) > 0 {
				t.Fatalf("the harness lacks %s", strings.Join(missing, ", "))
			}
			tc.run(t, &messageTest{MessageHarness: h, queueID: newID(), is: is.New(t)})
		})
	}
}

// messageTest is one test's harness, queue and assertions.
type messageTest struct {
	MessageHarness
	queueID domain.ID
	is      *is.I
}

var ctx = context.Background()

// message returns a message of the test's queue with the test settings, changed by the
// options.
func (m *messageTest) message(p domain.Priority, payload string, options ...func(*domain.Enqueue)) domain.Enqueue {
	e := domain.Enqueue{
		QueueID: m.queueID, MessageID: newID(), Priority: p, Payload: payload,
		TTL: testSettings.DefaultMessageTTL, VisibilityTimeout: testSettings.VisibilityTimeout,
		MaxDeliveryAttempts: testSettings.MaxDeliveryAttempts,
	}
	for _, o := range options {
		o(&e)
	}
	return e
}

// enqueue stores a message with the test settings, changed by the options, and returns its ID.
func (m *messageTest) enqueue(p domain.Priority, payload string, options ...func(*domain.Enqueue)) domain.ID {
	m.is.Helper()
	return m.enqueueBatch(m.message(p, payload, options...))[0]
}

// enqueueBatch stores the messages in one request and returns their IDs.
func (m *messageTest) enqueueBatch(messages ...domain.Enqueue) []domain.ID {
	m.is.Helper()
	enqueued, err := m.Store.Enqueue(ctx, ports.EnqueueParams{QueueID: m.queueID, Messages: messages})
	m.is.NoErr(err)                              // enqueue succeeds
	m.is.True(!enqueued.Replayed)                // a request without a key is never a replay
	m.is.Equal(len(enqueued.IDs), len(messages)) // one ID per message
	return enqueued.IDs
}

func withTTL(d time.Duration) func(*domain.Enqueue)   { return func(e *domain.Enqueue) { e.TTL = d } }
func withDelay(d time.Duration) func(*domain.Enqueue) { return func(e *domain.Enqueue) { e.Delay = d } }
func withVisibilityTimeout(d time.Duration) func(*domain.Enqueue) {
	return func(e *domain.Enqueue) { e.VisibilityTimeout = d }
}
func withMaxDeliveryAttempts(n int) func(*domain.Enqueue) {
	return func(e *domain.Enqueue) { e.MaxDeliveryAttempts = n }
}
func withID(id domain.ID) func(*domain.Enqueue) { return func(e *domain.Enqueue) { e.MessageID = id } }
func withAttributes(a domain.Attributes) func(*domain.Enqueue) {
	return func(e *domain.Enqueue) { e.Attributes = a }
}

// dequeue expects a delivery.
func (m *messageTest) dequeue() domain.Delivery {
	m.is.Helper()
	deliveries := m.dequeueUpTo(1)
	m.is.Equal(len(deliveries), 1) // a message is delivered
	return deliveries[0]
}

// dequeueUpTo dequeues up to max messages.
func (m *messageTest) dequeueUpTo(max int) []domain.Delivery {
	m.is.Helper()
	result, err := m.Store.Dequeue(ctx, ports.DequeueParams{QueueID: m.queueID, Max: max})
	m.is.NoErr(err)
	return result.Deliveries
}

// dequeueNothing expects no delivery.
func (m *messageTest) dequeueNothing() {
	m.is.Helper()
	m.is.Equal(len(m.dequeueUpTo(1)), 0) // no message is deliverable
}

func (m *messageTest) acknowledge(d domain.Delivery) bool {
	m.is.Helper()
	removed, err := m.Store.Acknowledge(ctx, m.queueID, []domain.Receipt{d.Receipt()})
	m.is.NoErr(err)
	return removed[0]
}

func (m *messageTest) extend(d domain.Delivery, timeout time.Duration) bool {
	m.is.Helper()
	held, err := m.Store.Extend(ctx, m.queueID, d.Receipt(), timeout)
	m.is.NoErr(err)
	return held
}

func (m *messageTest) release(d domain.Delivery, delay time.Duration) bool {
	m.is.Helper()
	held, err := m.Store.Release(ctx, m.queueID, d.Receipt(), delay)
	m.is.NoErr(err)
	return held
}

func (m *messageTest) undeliver(deliveries ...domain.Delivery) {
	m.is.Helper()
	receipts := make([]domain.Receipt, len(deliveries))
	for i, d := range deliveries {
		receipts[i] = d.Receipt()
	}
	m.is.NoErr(m.Store.Undeliver(ctx, m.queueID, receipts)) // undeliver succeeds
}

func (m *messageTest) stats() domain.QueueStats {
	m.is.Helper()
	s, err := m.Store.Stats(ctx, m.queueID)
	m.is.NoErr(err)
	return s
}

// total sums one count of the stats over the priorities.
func (m *messageTest) total(count func(domain.PriorityStats) int64) int64 {
	m.is.Helper()
	var n int64
	for _, p := range m.stats().Priorities {
		n += count(p)
	}
	return n
}

func ready(p domain.PriorityStats) int64        { return p.Ready }
func delayedCount(p domain.PriorityStats) int64 { return p.Delayed }
func inFlight(p domain.PriorityStats) int64     { return p.InFlight }

// deadLettered returns the number of the queue's dead letters.
func (m *messageTest) deadLettered() int64 {
	m.is.Helper()
	return m.total(func(p domain.PriorityStats) int64 { return p.DeadLettered })
}

// ids returns the message IDs of deliveries.
func ids(deliveries []domain.Delivery) []domain.ID {
	out := make([]domain.ID, len(deliveries))
	for i, d := range deliveries {
		out[i] = d.MessageID
	}
	return out
}

// queue returns the test's queue with settings, for the calls that take one.
func (m *messageTest) queue(s domain.Settings) domain.Queue {
	return domain.Queue{ID: m.queueID, Name: uniqueName("queue"), Settings: s}
}

// createQueue creates the test's queue in the harness's QueueStore, for the tests of a
// deletion, and forgets its deletion when the test ends, so that records do not pile up.
func (m *messageTest) createQueue(t *testing.T) domain.Queue {
	m.is.Helper()
	q := m.queue(testSettings)
	m.is.NoErr(m.Queues.CreateQueue(ctx, q)) // the queue is created
	t.Cleanup(func() { _ = m.Queues.ForgetDeletedQueue(ctx, q.ID) })
	return q
}

var messageStoreTests = []messageTestCase{
	{"Dequeue_EmptyQueue_DeliversNothing", func(t *testing.T, m *messageTest) {
		m.dequeueNothing()
	}},

	{"Dequeue_ReturnsHighestPriorityFirst", func(t *testing.T, m *messageTest) {
		low := m.enqueue(domain.PriorityLow, "low")
		medium := m.enqueue(domain.PriorityMedium, "medium")
		high := m.enqueue(domain.PriorityHigh, "high")
		m.is.Equal(m.dequeue().MessageID, high)   // HIGH first
		m.is.Equal(m.dequeue().MessageID, medium) // then MEDIUM
		m.is.Equal(m.dequeue().MessageID, low)    // then LOW
		m.dequeueNothing()
	}},

	{"Dequeue_SamePriority_ReturnsEnqueueOrder", func(t *testing.T, m *messageTest) {
		var ids []domain.ID
		for i := range 5 {
			ids = append(ids, m.enqueue(domain.PriorityMedium, strings.Repeat("x", i)))
		}
		for _, id := range ids {
			m.is.Equal(m.dequeue().MessageID, id) // messages of one priority come in enqueue order
		}
	}},

	{"Dequeue_ReturnsDeliveryDetails", func(t *testing.T, m *messageTest) {
		id := m.enqueue(domain.PriorityHigh, "send welcome email")
		d := m.dequeue()
		m.is.Equal(d.MessageID, id)                 // the message's ID
		m.is.Equal(d.Payload, "send welcome email") // its payload
		m.is.Equal(d.Priority, domain.PriorityHigh) // its priority
		m.is.Equal(d.DeliveryAttempts, 1)           // the first attempt
		m.is.True(!d.ReceiptHandle.IsZero())        // a receipt handle
		m.is.Equal(d.ReceiptHandle[6]>>4, byte(4))  // of UUID version 4
	}},

	{"Dequeue_ReturnsPayloadExactly", func(t *testing.T, m *messageTest) {
		payloads := []string{"", "\x00", "a\x00b", "héllo wörld ✓ 🎉", `{"json":"inside"}`, strings.Repeat("z", 1<<20)}
		for _, p := range payloads {
			m.enqueue(domain.PriorityLow, p)
		}
		for _, p := range payloads {
			m.is.Equal(m.dequeue().Payload, p) // the payload comes back byte for byte
		}
	}},

	{"Dequeue_HidesDeliveredMessageDuringVisibilityTimeout", func(t *testing.T, m *messageTest) {
		m.enqueue(domain.PriorityHigh, "once")
		m.dequeue()
		m.dequeueNothing() // the delivered message stays hidden
	}},

	{"Dequeue_AfterVisibilityTimeout_RedeliversWithNewHandle", func(t *testing.T, m *messageTest) {
		id := m.enqueue(domain.PriorityHigh, "again")
		first := m.dequeue()
		m.Wait(time.Second + margin)
		second := m.dequeue()
		m.is.Equal(second.MessageID, id)                       // the same message comes back
		m.is.Equal(second.DeliveryAttempts, 2)                 // as the second attempt
		m.is.True(second.ReceiptHandle != first.ReceiptHandle) // with a new receipt handle
		m.is.Equal(second.Payload, "again")                    // and its payload
	}},

	{"Dequeue_Redelivery_KeepsOriginalPlace", func(t *testing.T, m *messageTest) {
		first := m.enqueue(domain.PriorityMedium, "first")
		m.dequeue()
		second := m.enqueue(domain.PriorityMedium, "second")
		m.Wait(time.Second + margin)
		m.is.Equal(m.dequeue().MessageID, first)  // the redelivered message is older, so it comes first
		m.is.Equal(m.dequeue().MessageID, second) // then the newer one
	}},

	{"Dequeue_SkipsExpiredMessages", func(t *testing.T, m *messageTest) {
		m.enqueue(domain.PriorityHigh, "short-lived", withTTL(time.Second))
		live := m.enqueue(domain.PriorityLow, "long-lived")
		m.Wait(time.Second + margin)
		m.is.Equal(m.dequeue().MessageID, live) // the expired HIGH message is skipped
		m.dequeueNothing()
	}},

	{"Dequeue_ExhaustedMessage_MovesToDeadLettersAndGoesOn", func(t *testing.T, m *messageTest) {
		exhausted := m.enqueue(domain.PriorityHigh, "poison", withMaxDeliveryAttempts(1))
		d := m.dequeue()
		m.is.Equal(d.MessageID, exhausted)
		m.Wait(time.Second + margin)
		next := m.enqueue(domain.PriorityLow, "fine")
		m.is.Equal(m.dequeue().MessageID, next)                    // the exhausted message is skipped for the next one
		m.is.Equal(m.deadLettered(), int64(1))                     // and stored as a dead letter
		m.is.Equal(m.stats().Priorities[0].DeadLettered, int64(1)) // under its priority
		m.is.True(!m.acknowledge(d))                               // its old delivery can no longer be acknowledged
		m.Wait(time.Second + margin)
		m.is.Equal(m.dequeue().MessageID, next) // only the live message is redelivered
		m.dequeueNothing()
	}},

	{"Dequeue_AttemptLimit_AllowsExactlyThatManyDeliveries", func(t *testing.T, m *messageTest) {
		id := m.enqueue(domain.PriorityHigh, "three times", withMaxDeliveryAttempts(3))
		for attempt := 1; attempt <= 3; attempt++ {
			d := m.dequeue()
			m.is.Equal(d.MessageID, id)
			m.is.Equal(d.DeliveryAttempts, attempt) // each delivery counts one attempt
			m.Wait(time.Second + margin)
		}
		m.dequeueNothing()                     // the fourth dequeue moves it instead of delivering it
		m.is.Equal(m.deadLettered(), int64(1)) // into dead-letter storage
	}},

	{"Dequeue_ExhaustedButLeased_StaysUntilTimeout", func(t *testing.T, m *messageTest) {
		m.enqueue(domain.PriorityHigh, "last try", withMaxDeliveryAttempts(1))
		d := m.dequeue()
		m.dequeueNothing()
		m.is.Equal(m.deadLettered(), int64(0)) // a running delivery is not dead-lettered
		m.is.True(m.acknowledge(d))            // and can still be acknowledged
	}},

	{"Acknowledge_CurrentDelivery_RemovesMessage", func(t *testing.T, m *messageTest) {
		m.enqueue(domain.PriorityHigh, "done")
		d := m.dequeue()
		m.is.True(m.acknowledge(d)) // the current handle removes the message
		m.Wait(time.Second + margin)
		m.dequeueNothing()           // and it never comes back
		m.is.True(!m.acknowledge(d)) // a repeated acknowledgement changes nothing
	}},

	{"Acknowledge_StaleHandle_KeepsNewerDelivery", func(t *testing.T, m *messageTest) {
		m.enqueue(domain.PriorityHigh, "twice")
		first := m.dequeue()
		m.Wait(time.Second + margin)
		second := m.dequeue()
		m.is.True(!m.acknowledge(first)) // the stale handle removes nothing
		m.is.True(m.acknowledge(second)) // the current one still works
	}},

	{"Acknowledge_AfterVisibilityTimeout_IsLate", func(t *testing.T, m *messageTest) {
		id := m.enqueue(domain.PriorityHigh, "slow consumer")
		d := m.dequeue()
		m.Wait(time.Second + margin)
		m.is.True(!m.acknowledge(d))          // a late acknowledgement removes nothing
		m.is.Equal(m.dequeue().MessageID, id) // so the message is delivered again
	}},

	{"Acknowledge_OtherQueue_RemovesNothing", func(t *testing.T, m *messageTest) {
		m.enqueue(domain.PriorityHigh, "mine")
		d := m.dequeue()
		removed, err := m.Store.Acknowledge(ctx, newID(), []domain.Receipt{d.Receipt()})
		m.is.NoErr(err)
		m.is.True(!removed[0])      // a handle used through another queue removes nothing
		m.is.True(m.acknowledge(d)) // the message is still there for its own queue
	}},

	{"Acknowledge_UnknownMessageOrHandle_RemovesNothing", func(t *testing.T, m *messageTest) {
		id := m.enqueue(domain.PriorityHigh, "waiting")
		removed, err := m.Store.Acknowledge(ctx, m.queueID, []domain.Receipt{{MessageID: newID(), ReceiptHandle: newID()}})
		m.is.NoErr(err)
		m.is.True(!removed[0]) // an unknown message is not an error
		removed, err = m.Store.Acknowledge(ctx, m.queueID, []domain.Receipt{{MessageID: id, ReceiptHandle: newID()}})
		m.is.NoErr(err)
		m.is.True(!removed[0])                // an invented handle removes nothing
		m.is.Equal(m.dequeue().MessageID, id) // the waiting message is still delivered
	}},

	{"Dequeue_SettingsAreTheMessagesOwn", func(t *testing.T, m *messageTest) {
		long := m.enqueue(domain.PriorityHigh, "long", withVisibilityTimeout(30*time.Second))
		short := m.enqueue(domain.PriorityLow, "short")
		m.is.Equal(m.dequeue().MessageID, long)
		m.is.Equal(m.dequeue().MessageID, short)
		m.Wait(time.Second + margin)
		m.is.Equal(m.dequeue().MessageID, short) // only the message with the short timeout is back
		m.dequeueNothing()
	}},

	{"Stats_CountsReadyInFlightAndDeadLetteredByPriority", func(t *testing.T, m *messageTest) {
		m.enqueue(domain.PriorityHigh, "h")
		m.enqueue(domain.PriorityMedium, "m")
		m.enqueue(domain.PriorityLow, "l", withMaxDeliveryAttempts(1))
		m.enqueue(domain.PriorityLow, "expired", withTTL(time.Second))
		m.dequeue() // the HIGH one is in flight
		m.Wait(time.Second + margin)
		s := m.stats()
		m.is.Equal(s.Priorities[0].Priority, domain.PriorityHigh)
		m.is.Equal(s.Priorities[0].Ready, int64(1))              // the HIGH delivery timed out: ready again
		m.is.Equal(s.Priorities[1].Ready, int64(1))              // one MEDIUM ready
		m.is.Equal(s.Priorities[2].Ready, int64(1))              // one LOW ready; the expired one is not counted
		m.is.True(s.Priorities[1].OldestReadyAge >= time.Second) // its age counts from its enqueue
		m.dequeue()
		m.dequeue()
		m.dequeue()
		s = m.stats()
		m.is.Equal(s.Priorities[0].InFlight, int64(1)) // in flight per priority
		m.is.Equal(s.Priorities[2].InFlight, int64(1))
		m.is.Equal(s.Priorities[2].Ready, int64(0))
		m.is.Equal(s.Priorities[2].OldestReadyAge, time.Duration(0)) // no age without ready messages
	}},

	{"Stats_ExpiredDeliveryIsInFlight_ExhaustedMessageIsReadyUntilDeadLettered", func(t *testing.T, m *messageTest) {
		m.enqueue(domain.PriorityHigh, "expires while delivered", withTTL(time.Second), withVisibilityTimeout(3*time.Second))
		m.enqueue(domain.PriorityLow, "poison", withMaxDeliveryAttempts(1))
		m.dequeue()
		m.dequeue()
		m.Wait(time.Second + margin)
		s := m.stats()
		m.is.Equal(s.Priorities[0].InFlight, int64(1))           // expired, but its delivery still runs
		m.is.Equal(s.Priorities[0].Ready, int64(0))              // and it is never ready again
		m.is.Equal(s.Priorities[2].Ready, int64(1))              // the exhausted LOW one is back, awaiting its move
		m.is.True(s.Priorities[2].OldestReadyAge >= time.Second) // aged from its enqueue, not its delivery
		m.dequeueNothing()
		s = m.stats()
		m.is.Equal(s.Priorities[2].Ready, int64(0))        // moved out of the queue
		m.is.Equal(s.Priorities[2].DeadLettered, int64(1)) // into the LOW dead letters
		m.is.Equal(s.Priorities[0].DeadLettered, int64(0)) // and no other priority's
	}},

	{"Dequeue_ConcurrentConsumers_NeverShareADelivery", func(t *testing.T, m *messageTest) {
		const messages, consumers = 200, 20
		for i := range messages {
			m.enqueue(domain.Priorities[i%3], "work")
		}
		var mu sync.Mutex
		seen := map[domain.ID]int{}
		var wg sync.WaitGroup
		for range consumers {
			wg.Go(func() {
				for {
					result, err := m.Store.Dequeue(ctx, ports.DequeueParams{QueueID: m.queueID, Max: 1})
					if err != nil {
						t.Error(err)
						return
					}
					if len(result.Deliveries) == 0 {
						return
					}
					mu.Lock()
					seen[result.Deliveries[0].MessageID]++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		m.is.Equal(len(seen), messages) // every message was delivered
		for _, n := range seen {
			m.is.Equal(n, 1) // and none twice
		}
	}},
}
