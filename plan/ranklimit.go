package plan

import (
	"math"

	"github.com/streamsql/streamsql/exec"
)

// newFilter is a Filter of in by pred. A conjunct of pred that bounds a ranking function's
// number from above — Flink's Top-N, `WHERE rn <= n` (or rn < n, rn = n) over ROW_NUMBER,
// RANK or DENSE_RANK, reached through projections and other filters — also bounds the Rank
// (Rank.Limit): the rows it numbers beyond n are the ones pred drops, so the Rank keeps its
// partitions' rows in order and emits only the first, and a change costs the logarithm of a
// partition's rows, not a ranking of all of them.
func newFilter(in Node, pred exec.Expr) *Filter {
	for _, vb := range exec.ValueBounds(pred) {
		if vb.Hi != math.MaxInt64 {
			limitRank(in, vb.Col, max(vb.Hi, 0))
		}
	}
	return &Filter{Input: in, Pred: pred}
}

// limitRank sets the Limit of the Rank whose number is column col of n, if n passes that
// column straight from it, to at most hi.
func limitRank(n Node, col int, hi int64) {
	for {
		switch x := n.(type) {
		case *Filter:
			n = x.Input
		case *Project:
			ref, ok := x.Exprs[col].(*exec.ColRef)
			if !ok {
				return
			}
			n, col = x.Input, ref.Idx
		case *Rank:
			ranking := x.Fn == exec.RowNumber || x.Fn == exec.Rank || x.Fn == exec.DenseRank
			if !ranking || x.NumberHidden || col != len(x.Schema())-1 {
				return
			}
			if x.Limit < 0 || hi < x.Limit {
				x.Limit = hi
			}
			return
		default:
			return
		}
	}
}
