package bench

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
)

const (
	evTable = `CREATE TABLE ev (k BIGINT, v BIGINT, ts TIMESTAMP(3),
		WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)`
	// wmDelay is the watermark delay of ev, in milliseconds.
	wmDelay = 1000
	// winSize and hopSlide are the window size (TUMBLE and HOP) and the HOP slide, in ms.
	winSize  = 10_000
	hopSlide = 2_000
)

var heapProfile = flag.String("windowheapprofile", "", "write the heap held with each window view open to `prefix`<sub-benchmark>.heap")

// writeHeapProfile writes the live heap (the database is open) if -windowheapprofile is set.
func writeHeapProfile(b *testing.B) {
	if *heapProfile == "" {
		return
	}
	f, err := os.Create(*heapProfile + strings.NewReplacer("/", "_", "=", "").Replace(b.Name()) + ".heap")
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		b.Fatal(err)
	}
}

// windowCase is one window benchmark: the view's window function and its sizes.
type windowCase struct {
	tvf         string // the TABLE(...) argument of FROM
	size, slide int64
}

var (
	tumbleCase = windowCase{tvf: "TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '10' SECOND)", size: winSize, slide: winSize}
	hopCase    = windowCase{tvf: "HOP(TABLE ev, DESCRIPTOR(ts), INTERVAL '2' SECOND, INTERVAL '10' SECOND)", size: winSize, slide: hopSlide}
)

func (c windowCase) view() string {
	return "CREATE MATERIALIZED VIEW w AS SELECT window_start, window_end, k, COUNT(*) AS n, SUM(v) AS s " +
		"FROM TABLE(" + c.tvf + ") GROUP BY window_start, window_end, k"
}

// BenchmarkTumbleView feeds a 10 s TUMBLE view with events 1 ms apart (so windows close as
// the stream goes), and runs the same data through a hand-written streaming loop.
func BenchmarkTumbleView(b *testing.B) { benchWindow(b, tumbleCase) }

// BenchmarkHopView is BenchmarkTumbleView for a HOP view (slide 2 s, size 10 s): five
// windows per event.
func BenchmarkHopView(b *testing.B) { benchWindow(b, hopCase) }

// benchWindow runs each size: 1k keys at 2M and 4M events (the heap must grow with the
// live windows, not with the events seen), and 1M keys at 1M events.
//
// Each sub-benchmark reports, all from the same run:
//   - events/s: Append of the events into ev with the view maintained (on disk, default
//     durability), i.e. what a user sees; events_1core/s the same with GOMAXPROCS 1, where
//     the writer and the view worker take turns on one core (the hand-written loop and
//     DuckDB's threads=1 query use one core too);
//   - table_events/s: the same Append into ev with no view, to split storage from view cost;
//   - loop_events/s, x_of_loop and x_of_loop_1core: the hand-written loop, and engine
//     rate / loop rate on all cores and on one;
//   - heapMB: live heap held by the database after the run (after GC, minus the heap before
//     it opened), tableMB the same with no view, viewMB the difference;
//   - ckpt_ms: a CHECKPOINT after the run, which writes the view's state and rows (the
//     periodic checkpoint, every second, mostly misses the timed run).
func benchWindow(b *testing.B, c windowCase) {
	for _, sz := range []struct{ keys, events int }{
		{1000, 2_000_000},
		{1000, 4_000_000},
		{1_000_000, 1_000_000},
	} {
		keys, events := sz.keys, scaled(sz.events)
		b.Run(fmt.Sprintf("keys=%s/events=%s", human(keys), human(events)), func(b *testing.B) {
			d := newEventData(keys, events)
			recs := d.records()
			defer func() {
				for _, r := range recs {
					r.Release()
				}
			}()
			h0 := liveHeap()

			// Each of the three runs below is made once untimed first (i == -1), as DuckDB's
			// query is (timeQuery): the first run of a process pays to grow its heap.

			// The table alone: storage cost and heap.
			var tableEl time.Duration
			var tableHeap uint64
			for i := -1; i < b.N; i++ {
				db := openDB(b)
				mustExec(b, db, evTable)
				t0 := time.Now()
				appendAll(b, db, "ev", recs)
				if i >= 0 {
					tableEl += time.Since(t0)
				}
				tableHeap = liveHeap() - h0
				if err := db.Close(); err != nil {
					b.Fatal(err)
				}
			}

			// The engine: the same Append with the view maintained, on every core the process
			// has (the writer and the view worker overlap) and on one.
			var engEl, oneEl, ckptEl time.Duration
			var engHeap uint64
			var got []int64
			for i := -1; i < b.N; i++ {
				for _, procs := range []int{0, 1} {
					prev := runtime.GOMAXPROCS(procs)
					db := openDB(b)
					mustExec(b, db, evTable)
					mustExec(b, db, c.view())
					// The run before it (the other core count's) left its database's memory
					// as garbage: collected now, not in this run's time.
					runtime.GC()
					t0 := time.Now()
					appendAll(b, db, "ev", recs)
					mustExec(b, db, "FLUSH") // views are maintained asynchronously: time them caught up
					switch {
					case i < 0:
					case procs == 1:
						oneEl += time.Since(t0)
					default:
						engEl += time.Since(t0)
						engHeap = liveHeap() - h0
						writeHeapProfile(b)
						t1 := time.Now()
						mustExec(b, db, "CHECKPOINT")
						ckptEl += time.Since(t1)
					}
					runtime.GOMAXPROCS(prev)
					res := queryInts(b, db, "SELECT COUNT(*), SUM(n), SUM(s) FROM w")
					if got != nil && fmt.Sprint(res) != fmt.Sprint(got) {
						b.Fatalf("view w: %v on one core, %v on all", res, got)
					}
					got = res
					if err := db.Close(); err != nil {
						b.Fatal(err)
					}
				}
			}

			// The hand-written loop.
			var loopEl time.Duration
			var l *windowLoop
			for i := -1; i < b.N; i++ {
				t0 := time.Now()
				l = runWindowLoop(d, c)
				if i >= 0 {
					loopEl += time.Since(t0)
				}
			}
			if want := l.totals(); fmt.Sprint(got) != fmt.Sprint(want) {
				b.Fatalf("view w: COUNT(*), SUM(n), SUM(s) = %v, the loop's = %v", got, want)
			}

			n := events * b.N
			b.ReportMetric(rate(n, engEl), "events/s")
			b.ReportMetric(rate(n, oneEl), "events_1core/s")
			b.ReportMetric(rate(n, tableEl), "table_events/s")
			b.ReportMetric(rate(n, loopEl), "loop_events/s")
			b.ReportMetric(loopEl.Seconds()/engEl.Seconds(), "x_of_loop")
			b.ReportMetric(loopEl.Seconds()/oneEl.Seconds(), "x_of_loop_1core")
			b.ReportMetric(float64(engHeap)/1e6, "heapMB")
			b.ReportMetric(float64(tableHeap)/1e6, "tableMB")
			b.ReportMetric((float64(engHeap)-float64(tableHeap))/1e6, "viewMB")
			b.ReportMetric(float64(l.peakGroups), "peak_live_groups")
			b.ReportMetric(float64(ckptEl.Milliseconds())/float64(b.N), "ckpt_ms")
		})
	}
}

// eventData is a stream of (k, v, ts) events, ts 1 ms apart from baseMillis, in 64k batches.
type eventData struct {
	ks, vs, ts [][]int64
}

func newEventData(keys, events int) *eventData {
	d := &eventData{}
	g := splitmix(5)
	for off := 0; off < events; off += batchRows {
		n := min(batchRows, events-off)
		k, v, ts := make([]int64, n), make([]int64, n), make([]int64, n)
		for i := range k {
			k[i], v[i], ts[i] = g.intn(keys), g.intn(1000), baseMillis+int64(off+i)
		}
		d.ks, d.vs, d.ts = append(d.ks, k), append(d.vs, v), append(d.ts, ts)
	}
	return d
}

func (d *eventData) records() []arrow.RecordBatch {
	recs := make([]arrow.RecordBatch, len(d.ks))
	for i := range recs {
		recs[i] = record(ingestNames, int64Array(d.ks[i]), int64Array(d.vs[i]), tsArray(d.ts[i]))
	}
	return recs
}

// windowKey and winAgg are the hand-written loop's group key and state.
type windowKey struct{ start, k int64 }

type winAgg struct{ n, s int64 }

// winRow is an emitted (closed) window row.
type winRow struct{ start, end, k, n, s int64 }

// windowLoop is the hand-written streaming window aggregate: assign each event to its
// windows, aggregate into a map, and after each batch advance the watermark (max ts - 1 s)
// and emit and free every window that closed (window_end - 1 <= watermark).
type windowLoop struct {
	size, slide int64
	groups      map[windowKey]*winAgg
	keysOf      map[int64][]int64 // window start -> the keys it holds
	open        []int64           // starts of open windows, ascending
	wm          int64
	out         []winRow // rows emitted for the current batch, handed to a consumer
	peakGroups  int
	// emitted totals, for the check against the view.
	rows, sumN, sumS int64
}

func runWindowLoop(d *eventData, c windowCase) *windowLoop {
	l := &windowLoop{size: c.size, slide: c.slide, groups: map[windowKey]*winAgg{},
		keysOf: map[int64][]int64{}, wm: -1 << 63}
	for i := range d.ks {
		l.batch(d.ks[i], d.vs[i], d.ts[i])
	}
	return l
}

func (l *windowLoop) batch(ks, vs, ts []int64) {
	maxTs := l.wm + wmDelay
	for i, t := range ts {
		k, v := ks[i], vs[i]
		for start := floorDiv(t, l.slide) * l.slide; start > t-l.size; start -= l.slide {
			if start+l.size-1 <= l.wm {
				continue // window already closed: late for it
			}
			key := windowKey{start, k}
			g := l.groups[key]
			if g == nil {
				g = &winAgg{}
				l.groups[key] = g
				ws, ok := l.keysOf[start]
				if !ok {
					l.openWindow(start)
				}
				l.keysOf[start] = append(ws, k)
			}
			g.n++
			g.s += v
		}
		if t > maxTs {
			maxTs = t
			l.wm = t - wmDelay // the watermark in force for the next row
		}
	}
	l.peakGroups = max(l.peakGroups, len(l.groups))
	l.out = l.out[:0]
	for len(l.open) > 0 && l.open[0]+l.size-1 <= l.wm {
		start := l.open[0]
		l.open = l.open[1:]
		for _, k := range l.keysOf[start] {
			key := windowKey{start, k}
			g := l.groups[key]
			l.out = append(l.out, winRow{start, start + l.size, k, g.n, g.s})
			l.rows, l.sumN, l.sumS = l.rows+1, l.sumN+g.n, l.sumS+g.s
			delete(l.groups, key)
		}
		delete(l.keysOf, start)
	}
}

func (l *windowLoop) openWindow(start int64) {
	i := len(l.open)
	l.open = append(l.open, start)
	for i > 0 && l.open[i-1] > start {
		l.open[i] = l.open[i-1]
		i--
	}
	l.open[i] = start
}

// totals returns COUNT(*), SUM(n), SUM(s) over every window, closed or open — what the
// view holds.
func (l *windowLoop) totals() []int64 {
	rows, n, s := l.rows, l.sumN, l.sumS
	for _, g := range l.groups {
		rows, n, s = rows+1, n+g.n, s+g.s
	}
	return []int64{rows, n, s}
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}
