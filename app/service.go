package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/retsu/retsu/domain"
	"github.com/retsu/retsu/ports"
)

// Service carries out Retsu's use cases over the ports it is given (see Retsu, which it
// implements, for what each returns). It is safe for concurrent use. Its methods return
// *domain.Error values whose codes callers can check; any other error is internal.
type Service struct {
	queues      ports.QueueStore
	messages    ports.MessageStore
	deadLetters ports.DeadLetterStore
	cache       ports.QueueCache
	log         *slog.Logger
	metrics     ports.Metrics
	options     Options
	// waits holds the dequeues that wait for a message, and their subscription to wakeups.
	waits *waitRoom
	// cacheOutage and databaseOutage log when the cache or the stores start failing and
	// when they work again, rather than on every request.
	cacheOutage, databaseOutage *outageLog
}

var _ Retsu = (*Service)(nil)

// Ports are the adapters a Service or the Cleaners work with.
type Ports struct {
	Queues   ports.QueueStore
	Messages ports.MessageStore
	// DeadLetters, Cleaning and Wakeups default to Messages when it plays their role.
	DeadLetters ports.DeadLetterStore
	// Cleaning is the cleaners' part of the stores; the Service does not use it.
	Cleaning ports.Cleaning
	Cache    ports.QueueCache
	// Wakeups tells waiting dequeues when to look again; nil leaves them to their timers,
	// which see delays and leases end but not new messages.
	Wakeups ports.Wakeups
	// Logger receives warnings about cache and database trouble, and the cleaners' passes;
	// nil discards them.
	Logger *slog.Logger
	// Metrics receives counts of messages, cache lookups and cleaner passes; nil discards
	// them.
	Metrics ports.Metrics
	// Clock times outages, so that one that flaps is logged at most once a minute, waits
	// and the cleaners' passes; nil is the system clock.
	Clock ports.Clock
}

// withDefaults fills the optional ports, and the roles that Messages plays too when they are
// not given: the stores of package memory and of package postgres play them all.
func (p Ports) withDefaults() Ports {
	if p.DeadLetters == nil {
		p.DeadLetters, _ = p.Messages.(ports.DeadLetterStore)
	}
	if p.Cleaning == nil {
		p.Cleaning, _ = p.Messages.(ports.Cleaning)
	}
	if p.Wakeups == nil {
		p.Wakeups, _ = p.Messages.(ports.Wakeups)
	}
	if p.Logger == nil {
		p.Logger = slog.New(slog.DiscardHandler)
	}
	if p.Metrics == nil {
		p.Metrics = ports.NopMetrics{}
	}
	if p.Clock == nil {
		p.Clock = ports.SystemClock{}
	}
	return p
}

// Options tune a Service; a zero field takes its default.
type Options struct {
	// IdempotencyRetention is how long an idempotency key replays its request; the default
	// is domain.DefaultIdempotencyRetention (24 h).
	IdempotencyRetention time.Duration
}

// NewService returns a Service over p. Close it to end the dequeues that wait.
func NewService(p Ports, o Options) *Service {
	p = p.withDefaults()
	if o.IdempotencyRetention <= 0 {
		o.IdempotencyRetention = domain.DefaultIdempotencyRetention
	}
	s := &Service{
		queues: p.Queues, messages: p.Messages, deadLetters: p.DeadLetters, cache: p.Cache,
		log: p.Logger, metrics: p.Metrics, options: o, waits: newWaitRoom(p.Clock, p.Wakeups),
		cacheOutage: &outageLog{log: p.Logger, clock: p.Clock,
			down: "queue-details cache unavailable; serving queue details from the database",
			back: "queue-details cache available again"},
		databaseOutage: &outageLog{log: p.Logger, clock: p.Clock,
			down: "database unavailable; requests that need it answer 503 until it is back",
			back: "database available again"},
	}
	return s
}

// Close ends every wait: the dequeues that wait answer at once with what they have, which is
// nothing, and later dequeues do not wait. It returns once the service's subscription to the
// wakeups, if it has one or is making one, is cancelled. The other use cases go on working;
// the stores stay open.
func (s *Service) Close() {
	s.waits.close()
}

// CreateQueue creates a queue with the supplied settings and defaults for the others.
// Returns invalid_queue_name, invalid_visibility_timeout, invalid_max_delivery_attempts,
// invalid_default_message_ttl or queue_already_exists.
func (s *Service) CreateQueue(ctx context.Context, n domain.NewQueue) (domain.Queue, error) {
	settings, err := n.Settings()
	if err != nil {
		return domain.Queue{}, err
	}
	q := domain.Queue{ID: newTimeOrderedID(), Name: n.Name, Settings: settings}
	if err := s.noteDatabase(ctx, s.queues.CreateQueue(ctx, q)); err != nil {
		return domain.Queue{}, fmt.Errorf("create queue %q: %w", n.Name, err)
	}
	s.storeInCache(ctx, q)
	return q, nil
}

// Queue returns a queue's current details. Returns queue_not_found.
func (s *Service) Queue(ctx context.Context, id domain.ID) (domain.Queue, error) {
	return s.queueDetails(ctx, id)
}

// ListQueues returns a page of queues ordered by name; see ports.ListQueuesParams. A zero
// Limit takes domain.DefaultListLimit. A Name that no queue could have, the empty one
// included, gives an empty page, and After may be any string, since names compare byte by
// byte. Returns invalid_query for a limit out of range.
func (s *Service) ListQueues(ctx context.Context, p ports.ListQueuesParams) ([]domain.Queue, error) {
	if p.Limit == 0 {
		p.Limit = domain.DefaultListLimit
	}
	if err := domain.ValidateListLimit(p.Limit); err != nil {
		return nil, err
	}
	if err := validateListCursor(p.After); err != nil {
		return nil, err
	}
	if p.Name != nil && domain.ValidateQueueName(*p.Name) != nil {
		return nil, nil
	}
	queues, err := s.queues.ListQueues(ctx, p)
	if err := s.noteDatabase(ctx, err); err != nil {
		return nil, fmt.Errorf("list queues: %w", err)
	}
	return queues, nil
}

// UpdateQueue changes the supplied settings of a queue and returns the complete queue. The
// new settings apply to messages enqueued afterwards. Returns empty_queue_update,
// invalid_visibility_timeout, invalid_max_delivery_attempts, invalid_default_message_ttl or
// queue_not_found.
func (s *Service) UpdateQueue(ctx context.Context, id domain.ID, u domain.SettingsUpdate) (domain.Queue, error) {
	if u.IsEmpty() {
		return domain.Queue{}, domain.ErrEmptyQueueUpdate
	}
	if err := u.Validate(); err != nil {
		return domain.Queue{}, err
	}
	q, err := s.queues.UpdateQueue(ctx, id, u)
	if err := s.noteDatabase(ctx, err); err != nil {
		return domain.Queue{}, fmt.Errorf("update queue %s: %w", id, err)
	}
	s.storeInCache(ctx, q)
	return q, nil
}

// queueDetails reads a queue from the cache, or from the QueueStore on a miss, filling the
// cache. Cache trouble is logged and answered from the QueueStore, so that requests
// succeed without the cache.
func (s *Service) queueDetails(ctx context.Context, id domain.ID) (domain.Queue, error) {
	q, found, cacheErr := s.cache.Queue(ctx, id)
	if errors.Is(cacheErr, domain.ErrQueueNotFound) {
		s.metrics.QueueCacheLookup(true)
		return domain.Queue{}, cacheErr
	}
	s.noteCache("read", cacheErr)
	hit := cacheErr == nil && found
	s.metrics.QueueCacheLookup(hit)
	if hit {
		return q, nil
	}
	q, err := s.queues.Queue(ctx, id)
	if err := s.noteDatabase(ctx, err); err != nil {
		return domain.Queue{}, fmt.Errorf("queue %s: %w", id, err)
	}
	if cacheErr == nil {
		s.noteCache("fill", s.cache.Fill(ctx, q))
	}
	return q, nil
}

// storeInCache writes a queue just written to the QueueStore into the cache. A failure is
// logged, not returned: the QueueStore holds the change, and the entry will be refilled.
func (s *Service) storeInCache(ctx context.Context, q domain.Queue) {
	s.noteCache("store", s.cache.Store(ctx, q))
}

// noteCache counts cache failures, and logs when the cache starts failing and when it
// works again.
func (s *Service) noteCache(op string, err error) {
	if err == nil {
		s.cacheOutage.succeeded()
		return
	}
	s.metrics.QueueCacheFailed()
	s.cacheOutage.failed(err, "op", op)
}

// noteDatabase logs when the stores become unreachable and when they answer again, and
// returns err. An error without a code says nothing either way, and neither does one of a
// request that its client abandoned, which the driver reports as a lost connection.
func (s *Service) noteDatabase(ctx context.Context, err error) error {
	if errors.Is(ctx.Err(), context.Canceled) {
		return err
	}
	switch code := domain.ErrorCode(err); {
	case err == nil || code != domain.CodeUnavailable && code != domain.CodeInternal:
		s.databaseOutage.succeeded()
	case code == domain.CodeUnavailable:
		s.databaseOutage.failed(err)
	}
	return err
}

// validateListCursor refuses an after cursor that no name could follow in the stores' byte
// order and that a database could not take: invalid UTF-8, a NUL, or more than 1,024 bytes.
// Returns invalid_query.
func validateListCursor(after string) error {
	if len(after) > maxListCursor || !utf8.ValidString(after) || strings.ContainsRune(after, 0) {
		return &domain.Error{Code: domain.CodeInvalidQuery, Message: "after must be valid UTF-8 without NUL, at most 1,024 bytes"}
	}
	return nil
}

const maxListCursor = 1024

// newTimeOrderedID returns a UUID version 7, whose time prefix keeps IDs roughly ordered in
// indexes. Delivery order never depends on it.
func newTimeOrderedID() domain.ID {
	return domain.ID(uuid.Must(uuid.NewV7()))
}
