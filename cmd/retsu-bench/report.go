package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
)

// result is what one run measured; `retsu-bench run -out` writes it as JSON.
type result struct {
	Name                 string                      `json:"name"`
	Producers            int                         `json:"producers"`
	Consumers            int                         `json:"consumers"`
	Batch                int                         `json:"batch"`
	WaitSeconds          float64                     `json:"wait_seconds"`
	Keyed                bool                        `json:"keyed"`
	Seconds              float64                     `json:"seconds"`
	Lifecycles           int64                       `json:"lifecycles"`
	LifecyclesPerSecond  float64                     `json:"lifecycles_per_second"`
	Operations           [operations]operationResult `json:"operations"`
	Errors               int64                       `json:"errors"`
	EmptyDequeues        int64                       `json:"empty_dequeues"`
	UnknownDeliveries    int64                       `json:"unknown_deliveries"`
	DuplicateDeliveries  int64                       `json:"duplicate_deliveries"`
	LateAcknowledgements int64                       `json:"late_acknowledgements"`
	ErrorSamples         []string                    `json:"error_samples,omitempty"`
	// Intervals holds the lifecycles/s of each progress interval of the measurement.
	Intervals          []float64 `json:"interval_lifecycles_per_second"`
	ServerPeakRSSBytes int64     `json:"server_peak_rss_bytes,omitempty"`
}

// operationResult is what a run measured of one operation; latencies in milliseconds.
type operationResult struct {
	Name     string  `json:"name"`
	Requests int64   `json:"requests"`
	Errors   int64   `json:"errors"`
	P50      float64 `json:"p50_ms"`
	P90      float64 `json:"p90_ms"`
	P99      float64 `json:"p99_ms"`
}

// printResult writes a summary of r for people.
func printResult(w io.Writer, r result) {
	fmt.Fprintf(w, "%s: %s lifecycles/s over %.1f s (%d lifecycles), %d producers, %d consumers\n",
		r.Name, thousands(r.LifecyclesPerSecond), r.Seconds, r.Lifecycles, r.Producers, r.Consumers)
	for _, o := range r.Operations {
		fmt.Fprintf(w, "  %-12s p50 %6.2f ms  p90 %6.2f ms  p99 %6.2f ms  (%d requests, %d errors)\n",
			o.Name, o.P50, o.P90, o.P99, o.Requests, o.Errors)
	}
	fmt.Fprintf(w, "  empty dequeues %d, late acknowledgements %d, deliveries of unknown messages %d, duplicate deliveries %d\n",
		r.EmptyDequeues, r.LateAcknowledgements, r.UnknownDeliveries, r.DuplicateDeliveries)
	if r.ServerPeakRSSBytes > 0 {
		fmt.Fprintf(w, "  server peak RSS %.0f MB\n", megabytes(r.ServerPeakRSSBytes))
	}
	fmt.Fprintf(w, "  errors %d\n", r.Errors)
	for _, e := range r.ErrorSamples {
		fmt.Fprintf(w, "    %s\n", e)
	}
}

func megabytes(bytes int64) float64 { return float64(bytes) / (1 << 20) }

// peakRSS returns the peak resident memory of process pid (VmHWM), or 0 when it cannot be
// read, as on systems without /proc.
func peakRSS(pid int) int64 {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		value, found := strings.CutPrefix(scanner.Text(), "VmHWM:")
		if !found {
			continue
		}
		kilobytes, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(value), "kB")), 10, 64)
		if err != nil {
			return 0
		}
		return kilobytes << 10
	}
	return 0
}

// thousands formats a rate as a whole number with thousands separators.
func thousands(v float64) string {
	digits := strconv.FormatInt(int64(v+0.5), 10)
	var b strings.Builder
	for i, d := range digits {
		if i > 0 && (len(digits)-i)%3 == 0 && digits[i-1] != '-' {
			b.WriteByte(',')
		}
		b.WriteRune(d)
	}
	return b.String()
}

// reportConfig is the configuration of `retsu-bench report`.
type reportConfig struct {
	// ceilings are the lifecycles/s that ceiling.sh measured, by mode; 0 when not given.
	single8, single32, batch100 float64
	// baseline names the run the others are compared with.
	baseline string
	results  []string
}

func parseReportConfig(args []string, stderr io.Writer) (reportConfig, error) {
	var c reportConfig
	fs := flag.NewFlagSet("retsu-bench report", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Float64Var(&c.single8, "ceiling-8", 0, "ceiling.sh: lifecycles/s, single-statement steps, 8 clients")
	fs.Float64Var(&c.single32, "ceiling-32", 0, "ceiling.sh: lifecycles/s, single-statement steps, 32 clients")
	fs.Float64Var(&c.batch100, "ceiling-batch", 0, "ceiling.sh: lifecycles/s, 100-message statements")
	fs.StringVar(&c.baseline, "baseline", "memory", "name of the run that the last column compares with")
	if err := parseFlags(fs, args, true); err != nil {
		return reportConfig{}, err
	}
	c.results = fs.Args()
	if len(c.results) == 0 {
		fmt.Fprintln(stderr, "usage: retsu-bench report [flags] RESULT.json…")
		return reportConfig{}, errUsage
	}
	return c, nil
}

// report prints the runs of cfg as one table: the ceiling's figures, then each run with its
// latencies, errors and memory, and last its ratios to the better single-statement ceiling
// and to the baseline run.
func report(cfg reportConfig, w io.Writer) error {
	results, err := readResults(cfg.results)
	if err != nil {
		return err
	}
	var baseline *result
	for i := range results {
		if results[i].Name == cfg.baseline {
			baseline = &results[i]
		}
	}
	ceiling := max(cfg.single8, cfg.single32)
	t := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(t, "run\tlifecycles/s\tenqueue p50/p90/p99 ms\tdequeue p50/p90/p99 ms\tacknowledge p50/p90/p99 ms\terrors\tserver RSS MB\t× ceiling\t× "+cfg.baseline+"\t")
	for _, row := range []struct {
		name string
		rate float64
	}{{"ceiling 1/stmt, 8 clients", cfg.single8}, {"ceiling 1/stmt, 32 clients", cfg.single32}, {"ceiling 100/stmt, 8 clients", cfg.batch100}} {
		if row.rate > 0 {
			fmt.Fprintf(t, "%s\t%s\t-\t-\t-\t-\t-\t%s\t-\t\n", row.name, thousands(row.rate), ratio(row.rate, ceiling))
		}
	}
	for _, r := range results {
		rowCeiling := ceiling
		if r.Batch > 1 {
			rowCeiling = cfg.batch100
		}
		fmt.Fprintf(t, "%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t\n", r.Name, thousands(r.LifecyclesPerSecond),
			percentiles(r.Operations[opEnqueue]), percentiles(r.Operations[opDequeue]), percentiles(r.Operations[opAcknowledge]),
			r.Errors, rssColumn(r), ratio(r.LifecyclesPerSecond, rowCeiling), baselineRatio(r, baseline))
	}
	if err := t.Flush(); err != nil {
		return err
	}
	if ceiling > 0 {
		fmt.Fprintf(w, "× ceiling: lifecycles/s over the better single-statement ceiling (%s lifecycles/s), "+
			"or, for runs of batches, over the 100-message ceiling (%s lifecycles/s)\n", thousands(ceiling), thousands(cfg.batch100))
	}
	return nil
}

func readResults(paths []string) ([]result, error) {
	results := make([]result, len(paths))
	for i, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(data, &results[i]); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	return results, nil
}

func percentiles(o operationResult) string {
	return fmt.Sprintf("%.2f / %.2f / %.2f", o.P50, o.P90, o.P99)
}

func rssColumn(r result) string {
	if r.ServerPeakRSSBytes == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f", megabytes(r.ServerPeakRSSBytes))
}

func ratio(value, reference float64) string {
	if reference <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", value/reference)
}

func baselineRatio(r result, baseline *result) string {
	if baseline == nil {
		return "-"
	}
	return ratio(r.LifecyclesPerSecond, baseline.LifecyclesPerSecond)
}
