package exec

import (
	"strings"
	"testing"

	"github.com/streamsql/streamsql/exec/exectest"
	"github.com/streamsql/streamsql/types"
)

// TestEOWCDropLeavesNoRowEntries: an EMIT ON WINDOW CLOSE partition holding a row
// retracted to weight 0 before a checkpoint is dropped when its window completes; the
// checkpoint after that must delete all its entries (row entries must not outlive it).
func TestEOWCDropLeavesNoRowEntries(t *testing.T) {
	ts := []types.T{types.TBigInt, types.TBigInt}
	store := exectest.Store{}
	out := &revLog{}
	r := &Ranker{Fn: RowNumber, PartCols: []int{0}, Order: []SortKey{{Col: 1}}, Types: ts,
		ResultT: types.TBigInt, Limit: 3, Windowed: true, WindowEnd: 0, EmitOnClose: true, Out: Output{Op: out}}
	r.Attach(store)
	push := func(rows [][]any, ws []int64) {
		b := RowsToBatch(rows, ts)
		b.W = ws
		if err := r.Push(0, Msg{Kind: MsgBatch, Batch: b}); err != nil {
			t.Fatal(err)
		}
	}
	push([][]any{{int64(10), int64(1)}, {int64(10), int64(2)}}, []int64{1, 1})
	push([][]any{{int64(10), int64(1)}}, []int64{-1}) // weight 0, not settled (EOWC)
	r.SaveState(&StateWriter{})
	if err := r.Push(0, Msg{Kind: MsgWatermark, Watermark: 9}); err != nil { // window 10 closes
		t.Fatal(err)
	}
	r.SaveState(&StateWriter{})
	if got := strings.Join(out.lines, "; "); got != "[10 2 1] 1; wm 9" {
		t.Fatalf("emitted %s", got)
	}
	if len(store) != 0 {
		var keys []string
		for k := range store {
			keys = append(keys, strings.ToValidUTF8(k, "?"))
		}
		t.Errorf("after the only partition was dropped the store keeps %d entries: %q", len(store), keys)
	}
}
