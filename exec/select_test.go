package exec

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/types"
)

// SelectTrue keeps exactly the TRUE rows, in order, for any mix of TRUE, FALSE and NULL,
// any length and any offset into the bitmaps (a sliced array).
func TestSelectTrue(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for iter := range 500 {
		n := rng.IntN(200)
		pTrue, pNull := rng.Float64(), rng.Float64()*float64(iter%2)
		bl := array.NewBooleanBuilder(memory.DefaultAllocator)
		for range n {
			if rng.Float64() < pNull {
				bl.AppendNull()
			} else {
				bl.Append(rng.Float64() < pTrue)
			}
		}
		full := bl.NewBooleanArray()
		lo := rng.IntN(n + 1)
		hi := lo + rng.IntN(n-lo+1)
		a := array.NewSlice(full, int64(lo), int64(hi)).(*array.Boolean)
		var want []int32
		for i := 0; i < a.Len(); i++ {
			if a.IsValid(i) && a.Value(i) {
				want = append(want, int32(i))
			}
		}
		if got := SelectTrue(a); !slices.Equal(got, want) {
			t.Fatalf("rows %d..%d of %d: got %v, want %v", lo, hi, n, got, want)
		}
	}
}

func BenchmarkSelectTrue(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, p := range []float64{0.01, 0.5, 0.99} {
		bl := array.NewBooleanBuilder(memory.DefaultAllocator)
		for range 64 << 10 {
			bl.Append(rng.Float64() < p)
		}
		a := bl.NewBooleanArray()
		b.Run(map[float64]string{0.01: "1%", 0.5: "50%", 0.99: "99%"}[p], func(b *testing.B) {
			for b.Loop() {
				SelectTrue(a)
			}
		})
	}
}

// batchOut keeps the batches pushed to it.
type batchOut struct{ bs []*Batch }

func (o *batchOut) Push(_ int, m Msg) error {
	if m.Kind == MsgBatch {
		o.bs = append(o.bs, m.Batch)
	}
	return nil
}

// A Filter with Keep forwards only the kept columns, in Keep's order (one twice here), with
// the weights and watermarks of the rows it selects: when it drops rows and when it keeps
// them all.
func TestFilterKeep(t *testing.T) {
	ts := []types.T{types.TBigInt, types.TVarchar, types.TBigInt}
	in := RowsToBatch([][]any{{int64(1), "a", int64(10)}, {int64(2), "b", int64(20)}, {int64(3), "c", int64(30)}}, ts)
	in.W, in.WM = []int64{1, -1, 2}, []int64{100, 200, 300}
	for _, tc := range []struct {
		cut  int64
		rows string
		w    string
	}{
		{cut: 1, rows: "[[20 b 20] [30 c 30]]", w: "[-1 2] [200 300]"},
		{cut: 0, rows: "[[10 a 10] [20 b 20] [30 c 30]]", w: "[1 -1 2] [100 200 300]"},
	} {
		out := &batchOut{}
		pred, err := newCompare(">", &ColRef{Idx: 0, T: types.TBigInt}, &Const{V: tc.cut, T: types.TBigInt})
		if err != nil {
			t.Fatal(err)
		}
		f := &Filter{Pred: pred, Types: ts, Keep: []int{2, 1, 2}, Out: Output{Op: out}}
		if err := f.Push(0, Msg{Kind: MsgBatch, Batch: in}); err != nil {
			t.Fatal(err)
		}
		if len(out.bs) != 1 || len(out.bs[0].Cols) != 3 {
			t.Fatalf("cut %d: got %d batches", tc.cut, len(out.bs))
		}
		b := out.bs[0]
		var rows [][]any
		for i := 0; i < b.N; i++ {
			rows = append(rows, b.Row(i))
		}
		if got := fmt.Sprint(rows); got != tc.rows {
			t.Errorf("cut %d: rows %s, want %s", tc.cut, got, tc.rows)
		}
		if got := fmt.Sprint(b.W, " ", b.WM); got != tc.w {
			t.Errorf("cut %d: weights and watermarks %s, want %s", tc.cut, got, tc.w)
		}
	}
}

// borrowOut is a Borrower that copies the rows pushed to it and notes the memory of their
// first column.
type borrowOut struct {
	rows [][]any
	mem  []*int64
}

func (o *borrowOut) Borrows() bool { return true }

func (o *borrowOut) Push(_ int, m Msg) error {
	if m.Kind == MsgBatch {
		for i := 0; i < m.Batch.N; i++ {
			o.rows = append(o.rows, m.Batch.Row(i))
		}
		o.mem = append(o.mem, &Int64s(m.Batch.Cols[0])[0])
	}
	return nil
}

// A filter feeding a Borrower gathers each batch into the memory of the one before; one
// feeding any other operator gives each batch memory of its own, which later batches leave
// alone.
func TestFilterReusesMemoryOnlyForBorrowers(t *testing.T) {
	ts := []types.T{types.TBigInt, types.TVarchar}
	batch := func(base int64) *Batch {
		return RowsToBatch([][]any{{base, "a"}, {base + 1, "b"}, {base + 2, "c"}, {base + 3, "d"}}, ts)
	}
	odd, err := newArith("%", &ColRef{Idx: 0, T: types.TBigInt}, &Const{V: int64(2), T: types.TBigInt})
	if err != nil {
		t.Fatal(err)
	}
	pred, err := newCompare("=", odd, &Const{V: int64(1), T: types.TBigInt})
	if err != nil {
		t.Fatal(err)
	}
	b := &borrowOut{}
	kept := &batchOut{}
	for _, out := range []Operator{b, kept} {
		f := &Filter{Pred: pred, Types: ts, Out: Output{Op: out}}
		for _, base := range []int64{10, 20, 30} {
			if err := f.Push(0, Msg{Kind: MsgBatch, Batch: batch(base)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if got := fmt.Sprint(b.rows); got != "[[11 b] [13 d] [21 b] [23 d] [31 b] [33 d]]" {
		t.Errorf("borrower got %s", got)
	}
	if b.mem[0] != b.mem[1] || b.mem[1] != b.mem[2] {
		t.Error("the filter did not reuse its memory for a borrower")
	}
	var rows [][]any
	for _, x := range kept.bs {
		for i := 0; i < x.N; i++ {
			rows = append(rows, x.Row(i))
		}
	}
	if got := fmt.Sprint(rows); got != "[[11 b] [13 d] [21 b] [23 d] [31 b] [33 d]]" {
		t.Errorf("after three batches, the batches kept read %s", got)
	}
}

// A batch join with Need gathers only the needed output columns of matched pairs (the
// others are NULL arrays), from either side, whichever side arrives first; padded rows of
// an outer join are whole.
func TestJoinNeed(t *testing.T) {
	lt := []types.T{types.TBigInt, types.TVarchar, types.TBigInt} // k, s, v
	rt := []types.T{types.TBigInt, types.TBigInt}                 // k, g
	left := RowsToBatch([][]any{{int64(1), "a", int64(10)}, {int64(2), "b", int64(20)}, {int64(3), "c", int64(30)}}, lt)
	right := RowsToBatch([][]any{{int64(1), int64(100)}, {int64(2), int64(200)}}, rt)
	for _, leftFirst := range []bool{true, false} {
		out := &batchOut{}
		j := &HashJoin{Kind: JoinLeft, LeftKeys: []int{0}, RightKeys: []int{0}, LeftT: lt, RightT: rt, Batch: true,
			Need: []bool{false, false, true, false, true}, Out: Output{Op: out}}
		order := []int{1, 0}
		if leftFirst {
			order = []int{0, 1}
		}
		for _, port := range order {
			b := right
			if port == 0 {
				b = left
			}
			if err := j.Push(port, Msg{Kind: MsgBatch, Batch: b}); err != nil {
				t.Fatal(err)
			}
		}
		for _, port := range order {
			if err := j.Push(port, Msg{Kind: MsgEnd}); err != nil {
				t.Fatal(err)
			}
		}
		var rows []string
		for _, b := range out.bs {
			for i := 0; i < b.N; i++ {
				rows = append(rows, fmt.Sprint(b.Row(i)))
			}
		}
		slices.Sort(rows)
		if got := fmt.Sprint(rows); got != "[[3 c 30 <nil> <nil>] [<nil> <nil> 10 <nil> 100] [<nil> <nil> 20 <nil> 200]]" {
			t.Errorf("left first %v: %s", leftFirst, got)
		}
	}
}

// Concat takes a column of NULLs that comes as a NULL array, in an int64 or float64 column,
// as NULL rows.
func TestConcatNullArray(t *testing.T) {
	ts := []types.T{types.TBigInt, types.TDouble}
	a := RowsToBatch([][]any{{int64(1), 1.5}}, ts)
	b := &Batch{N: 2, Cols: []arrow.Array{array.NewNull(2), array.NewNull(2)}}
	if got := fmt.Sprint(Concat([]*Batch{a, b}, ts).Row(2)); got != "[<nil> <nil>]" {
		t.Errorf("row 2 = %s, want [<nil> <nil>]", got)
	}
}
