package window

// Review tests: window.Assign (TUMBLE, HOP, CUMULATE) against a brute-force model of SPEC.md
// section 3, through every path (general, tumble, hop, hopRuns, byLane), and window.Session
// restart equivalence (SaveState/LoadState at random points against an uninterrupted run).

import (
	"cmp"
	"fmt"
	"math/rand"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/exectest"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// rvSink decodes each batch as it comes (Reuse: the window columns' memory is reused).
type rvSink struct{ out *[]string }

func (s rvSink) Push(_ int, m exec.Msg) error {
	if m.Kind == exec.MsgBatch && m.Batch != nil {
		*s.out = append(*s.out, assignOut([]*exec.Batch{m.Batch}, 0, 2)...)
	}
	return nil
}

// modelWindows lists the windows [start, end) containing ts by brute force: every epoch-aligned
// candidate start, stepping by the slide (HOP), the size (TUMBLE, CUMULATE).
func modelWindows(sp Spec, ts int64) [][2]int64 {
	var out [][2]int64
	floor := func(a, b int64) int64 {
		q := a / b
		if a%b != 0 && (a < 0) != (b < 0) {
			q--
		}
		return q * b
	}
	switch sp.Kind {
	case sql.Tumble:
		s := floor(ts, sp.Args[0])
		out = append(out, [2]int64{s, s + sp.Args[0]})
	case sql.Hop:
		slide, size := sp.Args[0], sp.Args[1]
		for s := floor(ts, slide) - size; s <= ts; s += slide {
			if s <= ts && ts < s+size {
				out = append(out, [2]int64{s, s + size})
			}
		}
	case sql.Cumulate:
		step, size := sp.Args[0], sp.Args[1]
		s := floor(ts, size)
		for e := s + step; e <= s+size; e += step {
			if ts < e {
				out = append(out, [2]int64{s, e})
			}
		}
	}
	return out
}

// assignOut decodes Assign's output batches into "id start end wt *weight" lines.
func assignOut(bs []*exec.Batch, idCol, nIn int) []string {
	var lines []string
	for _, b := range bs {
		if b.Runs != nil {
			lanes := max(1, b.Lanes)
			from := 0
			for _, r := range b.Runs {
				for q := from; q < r.To; q++ {
					i := q % b.N
					_ = lanes
					lines = append(lines, fmt.Sprint(exec.Int64s(b.Cols[idCol])[i], " ", r.Start, " ", r.End, " ", r.End-1, " *", b.Weight(i)))
				}
				from = r.To
			}
			continue
		}
		for i := 0; i < b.N; i++ {
			lines = append(lines, fmt.Sprint(exec.Int64s(b.Cols[idCol])[i], " ", exec.Int64s(b.Cols[nIn])[i], " ",
				exec.Int64s(b.Cols[nIn+1])[i], " ", exec.Int64s(b.Cols[nIn+2])[i], " *", b.Weight(i)))
		}
	}
	sort.Strings(lines)
	return lines
}

// TestAssignModel: every path of Assign gives each row exactly its windows that are not
// complete before it (W >= window_time = end - 1 complete), and reports the row late when there
// are none, with times around zero (before 1970 too), rows exactly at window_time and W, per-row
// watermarks or the last watermark received.
func TestAssignModel(t *testing.T) {
	seeds := 3000
	if testing.Short() {
		seeds = 500
	}
	tt := []types.T{types.TBigInt, types.TTimestamp}
	for seed := 0; seed < seeds; seed++ {
		r := rand.New(rand.NewSource(int64(seed)))
		var sp Spec
		switch r.Intn(3) {
		case 0:
			sp = Spec{Kind: sql.Tumble, Args: []int64{int64(1 + r.Intn(10))}}
			if r.Intn(4) == 0 {
				sp.Args[0] = 86_400_000 * int64(1+r.Intn(400))
			}
		case 1:
			sl := int64(1 + r.Intn(5))
			sp = Spec{Kind: sql.Hop, Args: []int64{sl, sl * int64(1+r.Intn(4))}}
		default:
			st := int64(1 + r.Intn(5))
			sp = Spec{Kind: sql.Cumulate, Args: []int64{st, st * int64(1+r.Intn(4))}}
		}
		var out []string
		var lates []string
		a := &Assign{Spec: sp, TimeCol: 1, Types: tt, Out: exec.Output{Op: rvSink{&out}},
			Reuse: r.Intn(2) == 0, RunsOnly: r.Intn(2) == 0, InOrder: r.Intn(3) == 0,
			Late: func(l LateRow) { lates = append(lates, fmt.Sprint(l.Row[0], " ", l.EventTime, " ", l.Watermark)) }}
		var want, wantLate []string
		wm, seen := exec.NoWatermark, false
		id := int64(0)
		base := int64(r.Intn(40) - 20)
		switch r.Intn(4) { // also year 1 and year 9999, in UTC epoch milliseconds
		case 0:
			base += -62135596800000
		case 1:
			base += 253402300799999
		}
		for step := 0; step < 20; step++ {
			if r.Intn(4) == 0 {
				nw := base + int64(r.Intn(8))
				if !seen || nw > wm {
					wm, seen = nw, true
				}
				base = nw
				if err := a.Push(0, exec.Msg{Kind: exec.MsgWatermark, Watermark: nw}); err != nil {
					t.Fatal(err)
				}
				continue
			}
			withWM := r.Intn(2) == 0
			n := 1 + r.Intn(6)
			var rows [][]any
			var ws, wms []int64
			rwm := wm
			if withWM && !seen {
				rwm = exec.NoWatermark
			}
			for q := 0; q < n; q++ {
				id++
				ts := base - 6 + int64(r.Intn(14))
				rows = append(rows, []any{id, ts})
				w := int64(1)
				if r.Intn(5) == 0 {
					w = -1
				}
				ws = append(ws, w)
				if withWM {
					wms = append(wms, rwm)
					if r.Intn(2) == 0 {
						rwm = max(rwm, ts-int64(r.Intn(3)))
					}
				}
			}
			b := exec.RowsToBatch(rows, tt)
			b.W = ws
			if withWM {
				b.WM = wms
			}
			for i, row := range rows {
				ts := row[1].(int64)
				judge := wm
				if withWM {
					judge = wms[i]
				} else if !seen {
					judge = exec.NoWatermark
				}
				applied := false
				for _, w := range modelWindows(sp, ts) {
					if w[1]-1 > judge {
						applied = true
						want = append(want, fmt.Sprint(row[0], " ", w[0], " ", w[1], " ", w[1]-1, " *", ws[i]))
					}
				}
				if !applied {
					wantLate = append(wantLate, fmt.Sprint(row[0], " ", ts, " ", judge))
				}
			}
			if err := a.Push(0, exec.Msg{Kind: exec.MsgBatch, Batch: b}); err != nil {
				t.Fatal(err)
			}
		}
		sort.Strings(want)
		got := out
		sort.Strings(got)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("seed %d %+v reuse=%v runs=%v inorder=%v:\n got %v\nwant %v", seed, sp, a.Reuse, a.RunsOnly, a.InOrder, got, want)
		}
		if strings.Join(lates, "\n") != strings.Join(wantLate, "\n") {
			t.Fatalf("seed %d %+v late:\n got %v\nwant %v", seed, sp, lates, wantLate)
		}
	}
}

// --- SESSION ---

var rsTypes = []types.T{types.TBigInt, types.TBigInt, types.TTimestamp, types.TBigInt} // id, k, ts, v

// rsEval is a session's aggregate: k, window_start, window_end, COUNT(*), SUM(v), and the ids
// in the session's row order (order-dependent, as LISTAGG / LAST_VALUE would be).
func rsEval(b *exec.Batch) (*exec.Batch, error) {
	var n, sum int64
	var ids []string
	for i := 0; i < b.N; i++ {
		w := b.Weight(i)
		n += w
		sum += w * exec.Int64s(b.Cols[3])[i]
		for q := int64(0); q < w; q++ {
			ids = append(ids, fmt.Sprint(exec.Int64s(b.Cols[0])[i]))
		}
	}
	if n == 0 {
		return nil, nil
	}
	row := []any{exec.Int64s(b.Cols[1])[0], exec.Int64s(b.Cols[4])[0], exec.Int64s(b.Cols[5])[0], n, sum, strings.Join(ids, ",")}
	return exec.RowsToBatch([][]any{row}, rsOutTypes), nil
}

var rsOutTypes = []types.T{types.TBigInt, types.TTimestamp, types.TTimestamp, types.TBigInt, types.TBigInt, types.TVarchar}

type rsLog struct{ log *[]string }

func (s rsLog) Push(_ int, m exec.Msg) error {
	if m.Kind != exec.MsgBatch || m.Batch == nil {
		return nil
	}
	for i := 0; i < m.Batch.N; i++ {
		*s.log = append(*s.log, fmt.Sprint(m.Batch.Row(i), "*", m.Batch.Weight(i)))
	}
	return nil
}

func rsSession(gap int64, eowc bool, log *[]string) *Session {
	return &Session{Gap: gap, TimeCol: 2, PartCols: []int{1}, Types: rsTypes, Eval: rsEval, OutTypes: rsOutTypes,
		EmitOnClose: eowc, Out: exec.Output{Op: rsLog{log}},
		Late: func(l LateRow) { *log = append(*log, fmt.Sprint("late ", l.EventTime, " ", l.Watermark, " ", l.Row)) }}
}

func rsMsgs(r *rand.Rand, n int) []exec.Msg {
	var msgs []exec.Msg
	var live [][]any
	wm, id := int64(-10), int64(0)
	for len(msgs) < n {
		if r.Intn(4) == 0 {
			wm += int64(r.Intn(5))
			msgs = append(msgs, exec.Msg{Kind: exec.MsgWatermark, Watermark: wm})
			continue
		}
		var rows [][]any
		var ws, wms []int64
		rwm := wm
		for q := 1 + r.Intn(5); q > 0; q-- {
			if len(live) > 0 && r.Intn(4) == 0 {
				i := r.Intn(len(live))
				rows = append(rows, live[i])
				live = append(live[:i], live[i+1:]...)
				ws = append(ws, -1)
			} else {
				id++
				row := []any{id, int64(r.Intn(3)), rwm - 8 + int64(r.Intn(20)), int64(r.Intn(10))}
				if r.Intn(6) == 0 && len(live) > 0 { // a duplicate of a live row's values
					row = append([]any(nil), live[r.Intn(len(live))]...)
				}
				rows = append(rows, row)
				live = append(live, row)
				ws = append(ws, 1)
			}
			wms = append(wms, rwm)
			if r.Intn(3) == 0 {
				rwm += int64(r.Intn(4))
			}
		}
		b := exec.RowsToBatch(rows, rsTypes)
		b.W, b.WM = ws, wms
		msgs = append(msgs, exec.Msg{Kind: exec.MsgBatch, Batch: b})
		if rwm > wm {
			wm = rwm
			msgs = append(msgs, exec.Msg{Kind: exec.MsgWatermark, Watermark: wm})
		}
	}
	return append(msgs, exec.Msg{Kind: exec.MsgEnd})
}

func rsRun(t *testing.T, gap int64, eowc bool, msgs []exec.Msg, restarts map[int]bool) []string {
	var log []string
	s := rsSession(gap, eowc, &log)
	store := exectest.Store{}
	s.Attach(store)
	for i, m := range msgs {
		if restarts[i] {
			w := &exec.StateWriter{}
			s.SaveState(w)
			store = store.Clone()
			s = rsSession(gap, eowc, &log)
			s.Attach(store)
			if err := s.LoadState(&exec.StateReader{Buf: w.Buf}); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Push(0, m); err != nil {
			t.Fatal(err)
		}
	}
	return log
}

func rsNet(log []string) []string {
	m := map[string]int{}
	for _, e := range log {
		if strings.HasPrefix(e, "late ") {
			m[e]++
			continue
		}
		i := strings.LastIndex(e, "*")
		w := 0
		fmt.Sscan(e[i+1:], &w)
		m[e[:i]] += w
	}
	var out []string
	for k, v := range m {
		if v != 0 {
			out = append(out, fmt.Sprint(k, " x", v))
		}
	}
	sort.Strings(out)
	return out
}

// TestSessionRestartEquivalent: a session operator saved and restored at random points
// gives the same net output and late rows as one run uninterrupted (SPEC.md section 4), in both
// emit modes, with insertions, retractions (duplicates of live rows' values too) and per-row
// watermarks.
func TestSessionRestartEquivalent(t *testing.T) {
	seeds := 2000
	if testing.Short() {
		seeds = 300
	}
	for seed := 0; seed < seeds; seed++ {
		r := rand.New(rand.NewSource(int64(seed)))
		gap := int64(1 + r.Intn(6))
		eowc := r.Intn(2) == 0
		msgs := rsMsgs(r, 10+r.Intn(80))
		restarts := map[int]bool{}
		for i := range msgs[:len(msgs)-1] {
			if r.Intn(5) == 0 {
				restarts[i] = true
			}
		}
		want := rsNet(rsRun(t, gap, eowc, msgs, nil))
		got := rsNet(rsRun(t, gap, eowc, msgs, restarts))
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("seed %d gap %d eowc %v restarts %v:\n got %v\nwant %v", seed, gap, eowc, restarts, got, want)
		}
	}
}

// TestSessionEmitModesAgree: the net output of the default emit (each session's last
// rows) equals EMIT ON WINDOW CLOSE's (each session once, final), late rows included.
func TestSessionEmitModesAgree(t *testing.T) {
	for seed := 0; seed < 2000; seed++ {
		r := rand.New(rand.NewSource(int64(seed)))
		gap := int64(1 + r.Intn(6))
		msgs := rsMsgs(r, 10+r.Intn(80))
		a := rsNet(rsRun(t, gap, false, msgs, nil))
		b := rsNet(rsRun(t, gap, true, msgs, nil))
		if strings.Join(a, "\n") != strings.Join(b, "\n") {
			t.Fatalf("seed %d gap %d:\n default %v\n eowc    %v", seed, gap, a, b)
		}
	}
}

// TestWindowsHugeIntervals: window assignment with very large (but accepted) intervals
// ends, and gives each row every window that contains it. CUMULATE's loop `end += step` went
// past the largest int64 and wrapped (an endless loop: the view hung on its first row); HOP's
// general path compared with ts - size, which overflowed for a time before 1970, and gave
// the row no window (reported late) where the fast path gives two.
func TestWindowsHugeIntervals(t *testing.T) {
	const maxI = int64(1<<63 - 1)
	const s = maxI / 2 // 4611686018427387903
	ts1960 := int64(-315619199000)
	ts2024 := int64(1704067201000)
	cases := []struct {
		sp   Spec
		ts   int64
		want [][2]int64
	}{
		// 9223372036854775807 = 7 * 1317624576693539401: seven CUMULATE windows from 0
		{Spec{Kind: sql.Cumulate, Args: []int64{maxI / 7, maxI}}, ts2024, func() (w [][2]int64) {
			for k := int64(1); k <= 7; k++ {
				w = append(w, [2]int64{0, k * (maxI / 7)})
			}
			return
		}()},
		// HOP slide s, size 2s: the row at 1960 is in [-s, s) and [-2s, 0)
		{Spec{Kind: sql.Hop, Args: []int64{s, 2 * s}}, ts1960, [][2]int64{{-s, s}, {-2 * s, 0}}},
		{Spec{Kind: sql.Hop, Args: []int64{s, 2 * s}}, ts2024, [][2]int64{{0, 2 * s}, {-s, s}}},
	}
	for _, c := range cases {
		done := make(chan [][2]int64, 1)
		go func() { done <- c.sp.Windows(nil, c.ts) }()
		select {
		case got := <-done:
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("%+v at %d: got %v, want %v", c.sp, c.ts, got, c.want)
			}
		case <-time.After(3 * time.Second):
			t.Errorf("%+v at %d: Windows did not return (endless loop)", c.sp, c.ts)
		}
	}
}

// TestSessionBoundsFitRows: after insertions and retractions in any order (inner rows,
// rows at a bound, duplicates, a row bridging two parts), every open session spans exactly its
// rows, [least ts, greatest ts + gap), holds rows of positive weight only, and is one session:
// no two of its rows consecutive in time are more than the gap apart (a retraction of a row
// that bridged a gap splits its session).
func TestSessionBoundsFitRows(t *testing.T) {
	for seed := 0; seed < 500; seed++ {
		r := rand.New(rand.NewSource(int64(seed)))
		gap := int64(1 + r.Intn(6))
		var log []string
		s := rsSession(gap, false, &log)
		w := int64(-1 << 63) // the watermark after the rows so far
		for i, m := range rsMsgs(r, 10+r.Intn(80)) {
			if err := s.Push(0, m); err != nil {
				t.Fatal(err)
			}
			if m.Kind == exec.MsgWatermark {
				w = max(w, m.Watermark)
			}
			if m.Batch != nil {
				w = max(w, slices.Max(m.Batch.WM))
			}
			if i%5 == 4 {
				// A batch taking back rows of open sessions and putting each back right
				// away (a keyed UPDATE's old and new rows): changes that change nothing,
				// so the sessions stay as they were.
				before := sessionShapes(s)
				if err := s.Push(0, exec.Msg{Kind: exec.MsgBatch, Batch: rewriteBatch(r, s, w)}); err != nil {
					t.Fatal(err)
				}
				if after := sessionShapes(s); after != before {
					t.Fatalf("seed %d msg %d: rows rewritten in place changed the sessions\n%s\nto\n%s", seed, i, before, after)
				}
			}
			for _, list := range s.parts {
				for _, x := range list {
					lo, hi := int64(1<<63-1), int64(-1<<63)
					for j, row := range x.rows {
						ts := row[s.TimeCol].(int64)
						lo, hi = min(lo, ts), max(hi, ts+gap)
						if x.w[j] <= 0 {
							t.Fatalf("seed %d msg %d: a row of weight %d stays", seed, i, x.w[j])
						}
					}
					if len(x.rows) == 0 || x.start != lo || x.end != hi {
						t.Fatalf("seed %d msg %d: session [%d, %d) over %d rows spanning [%d, %d)", seed, i, x.start, x.end, len(x.rows), lo, hi)
					}
					var times []int64
					for j, row := range x.rows {
						times = append(times, row[s.TimeCol].(int64))
						if len(x.ts) != len(x.rows) || x.ts[j] != times[j] {
							t.Fatalf("seed %d msg %d: session [%d, %d) keeps times %v for rows %v", seed, i, x.start, x.end, x.ts, x.rows)
						}
					}
					slices.Sort(times)
					for j := 1; j < len(times); j++ {
						if times[j]-times[j-1] > gap {
							t.Fatalf("seed %d msg %d: session [%d, %d) holds rows at %d and %d, more than the gap %d apart", seed, i, x.start, x.end, times[j-1], times[j], gap)
						}
					}
				}
			}
		}
	}
}

// sessionShapes lists every session of s as its partition, bounds and row count, sorted.
func sessionShapes(s *Session) string {
	var out []string
	for k, list := range s.parts {
		for _, x := range list {
			out = append(out, fmt.Sprintf("%q [%d, %d) %d", k, x.start, x.end, len(x.rows)))
		}
	}
	slices.Sort(out)
	return strings.Join(out, "\n")
}

// rewriteBatch takes back up to four rows of s's sessions open at watermark w, each inserted
// again right after, at w: an upsert table's change (Batch.Updates).
func rewriteBatch(r *rand.Rand, s *Session, w int64) *exec.Batch {
	var open [][]any
	for _, list := range s.parts {
		for _, x := range list {
			if x.end-1 > w {
				open = append(open, x.rows...)
			}
		}
	}
	slices.SortFunc(open, func(a, b []any) int { return cmp.Compare(a[0].(int64), b[0].(int64)) })
	var rows [][]any
	var ws, wms []int64
	for _, i := range r.Perm(len(open))[:min(4, len(open))] {
		rows, ws, wms = append(rows, open[i], open[i]), append(ws, -1, 1), append(wms, w, w)
	}
	b := exec.RowsToBatch(rows, rsTypes)
	b.W, b.WM, b.Updates = ws, wms, true
	return b
}

// BenchmarkSessionRetract deletes every other row of one open session of 20,000 rows.
func BenchmarkSessionRetract(b *testing.B) {
	const n = 20000
	rows := make([][]any, n)
	for i := range rows {
		rows[i] = []any{int64(i), int64(1), int64(i), int64(i % 10)}
	}
	in := exec.RowsToBatch(rows, rsTypes)
	var odd [][]any
	for i := 1; i < n; i += 2 {
		odd = append(odd, rows[i])
	}
	del := exec.RowsToBatch(odd, rsTypes)
	del.W = make([]int64, del.N)
	for i := range del.W {
		del.W[i] = -1
	}
	for b.Loop() {
		var log []string
		s := rsSession(1000, false, &log)
		if err := s.Push(0, exec.Msg{Kind: exec.MsgBatch, Batch: in}); err != nil {
			b.Fatal(err)
		}
		if err := s.Push(0, exec.Msg{Kind: exec.MsgBatch, Batch: del}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestSessionOutputOrderTies: a batch that leaves a complete session and an open one starting
// at the same time in one partition emits them in one order, whatever the map iteration.
func TestSessionOutputOrderTies(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		var log []string
		s := rsSession(10, false, &log)
		b := exec.RowsToBatch([][]any{
			{int64(1), int64(1), int64(10), int64(1)},
			{int64(2), int64(1), int64(15), int64(1)},
			{int64(3), int64(1), int64(10), int64(1)},
		}, rsTypes)
		b.W, b.WM = []int64{1, 1, 1}, []int64{0, 19, 19}
		if err := s.Push(0, exec.Msg{Kind: exec.MsgBatch, Batch: b}); err != nil {
			t.Fatal(err)
		}
		seen[strings.Join(log, " | ")] = true
	}
	if len(seen) != 1 {
		t.Fatalf("%d different outputs for one input: %v", len(seen), seen)
	}
}
