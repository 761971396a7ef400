package main

import (
	"math/bits"
	"sync/atomic"
	"time"
)

// histogram counts latencies in microseconds, exactly below 64 µs and in buckets about 3%
// wide above, so that percentiles cost no memory per sample however long a run lasts. It is
// safe for concurrent use.
type histogram struct {
	counts [histogramBuckets]atomic.Int64
}

const (
	// subBuckets splits each power of two; 32 keeps a bucket within 1/32 of its value.
	subBuckets = 32
	// histogramBuckets covers up to 2^40 µs, about 12 days.
	histogramBuckets = 2*subBuckets + 34*subBuckets
)

// record counts one latency.
func (h *histogram) record(d time.Duration) {
	h.counts[bucketOf(d)].Add(1)
}

// bucketOf returns the bucket of d: its microseconds below 2*subBuckets, and above that its
// power of two and its top bits.
func bucketOf(d time.Duration) int {
	us := uint64(max(d, 0) / time.Microsecond)
	if us < 2*subBuckets {
		return int(us)
	}
	shift := bits.Len64(us) - 6 // us>>shift is in [32, 64)
	b := 2*subBuckets + (shift-1)*subBuckets + int(us>>shift) - subBuckets
	return min(b, histogramBuckets-1)
}

// upperBound returns the smallest latency above every latency of bucket b.
func upperBound(b int) time.Duration {
	if b < 2*subBuckets {
		return time.Duration(b+1) * time.Microsecond
	}
	shift := (b-2*subBuckets)/subBuckets + 1
	top := (b-2*subBuckets)%subBuckets + subBuckets
	return time.Duration((top+1)<<shift) * time.Microsecond
}

// count returns the number of latencies recorded.
func (h *histogram) count() int64 {
	var n int64
	for i := range h.counts {
		n += h.counts[i].Load()
	}
	return n
}

// quantile returns a latency that at least the share q of the recorded latencies does not
// exceed, rounded up to its bucket's bound (at most 3% high), or 0 when none was recorded.
func (h *histogram) quantile(q float64) time.Duration {
	total := h.count()
	if total == 0 {
		return 0
	}
	rank := int64(q*float64(total) + 0.5)
	rank = max(rank, 1)
	var seen int64
	for b := range h.counts {
		seen += h.counts[b].Load()
		if seen >= rank {
			return upperBound(b)
		}
	}
	return upperBound(histogramBuckets - 1)
}
