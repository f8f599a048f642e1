package exec

// Review tests of HashJoin (regular and interval joins): random changes on both sides —
// duplicates, NULL keys, retractions, per-row watermarks — against the batch join of the rows
// applied (SPEC.md section 3: a view equals the batch query after FLUSH; late rows are never
// applied), and checkpoint/restore (SaveState, LoadState) and spilling at random points
// against an uninterrupted in-memory run (section 4).

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/exec/exectest"
	"github.com/streamsql/streamsql/types"
)

type jrCfg struct {
	kind     JoinKind
	interval bool
	lo, hi   int64
	cond     bool
	ttl      int64
}

type jrMsg struct {
	port int
	m    Msg
}

// rows: k BIGINT, v BIGINT, ts (milliseconds, BIGINT)
var jrT = []types.T{types.TBigInt, types.TBigInt, types.TBigInt}

func jrJoin(c jrCfg, out Operator, late *[]string) *HashJoin {
	col := func(i int) Expr { return &ColRef{Idx: i, T: jrT[i%3]} }
	must := func(e Expr, err error) Expr {
		if err != nil {
			panic(err)
		}
		return e
	}
	var cond Expr
	and := func(e Expr) {
		if cond == nil {
			cond = e
		} else {
			cond = must(NewBinary("AND", cond, e))
		}
	}
	j := &HashJoin{Kind: c.kind, LeftKeys: []int{0}, RightKeys: []int{0}, LeftT: jrT, RightT: jrT, TTL: c.ttl, Out: Output{Op: out}}
	if c.interval {
		// r.ts - l.ts BETWEEN lo AND hi, on the raw millisecond values
		d := must(NewBinary("-", col(5), col(2)))
		and(must(NewBinary(">=", d, &Const{V: c.lo, T: types.TBigInt})))
		and(must(NewBinary("<=", d, &Const{V: c.hi, T: types.TBigInt})))
		spec := &IntervalSpec{LeftTime: 2, RightTime: 2, Lo: c.lo, Hi: c.hi}
		for side := 0; side < 2; side++ {
			spec.Late[side] = func(t, w int64, row []any) {
				*late = append(*late, fmt.Sprint("late ", side, " ", t, " ", w, " ", row))
			}
		}
		j.Interval = spec
	}
	if c.cond {
		and(must(NewBinary("<>", col(1), col(4))))
	}
	j.Cond = cond
	return j
}

// jrGen makes a random stream and the rows it leaves applied on each side (the rows not late).
func jrGen(r *rand.Rand, c jrCfg, n int) (msgs []jrMsg, applied [2]map[string]int64, rowOf map[string][]any) {
	applied = [2]map[string]int64{{}, {}}
	rowOf = map[string][]any{}
	wm := [2]int64{NoWatermark, NoWatermark}   // each table's watermark
	sent := [2]int64{NoWatermark, NoWatermark} // the watermark the join was told
	var stored [2][][]any                      // rows each table holds (a retraction picks one)
	base := int64(1000)
	for len(msgs) < n {
		s := r.IntN(2)
		var rows [][]any
		var ws, wms []int64
		withWM := r.IntN(5) != 0
		for q := 1 + r.IntN(5); q > 0; q-- {
			var row []any
			w := int64(1)
			if len(stored[s]) > 0 && r.IntN(3) == 0 {
				i := r.IntN(len(stored[s]))
				row = stored[s][i]
				stored[s] = append(stored[s][:i], stored[s][i+1:]...)
				w = -1
			} else {
				var k any = int64(r.IntN(3))
				if r.IntN(8) == 0 {
					k = nil
				}
				cur := base
				if wm[s] != NoWatermark {
					cur = wm[s]
				}
				var ts any = cur - 4 + int64(r.IntN(14))
				if c.interval && r.IntN(40) == 0 {
					ts = nil
				}
				row = []any{k, int64(r.IntN(2)), ts}
				stored[s] = append(stored[s], row)
			}
			own := sent[s]
			if withWM {
				own = wm[s]
			}
			jw := min(own, sent[1-s])
			late := c.interval && (row[2] == nil || row[2].(int64) <= jw)
			if !late {
				key := fmt.Sprint(row)
				rowOf[key] = row
				applied[s][key] += w
			}
			rows, ws, wms = append(rows, row), append(ws, w), append(wms, wm[s])
			if w > 0 && row[2] != nil {
				wm[s] = max(wm[s], row[2].(int64))
			}
		}
		b := RowsToBatch(rows, jrT)
		b.W = ws
		if withWM {
			b.WM = wms
		}
		msgs = append(msgs, jrMsg{s, Msg{Kind: MsgBatch, Batch: b}})
		if r.IntN(4) != 0 && wm[s] != NoWatermark {
			msgs = append(msgs, jrMsg{s, Msg{Kind: MsgWatermark, Watermark: wm[s]}})
			sent[s] = wm[s]
		}
	}
	// The end: watermarks past every row, so interval joins free (and pad) all they keep.
	for s := 0; s < 2; s++ {
		msgs = append(msgs, jrMsg{s, Msg{Kind: MsgWatermark, Watermark: 1 << 40}})
	}
	return msgs, applied, rowOf
}

// jrBatch is the batch join of the applied rows.
func jrBatch(c jrCfg, applied [2]map[string]int64, rowOf map[string][]any) liveCounts {
	out := liveCounts{}
	matches := func(l, r []any) bool {
		if l[0] == nil || r[0] == nil || l[0] != r[0] {
			return false
		}
		if c.interval {
			d := r[2].(int64) - l[2].(int64)
			if d < c.lo || d > c.hi {
				return false
			}
		}
		return !c.cond || l[1] != r[1]
	}
	nulls := []any{nil, nil, nil}
	add := func(row []any, w int64) {
		k := fmt.Sprint(row)
		out[k] += w
		if out[k] == 0 {
			delete(out, k)
		}
	}
	rmatched := map[string]bool{}
	for lk, lw := range applied[0] {
		if lw == 0 {
			continue
		}
		l := rowOf[lk]
		found := false
		for rk, rw := range applied[1] {
			if rw == 0 {
				continue
			}
			if r := rowOf[rk]; matches(l, r) {
				found = true
				rmatched[rk] = true
				add(append(append([]any{}, l...), r...), lw*rw)
			}
		}
		if !found && (c.kind == JoinLeft || c.kind == JoinFull) {
			add(append(append([]any{}, l...), nulls...), lw)
		}
	}
	if c.kind == JoinRight || c.kind == JoinFull {
		for rk, rw := range applied[1] {
			if rw != 0 && !rmatched[rk] {
				add(append(append([]any{}, nulls...), rowOf[rk]...), rw)
			}
		}
	}
	return out
}

// jrRun runs msgs through a join, checkpointed and restored before the messages in restarts
// and spilled (where it can) before those in spills.
func jrRun(t *testing.T, c jrCfg, msgs []jrMsg, restarts, spills map[int]bool) (liveCounts, []string) {
	out := liveCounts{}
	var late []string
	j := jrJoin(c, out, &late)
	store := exectest.Store{}
	j.Attach(store)
	for i, m := range msgs {
		if spills[i] && j.CanSpill() {
			j.Spill()
		}
		if restarts[i] {
			w := &StateWriter{}
			j.SaveState(w)
			store = store.Clone()
			j = jrJoin(c, out, &late)
			j.Attach(store)
			if err := j.LoadState(&StateReader{Buf: w.Buf}); err != nil {
				t.Fatal(err)
			}
		}
		if err := j.Push(m.port, m.m); err != nil {
			t.Fatal(err)
		}
	}
	sort.Strings(late)
	return out, late
}

func jrCfgOf(r *rand.Rand) jrCfg {
	c := jrCfg{kind: JoinKind(r.IntN(4)), cond: r.IntN(3) == 0}
	switch r.IntN(3) {
	case 0:
		c.interval = true
		c.lo = int64(r.IntN(9)) - 6
		c.hi = c.lo + int64(r.IntN(8))
	case 1:
		if r.IntN(3) == 0 {
			c.ttl = int64(1 + r.IntN(10))
		}
	}
	return c
}

// TestJoinEqualsBatch: a streaming join's net output, once the watermarks have passed
// every row, is the batch join of the rows it applied (all of them for a regular join; the
// ones not late for an interval join), whether it ran in memory, spilled at random points,
// or was checkpointed and restored at random points.
func TestJoinEqualsBatch(t *testing.T) {
	for seed := uint64(0); seed < 1500; seed++ {
		r := rand.New(rand.NewPCG(seed, 11))
		c := jrCfgOf(r)
		msgs, applied, rowOf := jrGen(r, c, 5+r.IntN(60))
		restarts, spills := map[int]bool{}, map[int]bool{}
		for i := range msgs {
			if r.IntN(5) == 0 {
				restarts[i] = true
			}
			if r.IntN(5) == 0 {
				spills[i] = true
			}
		}
		want, wantLate := jrRun(t, c, msgs, nil, nil)
		if c.ttl == 0 {
			if ref := jrBatch(c, applied, rowOf); ref.String() != want.String() {
				t.Fatalf("seed %d %+v: in memory\n%s\nbatch join\n%s", seed, c, want, ref)
			}
		}
		for name, rs := range map[string][2]map[int]bool{"restored": {restarts, nil}, "spilled": {nil, spills}, "both": {restarts, spills}} {
			got, gotLate := jrRun(t, c, msgs, rs[0], rs[1])
			if got.String() != want.String() {
				t.Fatalf("seed %d %+v: %s at %v %v\n%s\nuninterrupted\n%s", seed, c, name, rs[0], rs[1], got, want)
			}
			if strings.Join(gotLate, "\n") != strings.Join(wantLate, "\n") {
				t.Fatalf("seed %d %+v: %s late rows\n%v\nuninterrupted\n%v", seed, c, name, gotLate, wantLate)
			}
		}
	}
}
