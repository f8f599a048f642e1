package exec

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/exec/exectest"
	"github.com/streamsql/streamsql/types"
)

type revLog struct{ lines []string }

func (l *revLog) Push(_ int, m Msg) error {
	switch m.Kind {
	case MsgBatch:
		for i := 0; i < m.Batch.N; i++ {
			l.lines = append(l.lines, fmt.Sprint(m.Batch.Row(i), m.Batch.Weight(i)))
		}
	case MsgWatermark:
		l.lines = append(l.lines, fmt.Sprint("wm ", m.Watermark))
	}
	return nil
}

type revCfg struct {
	fn                     RankFunc
	limit, from            int64
	hidden, windowed, eowc bool
	order                  []SortKey
	negatives, late        bool
}

type revStep struct {
	rows [][]any
	ws   []int64
	wm   int64 // >= 0: a watermark instead
}

// columns: 0 partition, 1 window end, 2 key a (nullable), 3 key b, 4 payload
var revTypes = []types.T{types.TBigInt, types.TBigInt, types.TBigInt, types.TBigInt, types.TBigInt}

func revGen(rng *rand.Rand, c revCfg) []revStep {
	var steps []revStep
	var live [][]any
	nb := 5 + rng.IntN(30)
	vmax := 1 + rng.IntN(8)
	if rng.IntN(6) == 0 {
		vmax = 400
		nb = 40
	}
	wend := int64(10)
	for bi := 0; bi < nb; bi++ {
		if c.windowed && rng.IntN(4) == 0 {
			wm := wend - 1 + int64(rng.IntN(3)) - 1
			steps = append(steps, revStep{wm: wm})
			if rng.IntN(2) == 0 {
				wend += 10
			}
			if !c.late { // rows behind the watermark are dropped upstream
				for wend-1 <= wm {
					wend += 10
				}
				live = slices.DeleteFunc(live, func(r []any) bool { return r[1].(int64)-1 <= wm })
			}
			continue
		}
		var st revStep
		st.wm = -1
		n := 1 + rng.IntN(3*vmax+10)
		for range n {
			mk := func() []any {
				var a any = int64(rng.IntN(vmax))
				if rng.IntN(10) == 0 {
					a = nil
				}
				we := wend
				if c.windowed && rng.IntN(3) == 0 {
					we += 10
				}
				return []any{int64(rng.IntN(2)), we, a, int64(rng.IntN(3)), int64(rng.IntN(3))}
			}
			switch {
			case len(live) > 0 && rng.IntN(3) == 0:
				j := rng.IntN(len(live))
				row := live[j]
				st.rows, st.ws = append(st.rows, row), append(st.ws, -1)
				live = slices.Delete(live, j, j+1)
				if rng.IntN(3) == 0 { // and back in the same batch
					st.rows, st.ws = append(st.rows, row), append(st.ws, 1)
					live = append(live, row)
				}
			case c.negatives && rng.IntN(20) == 0:
				st.rows, st.ws = append(st.rows, mk()), append(st.ws, -1)
			default:
				row := mk()
				st.rows, st.ws = append(st.rows, row), append(st.ws, 1)
				live = append(live, row)
			}
		}
		steps = append(steps, st)
	}
	return steps
}

func revNew(c revCfg, out Operator, store exectest.Store) *Ranker {
	r := &Ranker{Fn: c.fn, PartCols: []int{0, 1}, Order: c.order, Types: revTypes, Arg: 4, Offset: 1,
		ResultT: types.TBigInt, Limit: c.limit, NumberHidden: c.hidden, From: c.from,
		Windowed: c.windowed, WindowEnd: 1, EmitOnClose: c.eowc, Out: Output{Op: out}}
	if store != nil {
		r.Attach(store)
	}
	return r
}

func revConfig(rng *rand.Rand) revCfg {
	c := revCfg{limit: -1}
	c.fn = []RankFunc{RowNumber, Rank, DenseRank, Lag, WinSum}[rng.IntN(5)]
	if c.fn <= DenseRank && rng.IntN(5) > 0 {
		c.limit = int64(rng.IntN(6))
	}
	if c.fn == RowNumber && c.limit >= 0 && rng.IntN(2) == 0 {
		c.hidden, c.from = true, int64(rng.IntN(3))
	}
	c.windowed = rng.IntN(2) == 0
	c.eowc = c.windowed && rng.IntN(2) == 0
	c.order = []SortKey{{Col: 2, Desc: rng.IntN(2) == 0, Nulls: NullOrder(rng.IntN(3))}}
	if rng.IntN(2) == 0 {
		c.order = append(c.order, SortKey{Col: 3, Desc: rng.IntN(2) == 0})
	}
	return c
}

func revMsg(st revStep) Msg {
	if st.wm >= 0 {
		return Msg{Kind: MsgWatermark, Watermark: st.wm}
	}
	b := RowsToBatch(st.rows, revTypes)
	b.W = st.ws
	return Msg{Kind: MsgBatch, Batch: b}
}

// TestRankerRestoreEquivalence: a Ranker saved and restored at random points emits
// exactly what an uninterrupted one emits.
func TestRankerRestoreEquivalence(t *testing.T) {
	for seed := uint64(0); seed < 100; seed++ {
		rng := rand.New(rand.NewPCG(seed, 11))
		c := revConfig(rng)
		c.negatives = rng.IntN(2) == 0
		c.late = rng.IntN(2) == 0
		steps := revGen(rng, c)
		a, b := &revLog{}, &revLog{}
		ra := revNew(c, a, exectest.Store{})
		store := exectest.Store{}
		rb := revNew(c, b, store)
		for si, st := range steps {
			if err := ra.Push(0, revMsg(st)); err != nil {
				t.Fatal(err)
			}
			if err := rb.Push(0, revMsg(st)); err != nil {
				t.Fatal(err)
			}
			if rng.IntN(3) == 0 {
				rb.SaveState(&StateWriter{})
				rb = revNew(c, b, store)
				if err := rb.LoadState(&StateReader{}); err != nil {
					t.Fatal(err)
				}
			}
			if d := revDiff(b.lines, a.lines); d != "" {
				t.Fatalf("seed %d %+v step %d: restored vs uninterrupted\n%s", seed, c, si, d)
			}
		}
		ra.SaveState(&StateWriter{})
	}
}

func revDiff(got, want []string) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	if i == len(got) && i == len(want) {
		return ""
	}
	lo := max(0, i-3)
	return fmt.Sprintf("first difference at line %d of %d/%d\ngot:\n%s\nwant:\n%s", i, len(got), len(want),
		strings.Join(got[lo:min(len(got), i+8)], "\n"), strings.Join(want[lo:min(len(want), i+8)], "\n"))
}
