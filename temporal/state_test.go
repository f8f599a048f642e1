package temporal

// State-size test of the temporal join operator (SPEC.md §3: "join state that the watermark
// makes unreachable is freed"). The state is the versions kept per key and the probes waiting
// for the watermark; both must be bounded by keys x versions inside the watermark window and by
// the probes inside the disorder window, not grow with the events seen.
//
// Workload: orders(id, cur, amount, ts) at 1 per ms of event time over 1k currencies, and
// rates(cur, rate, ts) with a new version of every currency each event-time second (ts on the
// second), fed as one batch per second: the rates of second T+1 first (the versioned side
// leads by one second, rates W = max ts), then the orders of second T, each row up to 500 ms
// early (bounded disorder; 1% of rows 300 ms more, mostly late), with the orders watermark max ts - 500 ms carried per row (b.WM,
// as a maintained view's source sets it) and as a watermark message after each batch.
//
// Bounds, derived from the workload: the join's watermark w is the orders watermark (rates
// lead), about T*1000 - 501 before the orders of second T and T*1000 + 499 after. Per key the
// operator keeps the newest version <= w and those > w: at most the versions of seconds
// T-1, T and T+1, so <= 3 per key. Pending probes are those with ts > w: at most the orders of
// one second (1000) plus the disorder's 500 ms, so <= 1500.

import (
	"fmt"
	"math/rand"
	"runtime"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/types"
	"github.com/streamsql/streamsql/window"
)

// stateSink counts the joined rows and checks each against the expected version: rates are
// on the second, so a probe at t joins the version at floor(t/1000)*1000.
type stateSink struct {
	rows, bad int64
	firstBad  string
	wm        int64
}

func (s *stateSink) Push(_ int, m exec.Msg) error {
	switch m.Kind {
	case exec.MsgWatermark:
		s.wm = m.Watermark
	case exec.MsgBatch:
		b := m.Batch
		pt, vt := exec.Int64s(b.Cols[3]), exec.Int64s(b.Cols[6])
		pc, vc := b.Cols[1], b.Cols[4]
		for i := 0; i < b.N; i++ {
			s.rows += b.Weight(i)
			want := pt[i] - ((pt[i]%1000)+1000)%1000
			if b.Cols[6].IsNull(i) || vt[i] != want || exec.Value(pc, i) != exec.Value(vc, i) {
				s.bad++
				if s.firstBad == "" {
					s.firstBad = fmt.Sprint(b.Row(i))
				}
			}
		}
	}
	return nil
}

func TestTemporalJoinStateBounded(t *testing.T) {
	const (
		keys       = 1000
		perSecond  = 1000 // orders per event-time second (1 per ms)
		wmDelay    = 500  // orders WATERMARK ts - 500 ms
		disorder   = 500  // orders up to 500 ms early
		lateBy     = 300  // and 1% of them 300 ms more
		maxPerKey  = 3    // see the bounds above
		maxPending = perSecond + perSecond*disorder/1000
		base       = int64(1_704_067_200_000)
	)
	total := 1_000_000
	if testing.Short() {
		total = 100_000
	}
	checkpoints := map[int]bool{total / 4: true, total / 2: true, total: true}
	seconds := total / perSecond

	sink := &stateSink{wm: exec.NoWatermark}
	var late int64
	j := &Join{
		LeftKeys: []int{1}, RightKeys: []int{0}, LeftTime: 3, RightTime: 2,
		LeftT:  []types.T{types.TBigInt, types.TVarchar, types.TBigInt, types.TTimestamp},
		RightT: []types.T{types.TVarchar, types.TDouble, types.TTimestamp},
		Late:   func(window.LateRow) { late++ },
		Out:    exec.Output{Op: sink},
	}
	curNames := make([]string, keys)
	for k := range curNames {
		curNames[k] = fmt.Sprintf("C%03d", k)
	}
	strCol := func(vals []string) arrow.Array {
		bl := exec.NewBuilder(types.TVarchar, len(vals))
		for _, v := range vals {
			bl.Append(v)
		}
		return bl.Finish()
	}
	ratesBatch := func(sec int) *exec.Batch {
		ts := make([]int64, keys)
		rate := make([]float64, keys)
		for k := range ts {
			ts[k] = base + int64(sec)*1000
			rate[k] = float64(k) + float64(sec%7)/4
		}
		return &exec.Batch{N: keys, Cols: []arrow.Array{strCol(curNames), exec.NewFloat64(rate, nil), exec.NewInt64(ts, nil)}}
	}
	r := rand.New(rand.NewSource(1))
	ordersW := exec.NoWatermark
	maxTs := exec.NoWatermark
	nextID := int64(0)
	ordersBatch := func(sec int) *exec.Batch {
		n := perSecond
		id, amount, ts, wm := make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
		cur := make([]string, n)
		for i := 0; i < n; i++ {
			nextID++
			id[i], amount[i] = nextID, int64(1+r.Intn(100))
			cur[i] = curNames[r.Intn(keys)]
			ts[i] = base + int64(sec)*1000 + int64(i) - r.Int63n(disorder+1)
			if r.Intn(100) == 0 {
				ts[i] -= lateBy // beyond the watermark delay: usually late
			}
			wm[i] = ordersW
			if ts[i] > maxTs {
				maxTs = ts[i]
				ordersW = maxTs - wmDelay
			}
		}
		return &exec.Batch{N: n, WM: wm, Cols: []arrow.Array{exec.NewInt64(id, nil), strCol(cur), exec.NewInt64(amount, nil), exec.NewInt64(ts, nil)}}
	}

	heap := func() uint64 {
		runtime.GC()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	push := func(port int, m exec.Msg) {
		t.Helper()
		if err := j.Push(port, m); err != nil {
			t.Fatal(err)
		}
	}
	stateOf := func() (versions, maxKey, pending int) {
		for _, ks := range j.keys {
			versions += len(ks.vs)
			maxKey = max(maxKey, len(ks.vs))
		}
		return versions, maxKey, len(j.pending)
	}

	start := time.Now()
	h0 := heap()
	var heaps []int64
	peakKey, peakPending, peakVersions := 0, 0, 0
	sample := func() {
		v, mk, p := stateOf()
		peakVersions, peakKey, peakPending = max(peakVersions, v), max(peakKey, mk), max(peakPending, p)
	}
	// The rates of seconds -1 and 0 lead everything (orders of second 0 reach back 800 ms).
	push(1, exec.Msg{Kind: exec.MsgBatch, Batch: ratesBatch(-1)})
	push(1, exec.Msg{Kind: exec.MsgBatch, Batch: ratesBatch(0)})
	push(1, exec.Msg{Kind: exec.MsgWatermark, Watermark: base})
	for sec := 0; sec < seconds; sec++ {
		push(1, exec.Msg{Kind: exec.MsgBatch, Batch: ratesBatch(sec + 1)})
		push(1, exec.Msg{Kind: exec.MsgWatermark, Watermark: base + int64(sec+1)*1000})
		sample()
		push(0, exec.Msg{Kind: exec.MsgBatch, Batch: ordersBatch(sec)})
		sample()
		push(0, exec.Msg{Kind: exec.MsgWatermark, Watermark: ordersW})
		sample()
		if done := int(nextID); checkpoints[done] {
			v, mk, p := stateOf()
			h := max(int64(heap())-int64(h0), 0)
			heaps = append(heaps, h)
			t.Logf("after %7d orders (%d versions seen): kept versions %d (max %d per key), pending probes %d, emitted %d, late %d, heap %.1f MB",
				done, (sec+3)*keys, v, mk, p, sink.rows, late, float64(h)/1e6)
			if mk > maxPerKey || v > maxPerKey*keys {
				t.Errorf("after %d orders: %d versions kept, %d for one key; want <= %d per key (keys x versions in the watermark window)", done, v, mk, maxPerKey)
			}
			if p > maxPending {
				t.Errorf("after %d orders: %d pending probes, want <= %d (the orders inside the watermark delay and disorder)", done, p, maxPending)
			}
		}
	}
	t.Logf("peaks over every batch: versions %d, per key %d, pending %d; %d orders and %d versions in %v",
		peakVersions, peakKey, peakPending, total, (seconds+2)*keys, time.Since(start).Round(time.Millisecond))
	if peakKey > maxPerKey || peakVersions > maxPerKey*keys {
		t.Errorf("peak kept versions %d (%d for one key), want <= %d per key", peakVersions, peakKey, maxPerKey)
	}
	if peakPending > maxPending {
		t.Errorf("peak pending probes %d, want <= %d", peakPending, maxPending)
	}
	// The heap must not grow with the events seen: from a quarter of the run to the end it may
	// move by allocator noise, not by the ~100 bytes per event that keeping them would take.
	if len(heaps) == 3 {
		if grow := heaps[2] - heaps[0]; grow > 8<<20 {
			t.Errorf("live heap grew by %.1f MB from %d to %d orders (state should be bounded)", float64(grow)/1e6, total/4, total)
		}
	}

	// End flushes every pending probe; then every non-late order has been emitted once, joined
	// with the version of its second.
	push(0, exec.Msg{Kind: exec.MsgEnd})
	push(1, exec.Msg{Kind: exec.MsgEnd})
	if sink.bad > 0 {
		t.Errorf("%d joined rows with the wrong version, e.g. %s", sink.bad, sink.firstBad)
	}
	if sink.rows+late != int64(total) {
		t.Errorf("emitted %d + late %d = %d, want %d orders", sink.rows, late, sink.rows+late, total)
	}
	if late == 0 || late > int64(total)/10 {
		t.Errorf("%d late probes: the workload should make a few (rows more than 500 ms behind the maximum)", late)
	}
	if _, _, p := stateOf(); p != 0 {
		t.Errorf("%d probes still pending after End", p)
	}
}
