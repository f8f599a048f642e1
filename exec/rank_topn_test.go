package exec

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/exec/exectest"
	"github.com/streamsql/streamsql/types"
)

// changeSum is a multiset of rows kept by summing the weights of the changes pushed to it;
// with dropLast, of the rows without their last column.
type changeSum struct {
	m        map[string]int64
	dropLast bool
}

func (s *changeSum) add(row []any, w int64) {
	if s.dropLast {
		row = row[:len(row)-1]
	}
	k := fmt.Sprint(row)
	if s.m[k] += w; s.m[k] == 0 {
		delete(s.m, k)
	}
}

func (s *changeSum) Push(_ int, m Msg) error {
	if m.Kind == MsgBatch {
		for i := 0; i < m.Batch.N; i++ {
			s.add(m.Batch.Row(i), m.Batch.Weight(i))
		}
	}
	return nil
}

func (s *changeSum) String() string {
	var rows []string
	for k, n := range s.m {
		rows = append(rows, fmt.Sprintf("%s x%d", k, n))
	}
	sort.Strings(rows)
	return strings.Join(rows, "\n")
}

// rankModel is the ranking the Ranker must maintain, computed from scratch: each partition's
// distinct rows in arrival order (a row whose weight falls to 0 by the end of a batch leaves,
// and arrives anew if it comes back), stably sorted, numbered, cut at the limit.
type rankModel struct {
	parts map[int64][]*modelRow
}

type modelRow struct {
	row []any
	w   int64
}

func (m *rankModel) apply(rows [][]any, ws []int64) {
	byRow := map[string]*modelRow{}
	for _, p := range m.parts {
		for _, r := range p {
			byRow[fmt.Sprint(r.row)] = r
		}
	}
	for i, row := range rows {
		k := fmt.Sprint(row)
		r := byRow[k]
		if r == nil {
			r = &modelRow{row: row}
			byRow[k] = r
			m.parts[row[0].(int64)] = append(m.parts[row[0].(int64)], r)
		}
		r.w += ws[i]
	}
	for k, p := range m.parts {
		m.parts[k] = slices.DeleteFunc(p, func(r *modelRow) bool { return r.w == 0 })
	}
}

func (m *rankModel) ranked(r *Ranker) *changeSum {
	out := &changeSum{m: map[string]int64{}, dropLast: r.NumberHidden}
	for _, p := range m.parts {
		var rows [][]any
		for _, mr := range p {
			for c := int64(0); c < mr.w; c++ {
				rows = append(rows, mr.row)
			}
		}
		sort.SliceStable(rows, func(a, b int) bool { return r.less(rows[a], rows[b]) })
		vals, _ := r.values(rows)
		for i, row := range rows {
			v := vals[i].(int64)
			if v > r.Limit {
				break
			}
			if r.NumberHidden && v <= r.From {
				continue
			}
			out.add(append(append([]any{}, row...), v), 1)
		}
	}
	return out
}

// TestTopNMatchesRanking: a Top-N Ranker (which keeps its partitions' rows in order and
// ranks only the first ones) emits changes that sum, after every batch, to the ranking of the
// rows computed from scratch; for ROW_NUMBER, RANK and DENSE_RANK, ties, duplicate rows,
// retractions (some before their insertions), partitions that empty, and a checkpoint and
// restore into a new Ranker halfway.
func TestTopNMatchesRanking(t *testing.T) {
	ts := []types.T{types.TBigInt, types.TBigInt, types.TBigInt}
	for seed := uint64(0); seed < 300; seed++ {
		rng := rand.New(rand.NewPCG(seed, 3))
		fn := []RankFunc{RowNumber, Rank, DenseRank}[seed%3]
		limit := int64(1 + rng.IntN(6))
		var from int64
		hidden := fn == RowNumber && seed%2 == 0
		if hidden {
			from = int64(rng.IntN(3))
		}
		out := &changeSum{m: map[string]int64{}, dropLast: hidden}
		store := exectest.Store{}
		newRanker := func() *Ranker {
			r := &Ranker{Fn: fn, PartCols: []int{0}, Order: []SortKey{{Col: 1, Desc: seed%4 < 2}},
				Types: ts, ResultT: types.TBigInt, Limit: limit, NumberHidden: hidden, From: from, Out: Output{Op: out}}
			r.Attach(store)
			return r
		}
		r := newRanker()
		if !r.topN() {
			t.Fatal("not a Top-N")
		}
		m := &rankModel{parts: map[int64][]*modelRow{}}
		var live [][]any // rows inserted and not retracted, to retract from
		batches, vmax := 4+rng.IntN(12), 8
		if seed%10 == 4 { // many distinct rows, enough dead ones for a partition to compact
			batches, vmax = 40, 300
		}
		for bi := 0; bi < batches; bi++ {
			var rows [][]any
			var ws []int64
			for range 1 + rng.IntN(10*vmax/8+30) {
				switch {
				case len(live) > 0 && rng.IntN(3) == 0:
					j := rng.IntN(len(live))
					rows, ws = append(rows, live[j]), append(ws, -1)
					live = slices.Delete(live, j, j+1)
				case rng.IntN(30) == 0: // a retraction before its insertion
					row := []any{int64(rng.IntN(3)), int64(rng.IntN(vmax)), int64(rng.IntN(4))}
					rows, ws = append(rows, row), append(ws, -1)
				default:
					row := []any{int64(rng.IntN(3)), int64(rng.IntN(vmax)), int64(rng.IntN(4))}
					n := int64(1)
					if rng.IntN(8) == 0 {
						n = 2
					}
					rows, ws = append(rows, row), append(ws, n)
					for range n {
						live = append(live, row)
					}
				}
			}
			b := RowsToBatch(rows, ts)
			b.W = ws
			if err := r.Push(0, Msg{Kind: MsgBatch, Batch: b}); err != nil {
				t.Fatal(err)
			}
			m.apply(rows, ws)
			if got, want := out.String(), m.ranked(r).String(); got != want {
				t.Fatalf("seed %d (%v limit %d from %d), batch %d:\ngot\n%s\nwant\n%s", seed, fn, limit, from, bi, got, want)
			}
			if bi == batches/2 {
				r.SaveState(&StateWriter{})
				r = newRanker()
				if err := r.LoadState(&StateReader{}); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

// TestRankerRetriesFailedPartitions: when ranking one partition fails (a SUM out of range,
// with no Errs to take it), the partitions not yet emitted stay dirty: once the failing one
// ranks again (its overflowing row retracted), the next batch emits them too.
func TestRankerRetriesFailedPartitions(t *testing.T) {
	ts := []types.T{types.TBigInt, types.TBigInt}
	out := &changeSum{m: map[string]int64{}}
	r := &Ranker{Fn: WinSum, PartCols: []int{0}, Order: []SortKey{{Col: 1}}, Types: ts, Arg: 1,
		ResultT: types.TBigInt, Limit: -1, Out: Output{Op: out}}
	push := func(w int64, rows ...[]any) error {
		b := RowsToBatch(rows, ts)
		b.W = make([]int64, b.N)
		for i := range b.W {
			b.W[i] = w
		}
		return r.Push(0, Msg{Kind: MsgBatch, Batch: b})
	}
	// Partition 1 sorts first and overflows; partition 2 is ranked after it.
	if err := push(1, []any{int64(1), int64(math.MaxInt64)}, []any{int64(1), int64(1)}, []any{int64(2), int64(5)}); err == nil {
		t.Fatal("no error for a SUM out of range")
	}
	if err := push(-1, []any{int64(1), int64(math.MaxInt64)}); err != nil {
		t.Fatal(err)
	}
	want := "[1 1 1] x1\n[2 5 5] x1"
	if got := out.String(); got != want {
		t.Fatalf("emitted\n%s\nwant\n%s", got, want)
	}
}
