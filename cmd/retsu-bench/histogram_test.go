package main

import (
	"testing"
	"time"

	"github.com/matryer/is"
)

func TestHistogram_Quantile_IsWithinABucketOfTheTruth(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	var h histogram
	for i := 1; i <= 1000; i++ {
		h.record(time.Duration(i) * 10 * time.Microsecond) // 10 µs to 10 ms, evenly
	}
	is.Equal(h.count(), int64(1000))
	for _, tc := range []struct {
		q    float64
		want time.Duration
	}{{0.50, 5 * time.Millisecond}, {0.90, 9 * time.Millisecond}, {0.99, 9900 * time.Microsecond}} {
		got := h.quantile(tc.q)
		is.True(got >= tc.want)                    // a quantile is never reported low
		is.True(got <= tc.want+tc.want/subBuckets) // and at most one bucket (about 3%) high
	}
}

func TestHistogram_SmallLatenciesAreExact(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	var h histogram
	h.record(17 * time.Microsecond)
	is.Equal(h.quantile(0.5), 18*time.Microsecond) // below 64 µs a bucket is one microsecond wide
}

func TestHistogram_Empty_ReportsZero(t *testing.T) {
	t.Parallel()
	var h histogram
	is.New(t).Equal(h.quantile(0.99), time.Duration(0)) // no latency, no quantile
}

func TestBucketOf_UpperBound_Agree(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	for us := int64(0); us < 1<<22; us += 1 + us/7 {
		d := time.Duration(us) * time.Microsecond
		b := bucketOf(d)
		is.True(d < upperBound(b)) // every latency is below its bucket's bound
		if b > 0 {
			is.True(d >= upperBound(b-1)) // and not below the previous bucket's
		}
	}
}
