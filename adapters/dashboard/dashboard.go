package dashboard

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"maps"
	"mime"
	"net/http"
	"path"
	"slices"
	"strings"
	"time"
)

// Prefix is the path under which the dashboard's pages are served.
const Prefix = "/ui/"

// assetsPath is where the files other than index.html live, each release under its version.
const assetsPath = Prefix + "assets/"

// assetsMarker is replaced in index.html by the address of this release's assets.
const assetsMarker = "%ASSETS%"

// ContentSecurityPolicy is sent with every answer. Scripts, styles, images and API calls come
// from this origin only, and no inline script or style runs: a payload that reached the page
// as HTML could not execute. Trusted Types turn any assignment of a string to innerHTML (or
// another HTML sink) into an error in browsers that enforce them, so that the rule "payloads
// are text" holds by construction. No site may frame the page (clickjacking), and forms and
// <base> cannot send the operator elsewhere.
const ContentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'; " +
	"require-trusted-types-for 'script'; trusted-types 'none'"

//go:embed static
var static embed.FS

// Handler serves the dashboard's files.
type Handler struct {
	version string // digest of every embedded file
	index   []byte // index.html with the address of the assets filled in
	assets  map[string]asset
}

// asset is one embedded file, by its path under static/.
type asset struct {
	contentType string
	body        []byte
}

// New returns the handler of the embedded files. The files are compiled in: New panics only
// on a build defect, which the package's tests catch.
func New() *Handler {
	files := map[string][]byte{}
	err := fs.WalkDir(static, "static", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := static.ReadFile(name)
		files[strings.TrimPrefix(name, "static/")] = body
		return err
	})
	if err != nil {
		panic("dashboard: reading the embedded files: " + err.Error())
	}
	index, ok := files["index.html"]
	if !ok {
		panic("dashboard: no index.html among the embedded files")
	}
	h := &Handler{version: digest(files), assets: map[string]asset{}}
	h.index = bytes.ReplaceAll(index, []byte(assetsMarker), []byte(assetsPath+h.version+"/"))
	for name, body := range files {
		if name != "index.html" {
			h.assets[name] = asset{contentType: contentType(name), body: body}
		}
	}
	return h
}

// digest returns a short hex digest of the files' names and contents.
func digest(files map[string][]byte) string {
	names := slices.Sorted(maps.Keys(files))
	sum := sha256.New()
	for _, name := range names {
		// Each name and content is preceded by its length, so that no two sets of files
		// hash alike by moving bytes from one to the next.
		for _, part := range [][]byte{[]byte(name), files[name]} {
			sum.Write(binary.LittleEndian.AppendUint64(nil, uint64(len(part))))
			sum.Write(part)
		}
	}
	return hex.EncodeToString(sum.Sum(nil))[:16]
}

// contentType returns the media type of a file by its extension. Module scripts must come
// with a JavaScript type, which nosniff makes browsers check.
func contentType(name string) string {
	switch path.Ext(name) {
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".svg":
		return "image/svg+xml"
	}
	if t := mime.TypeByExtension(path.Ext(name)); t != "" {
		return t
	}
	return "application/octet-stream"
}

// ServeHTTP answers GET and HEAD: /ui with a redirect to /ui/, an asset of this release with
// its file, an asset of another release with 404, and every other path under /ui/ with
// index.html, whose script shows the page of the address.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	header := w.Header()
	header.Set("Content-Security-Policy", ContentSecurityPolicy)
	header.Set("X-Content-Type-Options", "nosniff")
	header.Set("Referrer-Policy", "no-referrer")
	header.Set("X-Frame-Options", "DENY")
	header.Set("Cross-Origin-Opener-Policy", "same-origin")
	header.Set("Cross-Origin-Resource-Policy", "same-origin")

	switch {
	case r.Method != http.MethodGet && r.Method != http.MethodHead:
		header.Set("Allow", "GET, HEAD")
		writeProblem(w, http.StatusMethodNotAllowed, "method_not_allowed", "the dashboard's pages accept only GET and HEAD")
	case !strings.HasPrefix(r.URL.Path, Prefix):
		target := Prefix
		if r.URL.RawQuery != "" {
			target += "?" + r.URL.RawQuery
		}
		http.Redirect(w, r, target, http.StatusMovedPermanently)
	case strings.HasPrefix(r.URL.Path, assetsPath):
		h.serveAsset(w, r, strings.TrimPrefix(r.URL.Path, assetsPath))
	default:
		// Revalidated on every load (cheaply, by its ETag), so that a new release's
		// index.html, and with it the new assets' address, is seen at once.
		header.Set("Cache-Control", "no-cache")
		header.Set("ETag", `"`+h.version+`"`)
		header.Set("Content-Type", "text/html; charset=utf-8")
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(h.index))
	}
}

// serveAsset answers versioned, the path of an asset under /ui/assets/.
func (h *Handler) serveAsset(w http.ResponseWriter, r *http.Request, versioned string) {
	version, name, _ := strings.Cut(versioned, "/")
	a, ok := h.assets[name]
	if version != h.version || !ok {
		// An asset of another release is not served from this one's files: a page that
		// mixed them could break in ways no test saw.
		w.Header().Set("Cache-Control", "no-store")
		writeProblem(w, http.StatusNotFound, "not_found", "no such file in this release of the dashboard")
		return
	}
	// The address changes with every release, so the file may be kept for good.
	w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	w.Header().Set("Content-Type", a.contentType)
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(a.body))
}

// problem is an error answer in the API's format (RFC 9457), with the API's code for its
// status. Package httpapi writes the API's own; it imports this package (for Prefix), so the
// five members are repeated here rather than shared, and the tests of both hold them to the
// same shape.
type problem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail"`
	Code   string `json:"code"`
}

// writeProblem answers status as problem+json with code and detail.
func writeProblem(w http.ResponseWriter, status int, code, detail string) {
	body, _ := json.Marshal(problem{Type: "about:blank", Title: http.StatusText(status), Status: status, Detail: detail, Code: code})
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
