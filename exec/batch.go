package exec

import (
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/types"
)

// Mem is the allocator of the engine's arrays.
var Mem memory.Allocator = memory.DefaultAllocator

// Batch is a set of weighted rows in columnar form. Columns hold the physical
// representation of their logical type (types.Phys): *array.Int64, *array.Float64,
// *array.Boolean or *array.String.
type Batch struct {
	Cols []arrow.Array
	N    int
	// W holds each row's weight; nil means every row has weight +1.
	W []int64
	// WM, when not nil, holds for each row the watermark in force just before the row was
	// accepted by its source table (SPEC.md §3: lateness is judged against the watermark
	// before the row); a retraction carries the watermark before its statement.
	WM []int64
	// Runs, when not nil, gives the rows' windows, run by run, for a window aggregate that
	// reads its input's window columns only as its window_start and window_end keys
	// (window.Assign's RunsOnly): rows [Runs[i-1].To, Runs[i].To) are in window
	// [Runs[i].Start, Runs[i].End). The window columns then hold no values (NULL arrays):
	// only a Project of column references (which cannot fail a row) passes such a batch on,
	// and only HashAgg reads it.
	Runs []WindowRun
	// Lanes, with Runs, is how many times the rows repeat (HOP: each row once per window it
	// is in, its newest window's lane first): the rows in Runs' terms are lane 0's N, then
	// lane 1's, ..., lane l's row i being row i. 0 means 1.
	Lanes int
	// Updates marks an upsert table's change, whose replaced versions each come right before
	// the version replacing them: a retraction followed by an insertion is one row's update,
	// which an operator whose state depends on order (a SESSION) takes as one change. A
	// replay of the table makes the same batch, so views and their backfill agree.
	Updates bool
}

// lanes is how many times b's rows repeat (Batch.Lanes), at least 1.
func (b *Batch) lanes() int { return max(1, b.Lanes) }

// WindowRun is a run of rows in one window (Batch.Runs).
type WindowRun struct {
	To         int
	Start, End int64
}

// Weight returns the weight of row i.
func (b *Batch) Weight(i int) int64 {
	if b.W == nil {
		return 1
	}
	return b.W[i]
}

// MemSize is the bytes b's rows take in memory — its columns' values, validity bitmaps and
// string offsets for its rows alone (a column sliced from a larger array is charged its
// slice), weights and watermarks included.
func (b *Batch) MemSize() int64 {
	n := int64(8 * (len(b.W) + len(b.WM)))
	for _, c := range b.Cols {
		rows := int64(c.Len())
		if c.NullN() > 0 {
			n += (rows + 7) / 8
		}
		switch a := c.(type) {
		case *array.Int64, *array.Float64:
			n += 8 * rows
		case *array.Boolean:
			n += (rows + 7) / 8
		case *array.String:
			n += 4 * (rows + 1)
			if offs := a.ValueOffsets(); len(offs) > 0 {
				n += int64(offs[len(offs)-1] - offs[0])
			}
		default:
			for _, buf := range c.Data().Buffers() {
				if buf != nil {
					n += int64(buf.Len())
				}
			}
		}
	}
	return n
}

// MsgKind tells what a Msg carries.
type MsgKind uint8

// Message kinds.
const (
	MsgBatch MsgKind = iota
	MsgWatermark
	MsgEnd
)

// Msg is the one in-band message type.
type Msg struct {
	Kind      MsgKind
	Batch     *Batch
	Watermark int64
}

// Operator is the contract every operator implements; see the package documentation.
type Operator interface {
	Push(port int, m Msg) error
}

// Output is where an operator sends its results: an operator and its input port.
type Output struct {
	Op   Operator
	Port int
}

// Emit pushes m downstream.
func (o Output) Emit(m Msg) error { return o.Op.Push(o.Port, m) }

// EmitBatch pushes a non-empty batch downstream.
func (o Output) EmitBatch(b *Batch) error {
	if b == nil || b.N == 0 {
		return nil
	}
	return o.Op.Push(o.Port, Msg{Kind: MsgBatch, Batch: b})
}

// Int64s returns the values of an int64 column (nulls hold unspecified values).
func Int64s(a arrow.Array) []int64 { return a.(*array.Int64).Int64Values() }

// Float64s returns the values of a float64 column.
func Float64s(a arrow.Array) []float64 { return a.(*array.Float64).Float64Values() }

// Value returns row i of a physical column as int64, float64, bool, string or nil.
func Value(a arrow.Array, i int) any {
	if a.IsNull(i) {
		return nil
	}
	switch c := a.(type) {
	case *array.Int64:
		return c.Value(i)
	case *array.Float64:
		return c.Value(i)
	case *array.Boolean:
		return c.Value(i)
	case *array.String:
		return c.Value(i)
	case *array.Null:
		return nil
	}
	panic(fmt.Sprintf("exec: unexpected array type %T", a))
}

// Builder accumulates physical values of one type into an Arrow array.
type Builder struct {
	T types.T
	b array.Builder
}

// NewBuilder returns a builder for type t.
func NewBuilder(t types.T, capacity int) *Builder {
	b := array.NewBuilder(Mem, t.ArrowType())
	b.Reserve(capacity)
	return &Builder{T: t, b: b}
}

// Append adds one physical value (nil for NULL).
func (b *Builder) Append(v any) {
	if v == nil {
		b.b.AppendNull()
		return
	}
	switch x := b.b.(type) {
	case *array.Int64Builder:
		x.Append(v.(int64))
	case *array.Float64Builder:
		x.Append(v.(float64))
	case *array.BooleanBuilder:
		x.Append(v.(bool))
	case *array.StringBuilder:
		x.Append(v.(string))
	}
}

// AppendFrom adds row i of column a, which must have the builder's physical type.
func (b *Builder) AppendFrom(a arrow.Array, i int) {
	if a.IsNull(i) {
		b.b.AppendNull()
		return
	}
	switch x := b.b.(type) {
	case *array.Int64Builder:
		x.Append(a.(*array.Int64).Value(i))
	case *array.Float64Builder:
		x.Append(a.(*array.Float64).Value(i))
	case *array.BooleanBuilder:
		x.Append(a.(*array.Boolean).Value(i))
	case *array.StringBuilder:
		x.Append(a.(*array.String).Value(i))
	}
}

// Len is the number of values appended so far.
func (b *Builder) Len() int { return b.b.Len() }

// Finish returns the built array and resets the builder.
func (b *Builder) Finish() arrow.Array { return b.b.NewArray() }

// ConstArray returns an array of n copies of the physical value v of type t.
func ConstArray(t types.T, v any, n int) arrow.Array {
	switch t.Phys() {
	case types.PhysInt64:
		vals := make([]int64, n)
		if v == nil {
			return array.NewInt64Data(array.NewData(arrow.PrimitiveTypes.Int64, n, []*memory.Buffer{nullBitmap(n), memory.NewBufferBytes(arrow.Int64Traits.CastToBytes(vals))}, nil, n, 0))
		}
		x := v.(int64)
		for i := range vals {
			vals[i] = x
		}
		return array.NewInt64Data(array.NewData(arrow.PrimitiveTypes.Int64, n, []*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int64Traits.CastToBytes(vals))}, nil, 0, 0))
	case types.PhysFloat64:
		vals := make([]float64, n)
		if v == nil {
			return array.NewFloat64Data(array.NewData(arrow.PrimitiveTypes.Float64, n, []*memory.Buffer{nullBitmap(n), memory.NewBufferBytes(arrow.Float64Traits.CastToBytes(vals))}, nil, n, 0))
		}
		x := v.(float64)
		for i := range vals {
			vals[i] = x
		}
		return array.NewFloat64Data(array.NewData(arrow.PrimitiveTypes.Float64, n, []*memory.Buffer{nil, memory.NewBufferBytes(arrow.Float64Traits.CastToBytes(vals))}, nil, 0, 0))
	}
	b := NewBuilder(t, n)
	for i := 0; i < n; i++ {
		b.Append(v)
	}
	return b.Finish()
}

func nullBitmap(n int) *memory.Buffer {
	return memory.NewBufferBytes(make([]byte, (n+7)/8))
}

// NewInt64 wraps vals (not copied) as an array; valid, when not nil, marks non-null rows.
func NewInt64(vals []int64, valid []bool) arrow.Array {
	bm, nulls := bitmapOf(valid, len(vals))
	return array.NewInt64Data(array.NewData(arrow.PrimitiveTypes.Int64, len(vals), []*memory.Buffer{bm, memory.NewBufferBytes(arrow.Int64Traits.CastToBytes(vals))}, nil, nulls, 0))
}

// NewFloat64 wraps vals (not copied) as an array; valid, when not nil, marks non-null rows.
func NewFloat64(vals []float64, valid []bool) arrow.Array {
	bm, nulls := bitmapOf(valid, len(vals))
	return array.NewFloat64Data(array.NewData(arrow.PrimitiveTypes.Float64, len(vals), []*memory.Buffer{bm, memory.NewBufferBytes(arrow.Float64Traits.CastToBytes(vals))}, nil, nulls, 0))
}

func bitmapOf(valid []bool, n int) (*memory.Buffer, int) {
	if valid == nil {
		return nil, 0
	}
	bm := make([]byte, (n+7)/8)
	nulls := 0
	for i, ok := range valid[:n] {
		if ok {
			bm[i>>3] |= 1 << (i & 7)
		} else {
			nulls++
		}
	}
	if nulls == 0 {
		return nil, 0
	}
	return memory.NewBufferBytes(bm), nulls
}

// Take returns a batch of the rows of b at the given indices, in that order.
func Take(b *Batch, idx []int32, types []types.T) *Batch { return takeReusing(b, idx, types, nil) }

// takeReusing is Take gathering int64 columns into the memory of (*bufs)[c], grown as
// needed, when bufs is not nil: the result is valid until the caller passes bufs again.
func takeReusing(b *Batch, idx []int32, types []types.T, bufs *[][]int64) *Batch {
	out := &Batch{N: len(idx), Cols: make([]arrow.Array, len(b.Cols))}
	for c, col := range b.Cols {
		x, ok := col.(*array.Int64)
		if !ok || bufs == nil {
			out.Cols[c] = TakeArray(col, idx, types[c])
			continue
		}
		for len(*bufs) <= c {
			*bufs = append(*bufs, nil)
		}
		vals := slices.Grow((*bufs)[c][:0], len(idx))[:len(idx)]
		gatherInt64(vals, x.Int64Values(), idx)
		(*bufs)[c] = vals
		out.Cols[c] = NewInt64(vals, takeValid(col, idx))
	}
	if b.W != nil {
		out.W = make([]int64, len(idx))
		for i, j := range idx {
			out.W[i] = b.W[j]
		}
	}
	if b.WM != nil {
		out.WM = make([]int64, len(idx))
		for i, j := range idx {
			out.WM[i] = b.WM[j]
		}
	}
	return out
}

// TakeArray gathers the values of a at idx.
func TakeArray(a arrow.Array, idx []int32, t types.T) arrow.Array {
	switch c := a.(type) {
	case *array.Int64:
		vals := make([]int64, len(idx))
		gatherInt64(vals, c.Int64Values(), idx)
		return NewInt64(vals, takeValid(a, idx))
	case *array.Float64:
		src := c.Float64Values()
		vals := make([]float64, len(idx))
		for i, j := range idx {
			vals[i] = src[j]
		}
		return NewFloat64(vals, takeValid(a, idx))
	}
	b := NewBuilder(t, len(idx))
	for _, j := range idx {
		b.AppendFrom(a, int(j))
	}
	return b.Finish()
}

// unweighted returns b's rows each repeated by its weight (a row of weight 0 or less left
// out), with no weights: b itself when it has none.
func unweighted(b *Batch, ts []types.T) *Batch {
	if b.W == nil {
		return b
	}
	var idx []int32
	for i, w := range b.W {
		for k := w; k > 0; k-- {
			idx = append(idx, int32(i))
		}
	}
	return Take(&Batch{N: b.N, Cols: b.Cols}, idx, ts)
}

// gatherInt64 sets vals[i] to src[idx[i]].
func gatherInt64(vals, src []int64, idx []int32) {
	for i, j := range idx {
		vals[i] = src[j]
	}
}

func takeValid(a arrow.Array, idx []int32) []bool {
	if a.NullN() == 0 {
		return nil
	}
	valid := make([]bool, len(idx))
	for i, j := range idx {
		valid[i] = a.IsValid(int(j))
	}
	return valid
}

// Concat appends batches into one; all must have the same column types.
func Concat(bs []*Batch, ts []types.T) *Batch {
	if len(bs) == 1 {
		return bs[0]
	}
	n := 0
	weighted, timed := false, false
	for _, b := range bs {
		n += b.N
		weighted = weighted || b.W != nil
		timed = timed || b.WM != nil
	}
	out := &Batch{N: n, Cols: make([]arrow.Array, len(ts))}
	for c, t := range ts {
		out.Cols[c] = concatColumn(bs, c, t, n)
	}
	if weighted {
		out.W = make([]int64, 0, n)
		for _, b := range bs {
			for i := 0; i < b.N; i++ {
				out.W = append(out.W, b.Weight(i))
			}
		}
	}
	if timed {
		out.WM = make([]int64, 0, n)
		for _, b := range bs {
			for i := 0; i < b.N; i++ {
				if b.WM != nil {
					out.WM = append(out.WM, b.WM[i])
				} else {
					out.WM = append(out.WM, NoWatermark)
				}
			}
		}
	}
	return out
}

// concatColumn joins column c of the batches; fixed-width columns are copied as slices.
func concatColumn(bs []*Batch, c int, t types.T, n int) arrow.Array {
	nulls := false
	for _, b := range bs {
		nulls = nulls || b.Cols[c].NullN() > 0
	}
	var valid []bool
	if nulls {
		valid = make([]bool, 0, n)
		for _, b := range bs {
			_, none := b.Cols[c].(*array.Null)
			for i := 0; i < b.N; i++ {
				valid = append(valid, !none && b.Cols[c].IsValid(i))
			}
		}
	}
	// A column of NULLs may come as a NULL array (a NULL literal's, a placeholder's): its rows
	// take the zero value, their validity saying NULL.
	switch t.Phys() {
	case types.PhysInt64:
		vals := make([]int64, 0, n)
		for _, b := range bs {
			if _, none := b.Cols[c].(*array.Null); none {
				vals = append(vals, make([]int64, b.N)...)
				continue
			}
			vals = append(vals, Int64s(b.Cols[c])[:b.N]...)
		}
		return NewInt64(vals, valid)
	case types.PhysFloat64:
		vals := make([]float64, 0, n)
		for _, b := range bs {
			if _, none := b.Cols[c].(*array.Null); none {
				vals = append(vals, make([]float64, b.N)...)
				continue
			}
			vals = append(vals, Float64s(b.Cols[c])[:b.N]...)
		}
		return NewFloat64(vals, valid)
	}
	bl := NewBuilder(t, n)
	for _, b := range bs {
		for i := 0; i < b.N; i++ {
			bl.AppendFrom(b.Cols[c], i)
		}
	}
	return bl.Finish()
}

// NoWatermark is the watermark before any row: nothing is late against it.
const NoWatermark int64 = -1 << 63

// Row returns row i of b as physical values.
func (b *Batch) Row(i int) []any {
	r := make([]any, len(b.Cols))
	for c, col := range b.Cols {
		r[c] = Value(col, i)
	}
	return r
}
