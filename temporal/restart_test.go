package temporal

// Restart equivalence of the temporal join: checkpoint/restore at random points against an
// uninterrupted run (SPEC.md section 4), over the join's keyed store and record.

import (
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/exectest"
	"github.com/streamsql/streamsql/types"
	"github.com/streamsql/streamsql/window"
)

type rsSink struct{ log *[]string }

func (s rsSink) Push(_ int, m exec.Msg) error {
	switch m.Kind {
	case exec.MsgWatermark:
		*s.log = append(*s.log, fmt.Sprint("wm ", m.Watermark))
	case exec.MsgEnd:
		*s.log = append(*s.log, "end")
	case exec.MsgBatch:
		var rows []string
		for i := 0; i < m.Batch.N; i++ {
			rows = append(rows, fmt.Sprint(m.Batch.Row(i), "*", m.Batch.Weight(i)))
		}
		sort.Strings(rows)
		*s.log = append(*s.log, strings.Join(rows, " | "))
	}
	return nil
}

type rsCfg struct {
	mode        int // 0 bigint key, 1 varchar key, 2 two columns
	outer, cond bool
}

// left: id BIGINT, k1, k2 VARCHAR, ts TIMESTAMP ; right: k1, k2 VARCHAR, rv BIGINT, rts TIMESTAMP
func (c rsCfg) types() (lt, rt []types.T) {
	k := types.TBigInt
	if c.mode == 1 {
		k = types.TVarchar
	}
	return []types.T{types.TBigInt, k, types.TVarchar, types.TTimestamp},
		[]types.T{k, types.TVarchar, types.TBigInt, types.TTimestamp}
}

type rsMsg struct {
	port int
	m    exec.Msg
}

func rsMsgs(r *rand.Rand, c rsCfg, n int) []rsMsg {
	lt, rt := c.types()
	kv := func() any {
		if r.Intn(30) == 0 {
			return nil
		}
		x := int64(r.Intn(6) - 1)
		if c.mode == 1 {
			return fmt.Sprint("k", x)
		}
		return x
	}
	k2v := func() any {
		if c.mode != 2 {
			return "x"
		}
		return []string{"a", "b"}[r.Intn(2)]
	}
	var msgs []rsMsg
	var probes, vers [][]any
	wm := [2]int64{0, 0}
	id := int64(0)
	for len(msgs) < n {
		switch x := r.Intn(10); {
		case x < 4: // probe batch
			var rows [][]any
			var ws, wms []int64
			withWM := r.Intn(2) == 0
			for q := r.Intn(5) + 1; q > 0; q-- {
				if len(probes) > 0 && r.Intn(4) == 0 {
					i := r.Intn(len(probes))
					rows = append(rows, probes[i])
					probes = append(probes[:i], probes[i+1:]...)
					ws = append(ws, -1)
				} else {
					id++
					row := []any{id, kv(), k2v(), wm[0] - 5 + int64(r.Intn(25))}
					if r.Intn(40) == 0 {
						row[3] = nil
					}
					rows = append(rows, row)
					probes = append(probes, row)
					ws = append(ws, 1)
				}
				wms = append(wms, wm[0])
				if r.Intn(3) == 0 {
					wm[0] += int64(r.Intn(4))
				}
			}
			b := exec.RowsToBatch(rows, lt)
			b.W = ws
			if withWM {
				b.WM = wms
			}
			msgs = append(msgs, rsMsg{0, exec.Msg{Kind: exec.MsgBatch, Batch: b}})
		case x < 8: // version batch
			var rows [][]any
			var ws, wms []int64
			withWM := r.Intn(2) == 0
			for q := r.Intn(5) + 1; q > 0; q-- {
				switch y := r.Intn(6); {
				case y < 2 && len(vers) > 0: // upsert: retract + insert same key in one batch
					i := r.Intn(len(vers))
					old := vers[i]
					nw := []any{old[0], old[1], int64(r.Intn(100)), wm[1] - 3 + int64(r.Intn(20))}
					if r.Intn(2) == 0 {
						rows = append(rows, old, nw)
						ws = append(ws, -1, 1)
					} else {
						rows = append(rows, nw, old)
						ws = append(ws, 1, -1)
					}
					vers[i] = nw
					wms = append(wms, wm[1], wm[1])
				case y < 3 && len(vers) > 0: // delete
					i := r.Intn(len(vers))
					rows = append(rows, vers[i])
					vers = append(vers[:i], vers[i+1:]...)
					ws = append(ws, -1)
					wms = append(wms, wm[1])
				default:
					nw := []any{kv(), k2v(), int64(r.Intn(100)), wm[1] - 3 + int64(r.Intn(20))}
					rows = append(rows, nw)
					ws = append(ws, 1)
					wms = append(wms, wm[1])
					vers = append(vers, nw)
				}
				if r.Intn(3) == 0 {
					wm[1] += int64(r.Intn(4))
				}
			}
			b := exec.RowsToBatch(rows, rt)
			b.W = ws
			if withWM {
				b.WM = wms
			}
			msgs = append(msgs, rsMsg{1, exec.Msg{Kind: exec.MsgBatch, Batch: b}})
		default:
			p := r.Intn(2)
			wm[p] += int64(r.Intn(6))
			msgs = append(msgs, rsMsg{p, exec.Msg{Kind: exec.MsgWatermark, Watermark: wm[p]}})
		}
	}
	msgs = append(msgs, rsMsg{0, exec.Msg{Kind: exec.MsgEnd}}, rsMsg{1, exec.Msg{Kind: exec.MsgEnd}})
	return msgs
}

func rsJoin(c rsCfg, log *[]string) *Join {
	lt, rt := c.types()
	lk, rk := []int{1}, []int{0}
	if c.mode == 2 {
		lk, rk = []int{1, 2}, []int{0, 1}
	}
	var cond exec.Expr
	if c.cond {
		e, err := exec.NewBinary("<>", &exec.ColRef{Idx: 6, T: types.TBigInt}, &exec.Const{V: int64(7), T: types.TBigInt})
		if err != nil {
			panic(err)
		}
		cond = e
	}
	late := func(l window.LateRow) { *log = append(*log, fmt.Sprint("late ", l.EventTime, l.Watermark, l.Row)) }
	rtime, ltime := 3, 3
	out := exec.Output{Op: rsSink{log}}
	return &Join{Outer: c.outer, LeftKeys: lk, RightKeys: rk, LeftTime: ltime, RightTime: rtime, LeftT: lt, RightT: rt, Cond: cond, Late: late, Out: out}
}

func rsRun(t *testing.T, c rsCfg, msgs []rsMsg, restarts map[int]bool) []string {
	var log []string
	j := rsJoin(c, &log)
	store := exectest.Store{}
	j.Attach(store)
	for i, m := range msgs {
		if restarts[i] {
			w := &exec.StateWriter{}
			j.SaveState(w)
			store = store.Clone()
			j = rsJoin(c, &log)
			j.Attach(store)
			if err := j.LoadState(&exec.StateReader{Buf: w.Buf}); err != nil {
				t.Fatal(err)
			}
		}
		if err := j.Push(m.port, m.m); err != nil {
			t.Fatal(err)
		}
	}
	return log
}

// TestTemporalJoinRestartEquivalent: a join checkpointed (SaveState into its record and keyed
// store) and replaced by one restored from it (LoadState) at random points — between any two
// messages but the two Ends — emits the same rows and reports the same late rows as a join run
// uninterrupted (SPEC.md section 4: a restart yields views equal to a clean run). Random
// workloads over a BIGINT key (the by-value path), a VARCHAR key and a two-column key, INNER and
// LEFT, with and without an extra condition: probe rows and their retractions (pending, emitted
// or late), NULL keys and times, versions, upserts (retraction and insertion of a key in one
// batch, in either order), DELETEs, and per-row watermarks on both sides.
func TestTemporalJoinRestartEquivalent(t *testing.T) {
	seeds := int64(1500)
	if testing.Short() {
		seeds = 300
	}
	for seed := int64(0); seed < seeds; seed++ {
		r := rand.New(rand.NewSource(seed))
		c := rsCfg{mode: r.Intn(3), outer: r.Intn(2) == 0, cond: r.Intn(3) == 0}
		msgs := rsMsgs(r, c, 10+r.Intn(100))
		restarts := map[int]bool{}
		for i := range msgs[:len(msgs)-1] {
			if r.Intn(6) == 0 {
				restarts[i] = true
			}
		}
		want := rsRun(t, c, msgs, nil)
		got := rsRun(t, c, msgs, restarts)
		if d := firstDiff(netRows(want), netRows(got)); d != "" {
			t.Fatalf("seed %d %+v: uninterrupted vs restored at %v: %s", seed, c, restarts, d)
		}
	}
}

func firstDiff(a, b []string) string {
	for i := 0; i < len(a) || i < len(b); i++ {
		var x, y string
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x != y {
			return fmt.Sprintf("at %d:\n  %q\n  %q", i, x, y)
		}
	}
	return ""
}

func netRows(log []string) []string {
	m := map[string]int{}
	for _, e := range log {
		if strings.HasPrefix(e, "wm ") || e == "end" {
			continue
		}
		if strings.HasPrefix(e, "late ") {
			m[e]++
			continue
		}
		for _, r := range strings.Split(e, " | ") {
			i := strings.LastIndex(r, "*")
			w := 0
			fmt.Sscan(r[i+1:], &w)
			m[r[:i]] += w
		}
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
