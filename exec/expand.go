package exec

import (
	"slices"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/types"
)

// Expand copies each row once per grouping set (GROUP BY GROUPING SETS, ROLLUP, CUBE), for
// the aggregate above it: in set s's copy the key columns (the first NumKeys) that Sets[s]
// does not keep are NULL, and a BIGINT column holding s follows the keys, so that the groups
// of different sets stay apart. A row's copies follow it, so watermarks keep their order;
// weights are copied. Expand keeps no state.
type Expand struct {
	NumKeys int
	Sets    [][]int
	Types   []types.T // the input's column types
	Out     Output
}

var _ Operator = (*Expand)(nil)

// Push implements Operator.
func (e *Expand) Push(_ int, m Msg) error {
	if m.Kind != MsgBatch {
		return e.Out.Emit(m)
	}
	b := m.Batch
	k := len(e.Sets)
	n := b.N * k
	rep := make([]int32, n) // row i's copies
	gid := make([]int64, n)
	for i := 0; i < b.N; i++ {
		for s := range k {
			rep[i*k+s], gid[i*k+s] = int32(i), int64(s)
		}
	}
	out := &Batch{N: n, Cols: make([]arrow.Array, 0, len(b.Cols)+1)}
	keeps := make([]bool, k) // whether each set keeps key c
	for c := 0; c < e.NumKeys; c++ {
		for s, set := range e.Sets {
			keeps[s] = slices.Contains(set, c)
		}
		if !slices.Contains(keeps, false) {
			out.Cols = append(out.Cols, TakeArray(b.Cols[c], rep, e.Types[c]))
			continue
		}
		bl := NewBuilder(e.Types[c], n)
		for i := 0; i < b.N; i++ {
			for _, keep := range keeps {
				if keep {
					bl.AppendFrom(b.Cols[c], i)
				} else {
					bl.Append(nil)
				}
			}
		}
		out.Cols = append(out.Cols, bl.Finish())
	}
	out.Cols = append(out.Cols, NewInt64(gid, nil))
	for c := e.NumKeys; c < len(b.Cols); c++ {
		out.Cols = append(out.Cols, TakeArray(b.Cols[c], rep, e.Types[c]))
	}
	if b.W != nil {
		out.W = make([]int64, n)
		for i, j := range rep {
			out.W[i] = b.W[j]
		}
	}
	if b.WM != nil {
		out.WM = make([]int64, n)
		for i, j := range rep {
			out.WM[i] = b.WM[j]
		}
	}
	return e.Out.EmitBatch(out)
}
