package test

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// screenshotDir receives the screenshots of every run of the dashboard's tests (git-ignored).
const screenshotDir = "../.run/ui-screenshots"

// startBrowser starts one headless Chromium for the test and its subtests, each of which
// opens tabs of its own, and stops it when the test ends. It fails, never skips, without
// Chromium: scripts/services.sh up installs Debian's.
func startBrowser(t *testing.T) context.Context {
	t.Helper()
	chromium := cmp.Or(os.Getenv("RETSU_TEST_CHROMIUM"), "/usr/bin/chromium")
	if _, err := exec.LookPath(chromium); err != nil {
		t.Fatalf("the dashboard's tests need Chromium (scripts/services.sh up installs it): %v", err)
	}
	options := append(slices.Clone(chromedp.DefaultExecAllocatorOptions[:]),
		chromedp.ExecPath(chromium),
		chromedp.NoSandbox, // as root, Chromium's sandbox refuses to start
		chromedp.DisableGPU,
		// Chromium otherwise keeps trying to reach Google's hosts, which the machines of
		// CI refuse, slowly.
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-quic", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	)
	allocator, cancelAllocator := chromedp.NewExecAllocator(context.Background(), options...)
	browser, cancelBrowser := chromedp.NewContext(allocator)
	t.Cleanup(func() {
		cancelBrowser()
		cancelAllocator()
	})
	// The first action starts the browser; each tab is then a child context of this one.
	if err := chromedp.Do(browser, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("start %s: %v", chromium, err)
	}
	return browser
}

// tab is one browser tab of a test, on one server.
type tab struct {
	t    *testing.T
	ctx  context.Context
	base string // the server's URL

	mu       sync.Mutex
	problems []string // script errors and policy violations that the page reported
	allowed  []string // texts of expected console errors
}

// openTab opens a tab in a browser context of its own (its own storage), which fails the
// test if the page reports a script error or a Content-Security-Policy violation.
func openTab(t *testing.T, browser context.Context, base string) *tab {
	t.Helper()
	// No timeout on the tab's own context: it would close the tab. Each action has one.
	ctx, cancel := chromedp.NewContext(browser, chromedp.WithNewBrowserContext())
	b := &tab{t: t, ctx: ctx, base: base}
	messages := chromedp.Console(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for m, err := range messages {
			if err != nil {
				return
			}
			b.note(m)
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		b.mu.Lock()
		defer b.mu.Unlock()
		for _, problem := range b.problems {
			t.Errorf("the page reported: %s", problem)
		}
	})
	return b
}

// note keeps m if it is an error of the page's scripts or of the security policy. The
// browser's reports of error answers (source "network") are the API's answers, which the
// tests check themselves.
func (b *tab) note(m chromedp.ConsoleMessage) {
	if m.Source == "network" || (m.Type != chromedp.ConsoleError && !m.IsException()) {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, allowed := range b.allowed {
		if strings.Contains(m.Text, allowed) {
			return
		}
	}
	b.problems = append(b.problems, m.String())
}

// allow lets console errors that contain text pass, for a test that provokes them.
func (b *tab) allow(text string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.allowed = append(b.allowed, text)
}

// open loads a page of the server, by its path.
func (b *tab) open(path string) {
	b.t.Helper()
	b.do(chromedp.Navigate(b.base + path))
}

func (b *tab) do(actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if _, err := run(b, chromedp.Steps(actions...)); err != nil {
		b.fail(err)
	}
}

// actionTimeout bounds each action, so that a browser that stops answering fails the test
// instead of holding it.
const actionTimeout = 30 * time.Second

// run runs one action in the tab, within actionTimeout.
func run[T any](b *tab, action chromedp.Action[T]) (T, error) {
	ctx, cancel := context.WithTimeout(b.ctx, actionTimeout)
	defer cancel()
	return chromedp.Run(ctx, action)
}

// fail ends the test with err, a screenshot of the page and its address.
func (b *tab) fail(err error) {
	b.t.Helper()
	shot := b.screenshot("failed-" + strings.NewReplacer("/", "-", " ", "-").Replace(b.t.Name()))
	location, _ := run(b, chromedp.Location())
	b.t.Fatalf("%v\n(at %s; screenshot %s)", err, location, shot)
}

// waitFor waits until the JavaScript expression is truthy, failing the test after a
// timeout long enough for two refreshes of the page's numbers.
func (b *tab) waitFor(expression string) {
	b.t.Helper()
	// An expression that throws (an element the page has not drawn yet) is not true yet: the
	// page is redrawn between polls, and a wait must not fail on the moment between two.
	guarded := "(() => { try { return !!(" + expression + "); } catch { return false; } })()"
	if _, err := run(b, chromedp.Poll[chromedp.Void](guarded,
		chromedp.WithPollingInterval(100*time.Millisecond), chromedp.WithPollingTimeout(15*time.Second))); err != nil {
		b.fail(fmt.Errorf("waiting for %s: %w", expression, err))
	}
}

// evaluate returns the value of a JavaScript expression in the page.
func evaluate[T any](b *tab, expression string) T {
	b.t.Helper()
	v, err := run(b, chromedp.Evaluate[T](expression))
	if err != nil {
		b.fail(fmt.Errorf("evaluate %s: %w", expression, err))
	}
	return v
}

// click clicks the element that a CSS selector finds, as a person would, with the mouse.
func (b *tab) click(selector string) {
	b.t.Helper()
	b.do(chromedp.Click(chromedp.CSS(selector)))
}

// press clicks the button whose text is label.
func (b *tab) press(label string) {
	b.t.Helper()
	b.do(chromedp.Click(chromedp.Search(fmt.Sprintf(`//button[normalize-space()=%s]`, xpathString(label)))))
}

// fill replaces the value of an input with text, typing it.
func (b *tab) fill(selector, text string) {
	b.t.Helper()
	b.do(chromedp.Evaluate[chromedp.Void](`document.querySelector(`+js(selector)+`).value = ''`),
		chromedp.SendKeys(chromedp.CSS(selector), text))
}

// confirm waits for the confirmation dialog, checks that its question contains want, and
// presses its confirming button.
func (b *tab) confirm(want string) {
	b.t.Helper()
	b.waitFor(`document.getElementById('confirm-dialog').open`)
	if question := evaluate[string](b, `document.getElementById('confirm-message').textContent`); !strings.Contains(question, want) {
		b.fail(fmt.Errorf("the confirmation asks %q, which does not mention %q", question, want))
	}
	b.click("#confirm-yes")
}

// screenshot saves the whole page as name.png under screenshotDir and returns its path.
func (b *tab) screenshot(name string) string {
	b.t.Helper()
	return b.screenshotTo(screenshotDir, name)
}

func (b *tab) screenshotTo(dir, name string) string {
	b.t.Helper()
	png, err := run(b, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Logf("screenshot %s: %v", name, err)
		return ""
	}
	file := filepath.Join(dir, name+".png")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.t.Fatal(err)
	}
	if err := os.WriteFile(file, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
	return file
}

// js returns v as a JavaScript literal, to put into an expression.
func js(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// xpathString returns s as an XPath string literal.
func xpathString(s string) string {
	if !strings.Contains(s, `"`) {
		return `"` + s + `"`
	}
	return "concat('" + strings.ReplaceAll(s, "'", `', "'", '`) + "')"
}
