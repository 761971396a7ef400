package domain_test

import (
	"fmt"

	"github.com/retsu/retsu/domain"
)

// Example validates the two values a caller most often gets wrong: a queue name and a
// message priority. Both report a stable code that the HTTP edge turns into a 400.
func Example() {
	for _, name := range []string{"emails", "billing.v2-retry_queue", "Emails", "-emails"} {
		if err := domain.ValidateQueueName(name); err != nil {
			fmt.Printf("queue %q: %s\n", name, domain.ErrorCode(err))
			continue
		}
		fmt.Printf("queue %q: ok\n", name)
	}

	for _, s := range []string{"HIGH", "LOW", "high"} {
		p, err := domain.ParsePriority(s)
		if err != nil {
			fmt.Printf("priority %q: %s\n", s, domain.ErrorCode(err))
			continue
		}
		fmt.Printf("priority %q: %s, delivered before LOW: %t\n", s, p, p < domain.PriorityLow)
	}
	// Output:
	// queue "emails": ok
	// queue "billing.v2-retry_queue": ok
	// queue "Emails": invalid_queue_name
	// queue "-emails": invalid_queue_name
	// priority "HIGH": HIGH, delivered before LOW: true
	// priority "LOW": LOW, delivered before LOW: false
	// priority "high": invalid_priority
}
