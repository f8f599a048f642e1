package bench

import (
	"context"
	"fmt"
	"runtime/metrics"
	"sync/atomic"
	"testing"
	"time"

	"github.com/streamsql/streamsql"
)

// BenchmarkDistinctKeysView appends events with 10M distinct keys into a table with a
// non-windowed aggregate view over it, with a memory limit far above what it needs (64 GiB:
// everything stays in memory) and with a 256 MiB limit (the view's groups and rows spill to
// disk). It reports,
// from the same run, events/s for each and the peak of the memory the Go runtime holds and
// has not returned to the system (runtime/metrics: total - heap/released), sampled every
// 20 ms while the database is open. The events are generated batch by batch, so the input
// adds one batch to the heap.
func BenchmarkDistinctKeysView(b *testing.B) {
	events := scaled(10_000_000)
	b.Run(fmt.Sprintf("keys=%s", human(events)), func(b *testing.B) {
		var rates [2]float64
		var peaks [2]float64
		for i, limit := range []int64{64 << 30, 256 << 20} {
			el, peak, spilled := runDistinctKeys(b, events, []streamsql.Option{streamsql.WithMemoryLimit(limit)})
			if spilled != (i == 1) {
				b.Fatalf("with a %d MiB limit the view spilled: %v", limit>>20, spilled)
			}
			rates[i], peaks[i] = rate(events*b.N, el), float64(peak)/(1<<20)
		}
		b.ReportMetric(rates[0], "events/s")
		b.ReportMetric(peaks[0], "peakMiB")
		b.ReportMetric(rates[1], "limited_events/s")
		b.ReportMetric(peaks[1], "limited_peakMiB")
		b.ReportMetric(rates[1]/rates[0], "x_of_unlimited")
	})
}

func runDistinctKeys(b *testing.B, events int, opts []streamsql.Option) (el time.Duration, peak uint64, spilled bool) {
	for i := 0; i < b.N; i++ {
		db := openDB(b, opts...)
		mustExec(b, db, "CREATE TABLE ev (k BIGINT, v BIGINT)")
		mustExec(b, db, "CREATE MATERIALIZED VIEW per_key AS SELECT k, COUNT(*) AS n, SUM(v) AS s FROM ev GROUP BY k")
		var top atomic.Uint64
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			sample := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
			for {
				metrics.Read(sample)
				if v := sample[0].Value.Uint64() - sample[1].Value.Uint64(); v > top.Load() {
					top.Store(v)
				}
				select {
				case <-stop:
					return
				case <-time.After(20 * time.Millisecond):
				}
			}
		}()
		g := splitmix(11)
		t0 := time.Now()
		for off := 0; off < events; off += batchRows {
			n := min(batchRows, events-off)
			k, v := make([]int64, n), make([]int64, n)
			for j := range k {
				// A bijection of 0..2^40: every key distinct, in no particular order.
				k[j], v[j] = int64((uint64(off+j)*0x9E3779B97F4A7C15)>>24), g.intn(1000)
			}
			rec := record([]string{"k", "v"}, int64Array(k), int64Array(v))
			if err := db.Append(context.Background(), "ev", rec); err != nil {
				b.Fatal(err)
			}
			rec.Release()
		}
		mustExec(b, db, "FLUSH")
		el += time.Since(t0)
		close(stop)
		<-done
		peak = max(peak, top.Load())
		got := queryInts(b, db, "SELECT COUNT(*), SUM(n) FROM per_key")
		if got[0] != int64(events) || got[1] != int64(events) {
			b.Fatalf("per_key: COUNT(*), SUM(n) = %v, want %d each", got, events)
		}
		spilled = queryInts(b, db, "SELECT COUNT(*) FROM system.views WHERE spilled")[0] == 1
		if err := db.Close(); err != nil {
			b.Fatal(err)
		}
	}
	return el, peak, spilled
}
