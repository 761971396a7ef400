// Package prometheustest reads metrics in the Prometheus text format, for tests that change
// Retsu's state and read the numbers it reports back.
package prometheustest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Families are the metric families of one scrape, by name.
type Families map[string]*dto.MetricFamily

// Scrape asks h for GET /metrics and parses the answer, failing the test unless it is a 200
// in the Prometheus text format.
func Scrape(t testing.TB, h http.Handler) Families {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /metrics: %d %s", rec.Code, rec.Body)
	}
	if contentType := rec.Header().Get("Content-Type"); !strings.HasPrefix(contentType, "text/plain; version=0.0.4") {
		t.Fatalf("GET /metrics: content type %q is not the Prometheus text format", contentType)
	}
	return Parse(t, rec.Body)
}

// Parse parses metrics in the Prometheus text format, failing the test when they do not
// parse.
func Parse(t testing.TB, r io.Reader) Families {
	t.Helper()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(r)
	if err != nil {
		t.Fatalf("parse metrics: %v", err)
	}
	return families
}

// Has reports whether the scrape holds the family name.
func (f Families) Has(name string) bool {
	_, ok := f[name]
	return ok
}

// Value returns the value of the first sample of the family name whose labels include
// labels, given as name, value pairs: a counter's or a gauge's value, a histogram's count.
// It returns 0 when there is no such sample, as for a labelled counter never incremented.
func (f Families) Value(name string, labels ...string) float64 {
	family, ok := f[name]
	if !ok {
		return 0
	}
	for _, m := range family.GetMetric() {
		if !hasLabels(m, labels) {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.GetCounter().GetValue()
		case m.Gauge != nil:
			return m.GetGauge().GetValue()
		case m.Histogram != nil:
			return float64(m.GetHistogram().GetSampleCount())
		case m.Untyped != nil:
			return m.GetUntyped().GetValue()
		}
	}
	return 0
}

// Sum returns the sum of the observations of the first histogram of the family name whose
// labels include labels, or 0.
func (f Families) Sum(name string, labels ...string) float64 {
	for _, m := range f[name].GetMetric() {
		if hasLabels(m, labels) && m.Histogram != nil {
			return m.GetHistogram().GetSampleSum()
		}
	}
	return 0
}

// hasLabels reports whether m has every label of pairs (name, value, name, value, …).
func hasLabels(m *dto.Metric, pairs []string) bool {
	for i := 0; i+1 < len(pairs); i += 2 {
		found := false
		for _, l := range m.GetLabel() {
			if l.GetName() == pairs[i] && l.GetValue() == pairs[i+1] {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}
