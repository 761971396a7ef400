package test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/retsu/retsu/adapters/dashboard"
)

// dashboardRig is a server on a schema of the test database that only the dashboard's
// tests use, so that their pages list their own queues, and one browser for them all.
type dashboardRig struct {
	databaseURL string
	server      *retsuProcess
	api         *client
	browser     context.Context
}

func newDashboardRig(t *testing.T) *dashboardRig {
	t.Helper()
	schema := fmt.Sprintf("dashboard_%d", os.Getpid())
	if _, err := db.Exec(t.Context(), "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = db.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE") })
	url := databaseURL + "&search_path=" + schema
	if out, err := exec.Command(binary, "migrate", "up", "--database-url", url).CombinedOutput(); err != nil {
		t.Fatalf("migrate %s: %v\n%s", schema, err, out)
	}
	server := startServer(t, "RETSU_DATABASE_URL="+url)
	return &dashboardRig{databaseURL: url, server: server, api: server.client(t), browser: startBrowser(t)}
}

// TestDashboard drives the dashboard in headless Chromium against the real binary on
// PostgreSQL. The subtests share one browser, each in tabs of its own.
func TestDashboard(t *testing.T) {
	t.Parallel()
	rig := newDashboardRig(t)
	t.Run("QueuesPage_ShowsCountsChangeAsMessagesAreEnqueued", func(t *testing.T) {
		t.Parallel()
		testQueuesPageCounts(t, rig)
	})
	t.Run("QueuesPage_PagesAndFiltersAThousandQueues", func(t *testing.T) {
		t.Parallel()
		testThousandQueues(t, rig)
	})
	t.Run("QueuePage_EditsSettingsAndShowsTheAPIsSentence", func(t *testing.T) {
		t.Parallel()
		testQueueSettings(t, rig)
	})
	t.Run("DeadLetters_RedriveOneAndItLeaves", func(t *testing.T) {
		t.Parallel()
		testRedrive(t, rig)
	})
	t.Run("DeadLetters_ShowAScriptPayloadAsText", func(t *testing.T) {
		t.Parallel()
		testScriptPayload(t, rig)
	})
	t.Run("Queue_CreatePurgeAndDelete", func(t *testing.T) {
		t.Parallel()
		testQueueLifecycle(t, rig)
	})
	t.Run("TokenProtectedServer_PageAsksForTheToken", func(t *testing.T) {
		t.Parallel()
		testToken(t, rig)
	})
	t.Run("SecurityPolicy_IsSentAndEnforced", func(t *testing.T) {
		t.Parallel()
		testSecurityPolicy(t, rig)
	})
}

// Cells of the queues page, by queue name, priority and column class.
func queueCell(name, priority, column string) string {
	return fmt.Sprintf(`document.querySelector('tbody[data-queue=%s] tr[data-priority=%s] td.%s')?.textContent`, js(name), priority, column)
}

func testQueuesPageCounts(t *testing.T, rig *dashboardRig) {
	q := rig.api.createQueue("counts", nil)
	b := openTab(t, rig.browser, rig.server.URL())
	b.open("/ui/?prefix=" + q.Name)
	b.waitFor(queueCell(q.Name, "HIGH", "ready") + ` === '0'`) // the queue is listed, empty

	for range 3 {
		rig.api.enqueue(q.ID, "job", "HIGH")
	}
	rig.api.enqueue(q.ID, "job", "LOW")
	rig.api.enqueue(q.ID, "later", "MEDIUM", map[string]any{"delay_seconds": 600})
	b.waitFor(queueCell(q.Name, "HIGH", "ready") + ` === '3'`)     // within a refresh, the new messages show
	b.waitFor(queueCell(q.Name, "LOW", "ready") + ` === '1'`)      // per priority
	b.waitFor(queueCell(q.Name, "MEDIUM", "delayed") + ` === '1'`) // a delayed one apart
	b.waitFor(queueCell(q.Name, "MEDIUM", "ready") + ` === '0'`)   // not ready
	if _, ok := rig.api.dequeue(q.ID); !ok {
		t.Fatal("nothing to dequeue")
	}
	b.waitFor(queueCell(q.Name, "HIGH", "in-flight") + ` === '1'`) // a delivery moves one in flight
	b.waitFor(queueCell(q.Name, "HIGH", "ready") + ` === '2'`)     // out of ready
	if age := evaluate[string](b, queueCell(q.Name, "LOW", "oldest")); !strings.HasSuffix(age, " s") {
		t.Errorf("oldest ready age %q, want seconds", age) // the oldest ready message's age shows
	}
	b.screenshot("queues")

	// The filter is a form, which the keyboard submits.
	b.fill("#prefix", "counts-no-such-queue")
	b.do(chromedp.SendKeys(chromedp.CSS("#prefix"), "\r"))
	b.waitFor(`location.search === '?prefix=counts-no-such-queue'`)                              // the filter is in the address
	b.waitFor(`document.querySelector('p.empty')?.textContent.includes('No queue name starts')`) // and nothing matches it

	// A narrow window: the table scrolls in its box, the page itself does not.
	b.do(chromedp.EmulateViewport(390, 844))
	b.open("/ui/?prefix=" + q.Name)
	b.waitFor(queueCell(q.Name, "HIGH", "ready") + ` === '2'`)
	if evaluate[bool](b, `document.documentElement.scrollWidth > window.innerWidth`) {
		t.Error("the page is wider than a narrow window") // readable at 390 px
	}
	b.screenshot("queues-narrow")
}

func testThousandQueues(t *testing.T, rig *dashboardRig) {
	createQueues(t, rig.server.URL(), "many-%04d", 1000)
	b := openTab(t, rig.browser, rig.server.URL())
	b.open("/ui/?prefix=many-")
	rows := `document.querySelectorAll('table.queues tbody').length`
	firstName := `document.querySelector('table.queues tbody')?.dataset.queue`
	b.waitFor(rows + ` === 25`)                                      // one page of 25 of the thousand
	b.waitFor(firstName + ` === 'many-0000'`)                        // in name order
	b.click(`a[rel=next]`)                                           // an ordinary link to the next page
	b.waitFor(firstName + ` === 'many-0025'`)                        // which follows the last name shown
	b.waitFor(`location.search === '?prefix=many-&after=many-0024'`) // at an address of its own

	b.open("/ui/?prefix=many-09")
	b.waitFor(firstName + ` === 'many-0900'`) // a prefix finds its names, in one listing call
	b.waitFor(rows + ` === 25`)
	b.open("/ui/?prefix=many-0999")
	b.waitFor(firstName + ` === 'many-0999'`) // down to one name
	b.waitFor(rows + ` === 1`)

	// Over two refreshes, at most one stats call per queue shown per listing call.
	b.waitFor(`performance.getEntriesByType('resource').filter((e) => e.name.includes('/v1/queues?')).length >= 2`)
	calls := evaluate[[]int](b, `[
		performance.getEntriesByType('resource').filter((e) => e.name.includes('/v1/queues?')).length,
		performance.getEntriesByType('resource').filter((e) => e.name.endsWith('/stats')).length]`)
	if calls[1] > calls[0] {
		t.Errorf("%d stats calls for %d refreshes of one queue", calls[1], calls[0])
	}
}

// createQueues creates n queues named by format and their index, 8 requests at a time.
func createQueues(t *testing.T, base, format string, n int) {
	t.Helper()
	names := make(chan string, n)
	for i := range n {
		names <- fmt.Sprintf(format, i)
	}
	close(names)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for name := range names {
				res, err := http.Post(base+"/v1/queues", "application/json", strings.NewReader(`{"name":`+js(name)+`}`))
				if err != nil {
					errs <- err
					continue
				}
				if res.StatusCode != http.StatusCreated {
					errs <- fmt.Errorf("create %s: %s", name, res.Status)
				}
				res.Body.Close()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

func testQueueSettings(t *testing.T, rig *dashboardRig) {
	q := rig.api.createQueue("settings", nil)
	rig.api.enqueue(q.ID, "job", "MEDIUM")
	b := openTab(t, rig.browser, rig.server.URL())
	b.open("/ui/?prefix=" + q.Name)
	b.waitFor(queueCell(q.Name, "MEDIUM", "ready") + ` === '1'`)
	b.do(chromedp.Evaluate[chromedp.Void](`window.sameDocument = true`))
	b.click(fmt.Sprintf(`tbody[data-queue=%s] a`, js(q.Name)))   // the queue's link
	b.waitFor(`location.pathname === ` + js("/ui/queues/"+q.ID)) // opens the queue's address
	if !evaluate[bool](b, `window.sameDocument === true`) {
		t.Error("following a link reloaded the page") // the history API changed the address
	}
	b.waitFor(`document.querySelector('h1').textContent === ` + js(q.Name))
	b.waitFor(`document.querySelector('table.stats tr[data-priority=MEDIUM] td.ready')?.textContent === '1'`)
	b.waitFor(`document.querySelectorAll('svg.chart polyline.ready').length === 1`) // the backlog chart, from the polled stats
	b.waitFor(`document.getElementById('edit-visibility_timeout_seconds').value === ` + js(fmt.Sprint(q.VisibilityTimeoutSeconds)))
	b.screenshot("queue")

	// A value the API refuses: the page shows the API's own sentence.
	refused := rig.api.do(http.MethodPatch, "/v1/queues/"+q.ID, map[string]any{"visibility_timeout_seconds": 0})
	var problem struct{ Detail string }
	refused.decode(t, &problem)
	b.fill("#edit-visibility_timeout_seconds", "0")
	b.press("Save settings")
	b.waitFor(`document.getElementById('notice').textContent.includes(` + js(problem.Detail) + `)`)

	b.fill("#edit-visibility_timeout_seconds", "45")
	b.press("Save settings")
	b.waitFor(`document.getElementById('notice').textContent.includes('Saved the settings')`)
	var saved queue
	rig.api.do(http.MethodGet, "/v1/queues/"+q.ID, nil).decode(t, &saved)
	if saved.VisibilityTimeoutSeconds != 45 || saved.MaxDeliveryAttempts != q.MaxDeliveryAttempts {
		t.Errorf("after saving: %+v", saved) // the PATCH changed the one setting edited
	}

	// Back returns to the list, at its address.
	b.do(chromedp.NavigateBack())
	b.waitFor(`location.pathname === '/ui/' && document.querySelector('h1').textContent === 'Queues'`)
}

// deadLetters creates a queue whose messages are dead letters after one delivery, with
// those payloads, and returns it and their IDs.
func deadLetters(t *testing.T, c *client, prefix string, payloads ...string) (queue, []string) {
	t.Helper()
	q := c.createQueue(prefix, map[string]any{"max_delivery_attempts": 1, "visibility_timeout_seconds": 1})
	var ids []string
	for _, payload := range payloads {
		ids = append(ids, c.enqueue(q.ID, payload, "HIGH"))
	}
	for range payloads {
		if _, ok := c.dequeue(q.ID); !ok {
			t.Fatal("nothing to dequeue")
		}
	}
	// Once the leases ended, a dequeue meets the exhausted messages and moves them.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if _, ok := c.dequeue(q.ID); ok {
			t.Fatal("an exhausted message was delivered again")
		}
		if deadLettered(t, c, q.ID) == len(payloads) {
			return q, ids
		}
		if time.Now().After(deadline) {
			t.Fatal("the messages did not become dead letters")
		}
	}
}

// deadLettered returns the dead letters that the stats count for a queue.
func deadLettered(t *testing.T, c *client, queueID string) int {
	t.Helper()
	var stats struct {
		Priorities []struct {
			DeadLettered int `json:"dead_lettered"`
		}
	}
	c.do(http.MethodGet, "/v1/queues/"+queueID+"/stats", nil).decode(t, &stats)
	n := 0
	for _, p := range stats.Priorities {
		n += p.DeadLettered
	}
	return n
}

func testRedrive(t *testing.T, rig *dashboardRig) {
	q, ids := deadLetters(t, rig.api, "redrive", "first", "second", "third")
	b := openTab(t, rig.browser, rig.server.URL())
	b.open("/ui/?prefix=" + q.Name)
	b.waitFor(queueCell(q.Name, "HIGH", "dead") + ` === '3'`) // the list counts them
	b.click(fmt.Sprintf(`tbody[data-queue=%s] td.dead a`, js(q.Name)))
	b.waitFor(`location.pathname === ` + js("/ui/queues/"+q.ID+"/dead-letters")) // and links to them
	row := func(id string) string { return fmt.Sprintf(`document.querySelector('tr[data-id=%s]')`, js(id)) }
	b.waitFor(row(ids[0]) + ` && ` + row(ids[1]) + ` && ` + row(ids[2]))
	b.screenshot("dead-letters")

	b.click(fmt.Sprintf(`tr[data-id=%s] input[type=checkbox]`, js(ids[0])))
	b.press("Redrive selected")
	b.confirm("Redrive 1 dead letter")
	b.waitFor(row(ids[0]) + ` === null`) // the redriven one leaves the list
	b.waitFor(`document.getElementById('notice').textContent.includes('Redrove 1 of 1 dead letter')`)
	if evaluate[bool](b, row(ids[1])+` === null`) {
		t.Error("the dead letter not selected left too")
	}
	m, ok := rig.api.dequeue(q.ID)
	if !ok || m.ID != ids[0] || m.Payload != "first" {
		t.Errorf("after the redrive, dequeue gave %+v, %v", m, ok) // it is back in the queue
	}

	b.click(fmt.Sprintf(`tr[data-id=%s] input[type=checkbox]`, js(ids[1])))
	b.press("Delete selected")
	b.confirm("Delete 1 dead letter")
	b.waitFor(row(ids[1]) + ` === null`) // the deleted one leaves the list
	b.waitFor(`document.getElementById('notice').textContent.includes('Deleted 1 dead letter')`)
	if res := rig.api.do(http.MethodGet, "/v1/queues/"+q.ID+"/dead-letters/"+ids[1], nil); res.Status != http.StatusNotFound {
		t.Errorf("the deleted dead letter answers %d", res.Status) // and the queue
	}

	b.press("Delete all…")
	b.confirm("Delete every dead letter of " + q.Name)
	b.waitFor(row(ids[2]) + ` === null`)
	b.waitFor(`document.querySelector('p.empty:not([hidden])')?.textContent === 'No dead letters.'`)
	if n := deadLettered(t, rig.api, q.ID); n != 0 {
		t.Errorf("%d dead letters left after deleting all", n)
	}
}

func testScriptPayload(t *testing.T, rig *dashboardRig) {
	payload := `<script>window.pwned = 1</script><img src=x onerror="window.pwned = 2">`
	q, ids := deadLetters(t, rig.api, "xss", payload)
	b := openTab(t, rig.browser, rig.server.URL())
	b.open("/ui/queues/" + q.ID + "/dead-letters")
	preview := fmt.Sprintf(`document.querySelector('tr[data-id=%s] td.preview code')?.textContent`, js(ids[0]))
	b.waitFor(preview + ` === ` + js(payload)) // the payload shows as the text it is
	b.press("Show all")
	b.waitFor(`document.querySelector('tr.payload-row:not([hidden]) pre')?.textContent === ` + js(payload))
	b.open("/ui/queues/" + q.ID + "/dead-letters/" + ids[0])
	b.waitFor(`document.querySelector('pre.payload')?.textContent === ` + js(payload)) // on its own page too
	if pwned := evaluate[string](b, `String(window.pwned)`); pwned != "undefined" {
		t.Errorf("window.pwned is %s: the payload ran", pwned) // no script of the payload ran
	}
	if n := evaluate[int](b, `document.querySelectorAll('main script, main img').length`); n != 0 {
		t.Errorf("%d elements came from the payload", n) // nor became an element
	}

	b.press("Delete…")
	b.confirm("Delete this dead letter")
	b.waitFor(`location.pathname === ` + js("/ui/queues/"+q.ID+"/dead-letters")) // back to the list
	b.waitFor(`document.querySelector('p.empty:not([hidden])')?.textContent === 'No dead letters.'`)
	if res := rig.api.do(http.MethodGet, "/v1/queues/"+q.ID+"/dead-letters/"+ids[0], nil); res.Status != http.StatusNotFound {
		t.Errorf("the deleted dead letter answers %d", res.Status)
	}
}

func testQueueLifecycle(t *testing.T, rig *dashboardRig) {
	name := uniqueName("created")
	b := openTab(t, rig.browser, rig.server.URL())
	b.open("/ui/")
	b.click("details.create summary")
	b.fill("#new-name", name)
	b.fill("#new-max_delivery_attempts", "3")
	b.press("Create queue")
	b.waitFor(`document.querySelector('h1')?.textContent === ` + js(name)) // the new queue's page
	queueID := strings.TrimPrefix(evaluate[string](b, `location.pathname`), "/ui/queues/")
	var created queue
	rig.api.do(http.MethodGet, "/v1/queues/"+queueID, nil).decode(t, &created)
	if created.Name != name || created.MaxDeliveryAttempts != 3 {
		t.Errorf("created %+v", created) // with the settings entered
	}

	rig.api.enqueue(queueID, "a", "LOW")
	rig.api.enqueue(queueID, "b", "LOW")
	b.press("Purge messages…")
	b.confirm("Remove every message of " + name)
	b.waitFor(`document.getElementById('notice').textContent.includes('Removed 2 messages')`)
	if _, ok := rig.api.dequeue(queueID); ok {
		t.Error("a purged message was delivered")
	}

	b.press("Delete queue…")
	b.confirm("Delete the queue " + name)
	b.waitFor(`location.pathname === '/ui/' && document.getElementById('notice').textContent.includes('Deleted the queue')`)
	if res := rig.api.do(http.MethodGet, "/v1/queues/"+queueID, nil); res.Status != http.StatusNotFound {
		t.Errorf("the deleted queue answers %d", res.Status)
	}
}

// get sends a GET with an optional bearer token and returns the answer's status,
// content type and body.
func get(t *testing.T, url, token string) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, res.Header.Get("Content-Type"), string(body)
}

func testToken(t *testing.T, rig *dashboardRig) {
	const token = "dashboard-test-token-0123456789"
	server := startServer(t, "RETSU_DATABASE_URL="+rig.databaseURL, "RETSU_API_TOKENS="+token)
	name := uniqueName("guarded")
	req, _ := http.NewRequest(http.MethodPost, server.URL()+"/v1/queues", strings.NewReader(`{"name":`+js(name)+`}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != http.StatusCreated {
		t.Fatalf("create queue: %v %v", res, err)
	}
	res.Body.Close()

	// The dashboard's files are public; the API stays behind the token.
	for _, path := range []string{"/ui/", "/ui", "/ui/queues/x", "/ui/../v1/queues"} {
		status, contentType, _ := get(t, server.URL()+path, "")
		if status != http.StatusOK || contentType != "text/html; charset=utf-8" {
			t.Errorf("GET %s without a token: %d %s, want the page", path, status, contentType)
		}
	}
	for _, path := range []string{"/v1/queues", "/v1/queues?name=" + name, "/metrics", "/v1/queues/019c9a65-7d3a-7c6b-8a9d-123456789abc/dead-letters"} {
		if status, _, _ := get(t, server.URL()+path, ""); status != http.StatusUnauthorized {
			t.Errorf("GET %s without a token: %d, want 401", path, status)
		}
	}
	_, _, unauthorized := get(t, server.URL()+"/v1/queues", "")
	var problem struct{ Detail string }
	if err := json.Unmarshal([]byte(unauthorized), &problem); err != nil {
		t.Fatal(err)
	}

	b := openTab(t, rig.browser, server.URL())
	b.open("/ui/?prefix=" + name)
	b.waitFor(`document.getElementById('token-dialog').open`) // the page asks for the token
	b.waitFor(`document.getElementById('token-reason').textContent === ` + js(problem.Detail))
	if n := evaluate[int](b, `document.querySelectorAll('table.queues tbody').length`); n != 0 {
		t.Errorf("%d queues shown without a token", n) // no token, no data
	}
	b.screenshot("token")

	b.fill("#token-input", "not-the-token-at-all-000")
	b.press("Use token")
	b.waitFor(`document.getElementById('token-dialog').open && document.getElementById('token-reason').textContent.startsWith('The server refused the token')`)
	b.fill("#token-input", token)
	b.press("Use token")
	b.waitFor(queueCell(name, "HIGH", "ready") + ` === '0'`) // with the token, the data
	if stored := evaluate[string](b, `sessionStorage.getItem('retsu.token')`); stored != token {
		t.Errorf("sessionStorage holds %q", stored) // kept for the tab
	}
	if cookies := evaluate[string](b, `document.cookie`); cookies != "" {
		t.Errorf("cookies %q", cookies) // and never in a cookie
	}
	b.press("Forget token")
	b.waitFor(`document.getElementById('token-dialog').open`) // forgotten: asked again
}

func testSecurityPolicy(t *testing.T, rig *dashboardRig) {
	status, _, _ := get(t, rig.server.URL()+"/ui/queues/x", "")
	if status != http.StatusOK {
		t.Fatalf("GET /ui/queues/x: %d", status)
	}
	res, err := http.Get(rig.server.URL() + "/ui/queues/x")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	for header, want := range map[string]string{
		"Content-Security-Policy": dashboard.ContentSecurityPolicy,
		"X-Content-Type-Options":  "nosniff",
		"Referrer-Policy":         "no-referrer",
		"X-Frame-Options":         "DENY",
		"Cache-Control":           "no-cache",
	} {
		if got := res.Header.Get(header); got != want {
			t.Errorf("%s: %q, want %q", header, got, want)
		}
	}

	// The browser enforces it: strings do not become markup, nor inline scripts run.
	b := openTab(t, rig.browser, rig.server.URL())
	b.allow("TrustedHTML")
	b.allow("Content Security Policy")
	b.open("/ui/")
	b.waitFor(`document.querySelector('h1')?.textContent === 'Queues'`)
	blocked := evaluate[string](b, `(() => { try { document.body.insertAdjacentHTML('beforeend', '<b id=injected>x</b>'); return 'parsed'; } catch (e) { return e.name; } })()`)
	if blocked != "TypeError" {
		t.Errorf("inserting HTML from a string: %s, want a TypeError from Trusted Types", blocked)
	}
	b.allow("TrustedScript")
	ran := evaluate[string](b, `(() => {
		try {
			const s = document.createElement('script');
			s.append(document.createTextNode('window.inline = 1'));
			document.body.append(s);
		} catch {}
		return String(window.inline);
	})()`)
	if ran != "undefined" {
		t.Errorf("an inline script ran: window.inline is %s", ran)
	}

	// Turned off, /ui/ is just an unknown address of the API.
	off := startServer(t, "RETSU_DATABASE_URL="+rig.databaseURL, "RETSU_DASHBOARD=false")
	if status, contentType, _ := get(t, off.URL()+"/ui/", ""); status != http.StatusNotFound || contentType != "application/problem+json" {
		t.Errorf("with RETSU_DASHBOARD=false, /ui/ answers %d %s", status, contentType)
	}
}
