//go:build screenshots

package test

import (
	"fmt"
	"net/http"
	"testing"
	"time"
)

// docsDir receives the README's screenshots.
const docsDir = "../docs"

// TestDashboard_DocsScreenshots takes the screenshots of docs/ (make screenshots): a few
// queues with a backlog that changes for a couple of minutes, so that the chart has a
// history, on a server and schema of their own.
func TestDashboard_DocsScreenshots(t *testing.T) {
	rig := newDashboardRig(t)
	queues := map[string]queue{}
	for _, name := range []string{"emails", "invoices", "reports", "thumbnails", "webhooks"} {
		settings := map[string]any{"name": name}
		if name == "webhooks" {
			settings = map[string]any{"name": name, "max_delivery_attempts": 1, "visibility_timeout_seconds": 1}
		}
		res := rig.api.do(http.MethodPost, "/v1/queues", settings)
		var q queue
		res.decode(t, &q)
		queues[name] = q
	}
	for i := range 40 {
		rig.api.enqueue(queues["thumbnails"].ID, fmt.Sprintf(`{"image":"%04d.jpg"}`, i), "LOW")
	}
	for i := range 6 {
		rig.api.enqueue(queues["invoices"].ID, fmt.Sprintf(`{"invoice":%d}`, 1000+i), "MEDIUM", map[string]any{"delay_seconds": 3600})
	}
	rig.api.enqueue(queues["invoices"].ID, `{"invoice":999}`, "HIGH")
	for _, payload := range []string{
		`{"url":"https://example.com/hooks/orders","event":"order.paid","order":4711}`,
		`{"url":"https://example.com/hooks/orders","event":"order.refunded","order":4702}`,
		`<script>alert("shown as text")</script>`,
	} {
		rig.api.enqueue(queues["webhooks"].ID, payload, "HIGH")
		rig.api.dequeue(queues["webhooks"].ID)
	}

	b := openTab(t, rig.browser, rig.server.URL())
	b.open("/ui/")
	b.waitFor(`document.querySelectorAll('table.queues tbody').length === 5`)
	// Less than two minutes of emails arriving faster than they are delivered, then slower.
	emails := queues["emails"].ID
	for step := range 50 {
		arrivals, deliveries := 6, 2
		if step >= 30 {
			arrivals, deliveries = 1, 5
		}
		for i := range arrivals {
			rig.api.enqueue(emails, fmt.Sprintf(`{"to":"user%d@example.com"}`, step*10+i), []string{"HIGH", "MEDIUM", "LOW"}[i%3])
		}
		for range deliveries {
			if m, ok := rig.api.dequeue(emails); ok && step%4 != 0 {
				rig.api.acknowledge(emails, m)
			}
		}
		if step == 1 {
			rig.api.dequeue(queues["webhooks"].ID) // the leases ended: the three become dead letters
		}
		time.Sleep(2 * time.Second)
	}
	b.screenshotTo(docsDir, "dashboard-queues")

	b.click(`tbody[data-queue="emails"] a`)
	b.waitFor(`document.querySelectorAll('svg.chart polyline.ready').length === 1`)
	b.screenshotTo(docsDir, "dashboard-queue")

	b.open("/ui/queues/" + queues["webhooks"].ID + "/dead-letters")
	b.waitFor(`document.querySelectorAll('tr[data-id]').length === 3`)
	b.press("Show all")
	b.screenshotTo(docsDir, "dashboard-dead-letters")
}
