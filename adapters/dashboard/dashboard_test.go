package dashboard_test

import (
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/retsu/retsu/adapters/dashboard"
)

// handler is the dashboard of the tests.
var handler = dashboard.New()

// get returns the dashboard's answer to a request.
func get(t *testing.T, method, target string, header ...string) *http.Response {
	t.Helper()
	r := httptest.NewRequest(method, target, nil)
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	handler.ServeHTTP(w, r)
	return w.Result()
}

func body(t *testing.T, res *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// assetsAddress finds the address of the assets in index.html.
var assetsAddress = regexp.MustCompile(`/ui/assets/[0-9a-f]{16}/`)

func TestHandler_EveryPageAddressAnswersIndex(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	index := body(t, get(t, http.MethodGet, "/ui/"))
	is.True(assetsAddress.MatchString(index)) // index.html names this release's assets
	for _, page := range []string{
		"/ui/queues/019c9a65-7d3a-7c6b-8a9d-123456789abc",
		"/ui/queues/019c9a65-7d3a-7c6b-8a9d-123456789abc/dead-letters?after=x",
		"/ui/queues/x/dead-letters/y",
		"/ui/no/such/page",
	} {
		res := get(t, http.MethodGet, page)
		is.Equal(res.StatusCode, http.StatusOK)                              // every page address answers
		is.Equal(res.Header.Get("Content-Type"), "text/html; charset=utf-8") // as HTML
		is.Equal(body(t, res), index)                                        // the same index.html, whose script shows the page
	}
}

func TestHandler_RedirectsToTheSlash(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	res := get(t, http.MethodGet, "/ui")
	is.Equal(res.StatusCode, http.StatusMovedPermanently) // /ui is not a page
	is.Equal(res.Header.Get("Location"), "/ui/")          // /ui/ is
	res = get(t, http.MethodGet, "/ui?prefix=a")
	is.Equal(res.Header.Get("Location"), "/ui/?prefix=a") // keeping the query
}

func TestHandler_SecurityHeadersOnEveryAnswer(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	version := assetsAddress.FindString(body(t, get(t, http.MethodGet, "/ui/")))
	for _, target := range []string{"/ui/", "/ui/queues/x", version + "app.js", version + "nothing.js", "/ui/assets/0/app.js", "/ui"} {
		h := get(t, http.MethodGet, target).Header
		csp := h.Get("Content-Security-Policy")
		is.True(strings.Contains(csp, "default-src 'self'"))         // only this origin, for target
		is.True(strings.Contains(csp, "script-src 'self'"))          // no inline scripts
		is.True(strings.Contains(csp, "style-src 'self'"))           // no inline styles
		is.True(strings.Contains(csp, "frame-ancestors 'none'"))     // no framing
		is.True(!strings.Contains(csp, "unsafe"))                    // no unsafe-inline or unsafe-eval
		is.Equal(h.Get("X-Content-Type-Options"), "nosniff")         // no sniffing
		is.Equal(h.Get("Referrer-Policy"), "no-referrer")            // addresses stay here
		is.Equal(h.Get("X-Frame-Options"), "DENY")                   // no framing in old browsers
		is.Equal(h.Get("Cross-Origin-Opener-Policy"), "same-origin") // no window handle across sites
	}
}

func TestHandler_AssetsAreCachedForGoodUnderTheirVersion(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	version := assetsAddress.FindString(body(t, get(t, http.MethodGet, "/ui/")))
	for name, contentType := range map[string]string{
		"app.js": "text/javascript; charset=utf-8", "pages/queue.js": "text/javascript; charset=utf-8",
		"app.css": "text/css; charset=utf-8", "icon.svg": "image/svg+xml",
	} {
		res := get(t, http.MethodGet, version+name)
		is.Equal(res.StatusCode, http.StatusOK)                                          // name is served
		is.Equal(res.Header.Get("Content-Type"), contentType)                            // with its type, which nosniff makes browsers check
		is.Equal(res.Header.Get("Cache-Control"), "public, max-age=31536000, immutable") // for good: its address changes with its content
	}
	for _, target := range []string{"/ui/assets/0123456789abcdef/app.js", version + "index.html", version + "nothing.js", "/ui/assets/app.js"} {
		res := get(t, http.MethodGet, target)
		is.Equal(res.StatusCode, http.StatusNotFound)         // no file of another release, nor index.html, nor an unknown one
		is.Equal(res.Header.Get("Cache-Control"), "no-store") // and the miss is not kept either
	}
}

func TestHandler_IndexIsRevalidated(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	res := get(t, http.MethodGet, "/ui/")
	is.Equal(res.Header.Get("Cache-Control"), "no-cache") // every load asks whether a new release came
	etag := res.Header.Get("ETag")
	is.True(etag != "")                                                                                        // which the ETag answers cheaply
	is.Equal(get(t, http.MethodGet, "/ui/queues/x", "If-None-Match", etag).StatusCode, http.StatusNotModified) // unchanged: 304
}

func TestHandler_RefusesOtherMethods(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	is.Equal(get(t, http.MethodHead, "/ui/").StatusCode, http.StatusOK) // HEAD is GET without the body
	res := get(t, http.MethodPost, "/ui/")
	is.Equal(res.StatusCode, http.StatusMethodNotAllowed) // the pages change nothing
	is.Equal(res.Header.Get("Allow"), "GET, HEAD")        // and say what they accept
	assertProblem(t, res, http.StatusMethodNotAllowed, "method_not_allowed")
}

func TestHandler_ErrorsAreProblems(t *testing.T) {
	t.Parallel()
	version := assetsAddress.FindString(body(t, get(t, http.MethodGet, "/ui/")))
	for _, tc := range []struct {
		method, target string
		status         int
		code           string
	}{
		{http.MethodGet, version + "nothing.js", http.StatusNotFound, "not_found"},
		{http.MethodGet, "/ui/assets/0123456789abcdef/app.js", http.StatusNotFound, "not_found"},
		{http.MethodDelete, "/ui/queues/x", http.StatusMethodNotAllowed, "method_not_allowed"},
		{http.MethodPost, "/ui", http.StatusMethodNotAllowed, "method_not_allowed"},
	} {
		t.Run(tc.method+" "+tc.target, func(t *testing.T) {
			t.Parallel()
			assertProblem(t, get(t, tc.method, tc.target), tc.status, tc.code)
		})
	}
}

// assertProblem checks that res is the API's problem+json (RFC 9457): exactly the five members,
// with status and code.
func assertProblem(t *testing.T, res *http.Response, status int, code string) {
	t.Helper()
	is := is.New(t)
	is.Equal(res.StatusCode, status)                                     // the status
	is.Equal(res.Header.Get("Content-Type"), "application/problem+json") // every error is problem+json, the dashboard's too
	var p map[string]any
	dec := json.NewDecoder(strings.NewReader(body(t, res)))
	dec.UseNumber()
	is.NoErr(dec.Decode(&p))                                 // one JSON object
	is.Equal(len(p), 5)                                      // of five members
	is.Equal(p["type"], "about:blank")                       // type is about:blank
	is.Equal(p["title"], http.StatusText(status))            // title is the status text
	is.Equal(p["status"], json.Number(strconv.Itoa(status))) // status is the number
	is.True(p["detail"] != "")                               // detail is a sentence
	is.Equal(p["code"], code)                                // code is the API's code for the status
}

// staticFiles returns the dashboard's source files by path under static/.
func staticFiles(t *testing.T) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := fs.WalkDir(os.DirFS("static"), ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path.Join("static", name))
		files[name] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func TestStatic_ShowsTextNeverMarkup(t *testing.T) {
	t.Parallel()
	sinks := regexp.MustCompile(`innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function|createContextualFragment`)
	for name, text := range staticFiles(t) {
		if sink := sinks.FindString(text); path.Ext(name) == ".js" && sink != "" {
			t.Errorf("%s uses %s: strings from the API must reach the page as text", name, sink)
		}
	}
}

func TestStatic_NothingInlineAndNothingFromElsewhere(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	files := staticFiles(t)
	index := files["index.html"]
	is.True(!regexp.MustCompile(`<script(?:\s+type="module")?>|<style|\sstyle=|\son[a-z]+=`).MatchString(index)) // no inline script, style or handler, which the policy would block
	elsewhere := regexp.MustCompile(`(?:https?:)?//[a-z0-9.-]+\.[a-z]{2,}`)
	for name, text := range files {
		for _, address := range elsewhere.FindAllString(text, -1) {
			if address != "http://www.w3.org" { // the SVG namespace is a name, not an address to fetch
				t.Errorf("%s names another host: %s", name, address)
			}
		}
	}
}

func TestStatic_EveryImportIsEmbedded(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	files := staticFiles(t)
	imports := regexp.MustCompile(`from '(\.[^']+)'`)
	for name, text := range files {
		for _, m := range imports.FindAllStringSubmatch(text, -1) {
			_, ok := files[path.Join(path.Dir(name), m[1])]
			is.True(ok) // every module that name imports is among the files
		}
	}
	version := assetsAddress.FindString(body(t, get(t, http.MethodGet, "/ui/")))
	for name := range files {
		if name != "index.html" {
			is.Equal(get(t, http.MethodGet, version+name).StatusCode, http.StatusOK) // and served
		}
	}
}
