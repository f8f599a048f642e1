package exec

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sort"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/types"
)

// Filter forwards the rows for which Pred is TRUE (NULL and FALSE drop the row).
type Filter struct {
	Pred  Expr
	Types []types.T
	Errs  RowErrors
	// Keep, when not nil, is a projection of column references fused into the filter: it
	// forwards only these input columns, in this order, so that the rows it selects are
	// gathered from the columns read above it alone.
	Keep []int
	Out  Output
	// sel and ints hold the selection and the gathered int64 columns of the last batch,
	// reused for the next when Out borrows its input (see Borrower).
	sel  []int32
	ints [][]int64
}

var _ Operator = (*Filter)(nil)

// RowErrors, set on a Filter or Project, confines a data error (division by zero, overflow,
// a bad cast) to the rows that raise it: a batch whose evaluation fails is evaluated again
// row by row, each failing row is dropped and its error reported here (a failing retraction
// is dropped unreported: its row was dropped when added), and the others go on.
// A view's result then does not depend on how its input was cut into batches. Nil (queries):
// the error fails the statement.
type RowErrors func(error)

// isolate evaluates eval over b. When that fails and errs is set, it evaluates each row on
// its own, reports the errors, and returns the rows that succeeded with their results.
// outTypes are the types of eval's results.
func isolate(b *Batch, ts, outTypes []types.T, errs RowErrors, eval func(*Batch) ([]arrow.Array, error)) (*Batch, []arrow.Array, error) {
	cols, err := eval(b)
	if err == nil || errs == nil {
		return b, cols, err
	}
	var keep []int32
	var parts []*Batch
	for i := 0; i < b.N; i++ {
		c, err := eval(Take(b, []int32{int32(i)}, ts))
		if err != nil {
			// A retraction's row raised this error when it was added, and was dropped then:
			// evaluation depends on the row alone. Its retraction is dropped too, unreported.
			if b.W == nil || b.W[i] > 0 {
				errs(err)
			}
			continue
		}
		keep = append(keep, int32(i))
		parts = append(parts, &Batch{Cols: c, N: 1})
	}
	if len(keep) == 0 {
		return nil, nil, nil
	}
	return Take(b, keep, ts), Concat(parts, outTypes).Cols, nil
}

// Push implements Operator.
func (f *Filter) Push(_ int, m Msg) error {
	if m.Kind != MsgBatch {
		return f.Out.Emit(m)
	}
	b, cols, err := isolate(m.Batch, f.Types, []types.T{types.TBool}, f.Errs, func(b *Batch) ([]arrow.Array, error) {
		a, err := f.Pred.Eval(b)
		return []arrow.Array{a}, err
	})
	if err != nil || b == nil {
		return err
	}
	// An operator that borrows its input lets the filter reuse its memory from batch to
	// batch: a large allocation costs a batch more than filling it does.
	reuse := borrows(f.Out.Op)
	var sel []int32
	if reuse {
		f.sel = selectTrue(f.sel, cols[0])
		sel = f.sel
	} else {
		sel = SelectTrue(cols[0])
	}
	ts := f.Types
	if f.Keep != nil {
		kept := &Batch{N: b.N, W: b.W, WM: b.WM, Cols: make([]arrow.Array, len(f.Keep))}
		ts = make([]types.T, len(f.Keep))
		for i, c := range f.Keep {
			kept.Cols[i], ts[i] = b.Cols[c], f.Types[c]
		}
		b = kept
	}
	switch {
	case len(sel) == b.N:
		return f.Out.EmitBatch(b)
	case reuse:
		return f.Out.EmitBatch(takeReusing(b, sel, ts, &f.ints))
	}
	return f.Out.EmitBatch(Take(b, sel, ts))
}

// A Borrower reads each batch pushed to it only during Push, and keeps no reference to the
// value buffers of its int64 columns: an operator feeding it may reuse those buffers for
// its next batch.
type Borrower interface{ Borrows() bool }

func borrows(op Operator) bool {
	b, ok := op.(Borrower)
	return ok && b.Borrows()
}

// SelectTrue returns the indices of the rows of a boolean array that are TRUE. It reads the
// value and validity bitmaps a byte at a time and writes a byte's eight candidates without
// branching on its bits (selBits), keeping those the byte sets: a filter's outcome is often
// as good as random, and a branch per row would be mispredicted half the time.
func SelectTrue(a arrow.Array) []int32 { return selectTrue(nil, a) }

// selectTrue is SelectTrue into the memory of sel.
func selectTrue(sel []int32, a arrow.Array) []int32 {
	bs := a.(*array.Boolean)
	n := bs.Len()
	if n == 0 {
		return sel[:0]
	}
	// Eight past the end: a byte's candidates are all written.
	sel = slices.Grow(sel[:0], n+8)[:n+8]
	vals := bs.Data().Buffers()[1].Bytes()
	var valid []byte
	if bs.NullN() > 0 {
		valid = bs.NullBitmapBytes()
	}
	off := bs.Data().Offset()
	k := 0
	for i := 0; i < n; {
		bit := off + i
		if bit&7 == 0 && i+8 <= n {
			v := vals[bit>>3]
			if valid != nil {
				v &= valid[bit>>3]
			}
			if v != 0 {
				out, pos := sel[k:k+8:k+8], &selBits[v]
				base := int32(i)
				for j := range out {
					out[j] = base + int32(pos[j])
				}
				k += bits.OnesCount8(v)
			}
			i += 8
			continue
		}
		if vals[bit>>3]&(1<<(bit&7)) != 0 && (valid == nil || valid[bit>>3]&(1<<(bit&7)) != 0) {
			sel[k] = int32(i)
			k++
		}
		i++
	}
	return sel[:k]
}

// selBits lists, for each byte, the positions of its set bits in order (the rest 0).
var selBits = func() (t [256][8]uint8) {
	for v := range t {
		k := 0
		for j := range 8 {
			if v&(1<<j) != 0 {
				t[v][k] = uint8(j)
				k++
			}
		}
	}
	return t
}()

// Project computes one output column per expression; weights and watermarks pass through.
type Project struct {
	Exprs []Expr
	// Types are the input's column types (needed with Errs, see RowErrors).
	Types []types.T
	Errs  RowErrors
	Out   Output
}

var _ Operator = (*Project)(nil)

func (p *Project) outTypes() []types.T {
	ts := make([]types.T, len(p.Exprs))
	for i, e := range p.Exprs {
		ts[i] = e.Type()
	}
	return ts
}

// Push implements Operator.
func (p *Project) Push(_ int, m Msg) error {
	if m.Kind != MsgBatch {
		return p.Out.Emit(m)
	}
	b, cols, err := isolate(m.Batch, p.Types, p.outTypes(), p.Errs, func(b *Batch) ([]arrow.Array, error) {
		cols := make([]arrow.Array, len(p.Exprs))
		for i, e := range p.Exprs {
			a, err := e.Eval(b)
			if err != nil {
				return nil, err
			}
			cols[i] = a
		}
		return cols, nil
	})
	if err != nil || b == nil {
		return err
	}
	return p.Out.EmitBatch(&Batch{N: b.N, W: b.W, WM: b.WM, Runs: b.Runs, Lanes: b.Lanes, Updates: b.Updates, Cols: cols})
}

// Repeat multiplies each row's weight by its count column: n copies of a row, none when n
// is 0, negative or NULL (INTERSECT ALL, EXCEPT ALL).
type Repeat struct {
	Col   int
	Types []types.T
	Out   Output
}

var _ Operator = (*Repeat)(nil)

// Push implements Operator.
func (r *Repeat) Push(_ int, m Msg) error {
	if m.Kind != MsgBatch {
		return r.Out.Emit(m)
	}
	b := m.Batch
	counts := b.Cols[r.Col]
	n := Int64s(counts)
	var sel []int32
	var ws []int64
	for i := 0; i < b.N; i++ {
		if counts.IsNull(i) || n[i] <= 0 {
			continue
		}
		sel = append(sel, int32(i))
		ws = append(ws, b.Weight(i)*n[i])
	}
	if len(sel) == 0 {
		return nil
	}
	out := Take(b, sel, r.Types)
	out.W = ws
	return r.Out.EmitBatch(out)
}

// Union merges its input ports. It forwards End once every port has ended and the minimum of
// the ports' watermarks.
type Union struct {
	Ports int
	Out   Output
	ended int
	wms   []int64
}

var _ Operator = (*Union)(nil)

// Push implements Operator.
func (u *Union) Push(port int, m Msg) error {
	switch m.Kind {
	case MsgBatch:
		b := m.Batch
		if b.WM != nil && u.Ports > 1 {
			// A row is judged against the union's watermark, the minimum over its inputs:
			// the watermark before it on its own input, or less if another input is behind.
			others := int64(1<<63 - 1)
			for p := 0; p < u.Ports; p++ {
				if p != port {
					others = min(others, u.watermark(p))
				}
			}
			wm := make([]int64, b.N)
			for i, w := range b.WM {
				wm[i] = min(w, others)
			}
			b = &Batch{Cols: b.Cols, N: b.N, W: b.W, WM: wm}
		}
		return u.Out.EmitBatch(b)
	case MsgWatermark:
		if u.wms == nil {
			u.wms = make([]int64, u.Ports)
			for i := range u.wms {
				u.wms[i] = NoWatermark
			}
		}
		u.wms[port] = max(u.wms[port], m.Watermark)
		w := u.wms[0]
		for _, x := range u.wms {
			w = min(w, x)
		}
		return u.Out.Emit(Msg{Kind: MsgWatermark, Watermark: w})
	default:
		u.ended++
		if u.ended == u.Ports {
			return u.Out.Emit(m)
		}
		return nil
	}
}

// watermark is the last watermark of a port (NoWatermark before any).
func (u *Union) watermark(port int) int64 {
	if u.wms == nil {
		return NoWatermark
	}
	return u.wms[port]
}

var _ Stateful = (*Union)(nil)

// SaveState implements Stateful: the ports' watermarks.
func (u *Union) SaveState(w *StateWriter) {
	w.Int(int64(len(u.wms)))
	for _, x := range u.wms {
		w.Int(x)
	}
}

// LoadState implements Stateful.
func (u *Union) LoadState(r *StateReader) error {
	n := r.Len()
	u.wms = nil
	for i := 0; i < n; i++ {
		u.wms = append(u.wms, r.Int())
	}
	return r.Err()
}

// Collector is a sink that consolidates the weighted rows it receives: the multiset of rows
// whose weights sum to a positive count. Ordered collectors (after a sort) keep arrival order.
type Collector struct {
	Types   []types.T
	Ordered bool
	Done    bool
	// Ctx, when set, cancels the query: a batch arriving after it is done fails with its
	// error, which unwinds the dataflow.
	Ctx context.Context
	// batches are an ordered collector's input, as it came; rows and counts are an
	// unordered one's consolidated rows (index finds a row by its values).
	batches []*Batch
	rows    [][]any
	counts  []int64
	index   map[string]int
	keyBuf  []byte
}

var _ Operator = (*Collector)(nil)

// Push implements Operator.
func (c *Collector) Push(_ int, m Msg) error {
	if c.Ctx != nil {
		if err := c.Ctx.Err(); err != nil {
			return err
		}
	}
	switch m.Kind {
	case MsgEnd:
		c.Done = true
	case MsgBatch:
		b := m.Batch
		if c.Ordered {
			c.batches = append(c.batches, b)
			return nil
		}
		if c.index == nil {
			c.index = map[string]int{}
		}
		for i := 0; i < b.N; i++ {
			c.keyBuf = AllKey(c.keyBuf[:0], b, i)
			j, ok := c.index[string(c.keyBuf)]
			if !ok {
				j = len(c.rows)
				c.index[string(c.keyBuf)] = j
				c.rows = append(c.rows, b.Row(i))
				c.counts = append(c.counts, 0)
			}
			c.counts[j] += b.Weight(i)
		}
	}
	return nil
}

// Rows returns the collected rows, each repeated by its count (weight).
func (c *Collector) Rows() [][]any {
	var out [][]any
	for _, b := range c.batches {
		for i := 0; i < b.N; i++ {
			row := b.Row(i)
			for k := b.Weight(i); k > 0; k-- {
				out = append(out, row)
			}
		}
	}
	for i, r := range c.rows {
		for k := int64(0); k < c.counts[i]; k++ {
			out = append(out, r)
		}
	}
	return out
}

// Batches returns the collected rows as batches of at most size rows. An ordered
// collector's batches go on as they came, rows of a weight other than one repeated that many
// times, and rebuilt only where a column is not of its type's physical array (a NULL
// literal's): no row is boxed.
func (c *Collector) Batches(size int) []*Batch {
	if !c.Ordered {
		rows := c.Rows()
		var out []*Batch
		for start := 0; start < len(rows); start += size {
			end := min(start+size, len(rows))
			out = append(out, RowsToBatch(rows[start:end], c.Types))
		}
		return out
	}
	var out []*Batch
	for _, b := range c.batches {
		b = unweighted(b, c.Types)
		for i, col := range b.Cols {
			if !arrow.TypeEqual(col.DataType(), c.Types[i].ArrowType()) {
				rows := make([][]any, b.N)
				for r := range rows {
					rows[r] = b.Row(r)
				}
				b = RowsToBatch(rows, c.Types)
				break
			}
		}
		b = &Batch{N: b.N, Cols: b.Cols} // rows, without their watermarks
		for lo := 0; lo < b.N; lo += size {
			if b.N > size {
				out = append(out, b.Slice(lo, min(lo+size, b.N)))
			} else {
				out = append(out, b)
			}
		}
	}
	return out
}

// RowsToBatch builds a batch from rows of physical values.
func RowsToBatch(rows [][]any, ts []types.T) *Batch {
	b := &Batch{N: len(rows), Cols: make([]arrow.Array, len(ts))}
	for c, t := range ts {
		bl := NewBuilder(t, len(rows))
		for _, r := range rows {
			bl.Append(r[c])
		}
		b.Cols[c] = bl.Finish()
	}
	return b
}

// SortKey orders by one input column.
type SortKey struct {
	Col   int
	Desc  bool
	Nulls NullOrder
}

// nullsFirst reports whether NULLs come first under k: NULL is the least value unless the
// key says otherwise.
func (k SortKey) nullsFirst() bool {
	if k.Nulls != NullsDefault {
		return k.Nulls == NullsFirst
	}
	return !k.Desc
}

// NullOrder places NULLs in a sort.
type NullOrder int8

const (
	NullsDefault NullOrder = iota // first ascending, last descending (SPEC.md §2)
	NullsFirst
	NullsLast
)

// Sort buffers its input and emits it ordered at End. NULLs sort first ascending and last
// descending (SPEC.md §2); ties keep arrival order.
type Sort struct {
	Keys  []SortKey
	Types []types.T
	// Limit, when > 0, says only the first Limit rows of the order are wanted (ORDER BY ...
	// LIMIT in a bounded query): Sort then keeps only the best rows seen (a Top-N heap)
	// instead of every row. It needs insert-only input (weights > 0), as in a batch query.
	Limit int64
	Out   Output
	// batches are the input of a full sort, kept as they came; rows and ws are the boxed
	// rows a Top-N heap (top) keeps.
	batches []*Batch
	rows    [][]any
	ws      []int64
	top     topHeap
}

var _ Operator = (*Sort)(nil)

// topHeap is the rows kept by a Sort with a Limit: a max-heap (the worst row on top) of
// indexes into the Sort's rows, ordered by the sort keys and then by arrival (ties keep
// arrival order, so a later row is worse than an earlier equal one).
type topHeap struct {
	idx  []int32
	seq  []int64 // per row of Sort.rows: its arrival number
	n    int64   // rows seen
	sumW int64   // total weight of the rows in the heap
}

// worse reports whether row a (index into rows) comes after row b.
func (s *Sort) worse(a, b int32) bool {
	if rowLess(s.rows[b], s.rows[a], s.Keys) {
		return true
	}
	if rowLess(s.rows[a], s.rows[b], s.Keys) {
		return false
	}
	return s.top.seq[a] > s.top.seq[b]
}

func (s *Sort) siftUp(k int) {
	h := s.top.idx
	for k > 0 {
		p := (k - 1) / 2
		if !s.worse(h[k], h[p]) {
			break
		}
		h[k], h[p] = h[p], h[k]
		k = p
	}
}

func (s *Sort) siftDown(k int) {
	h := s.top.idx
	for {
		l := 2*k + 1
		if l >= len(h) {
			return
		}
		c := l
		if r := l + 1; r < len(h) && s.worse(h[r], h[l]) {
			c = r
		}
		if !s.worse(h[c], h[k]) {
			return
		}
		h[k], h[c] = h[c], h[k]
		k = c
	}
}

// beats reports whether row i of b comes before the kept row r (an earlier arrival wins a
// tie, so a new row that ties does not).
func beats(b *Batch, i int, r []any, keys []SortKey) bool {
	for _, k := range keys {
		col := b.Cols[k.Col]
		aNull, bNull := col.IsNull(i), r[k.Col] == nil
		var c int
		if aNull || bNull {
			c = CompareValues(Value(col, i), r[k.Col])
		} else { // typed: row i is not boxed
			switch a := col.(type) {
			case *array.Int64:
				c = cmp.Compare(a.Value(i), r[k.Col].(int64))
			case *array.Float64:
				c = compareFloat(a.Value(i), r[k.Col].(float64))
			case *array.String:
				c = strings.Compare(a.Value(i), r[k.Col].(string))
			default:
				c = CompareValues(Value(col, i), r[k.Col])
			}
		}
		if c != 0 {
			return keyLess(c, aNull, bNull, k)
		}
	}
	return false
}

// pushTop keeps the rows of b that may be among the first s.Limit.
func (s *Sort) pushTop(b *Batch) error {
	t := &s.top
	for i := 0; i < b.N; i++ {
		w := b.Weight(i)
		if w <= 0 {
			return fmt.Errorf("internal error: Top-N sort given a retraction")
		}
		t.n++
		if t.sumW >= s.Limit && !beats(b, i, s.rows[t.idx[0]], s.Keys) {
			continue
		}
		var e int32
		if t.sumW >= s.Limit && t.sumW-s.ws[t.idx[0]]+w >= s.Limit {
			// Replace the worst row in place (its slot is reused).
			e = t.idx[0]
			t.sumW -= s.ws[e]
			s.rows[e], s.ws[e], t.seq[e] = b.Row(i), w, t.n
			t.sumW += w
			s.siftDown(0)
		} else {
			e = int32(len(s.rows))
			s.rows = append(s.rows, b.Row(i))
			s.ws = append(s.ws, w)
			t.seq = append(t.seq, t.n)
			t.idx = append(t.idx, e)
			t.sumW += w
			s.siftUp(len(t.idx) - 1)
		}
		// Drop worst rows the others make unnecessary.
		for len(t.idx) > 1 && t.sumW-s.ws[t.idx[0]] >= s.Limit {
			t.sumW -= s.ws[t.idx[0]]
			s.rows[t.idx[0]] = nil
			last := len(t.idx) - 1
			t.idx[0] = t.idx[last]
			t.idx = t.idx[:last]
			s.siftDown(0)
		}
	}
	return nil
}

// Push implements Operator.
func (s *Sort) Push(_ int, m Msg) error {
	switch m.Kind {
	case MsgBatch:
		if s.Limit > 0 {
			return s.pushTop(m.Batch)
		}
		s.batches = append(s.batches, m.Batch)
		return nil
	case MsgWatermark:
		return nil
	}
	if s.Limit > 0 {
		if err := s.emitTop(); err != nil {
			return err
		}
	} else if err := s.emitSorted(); err != nil {
		return err
	}
	return s.Out.Emit(m)
}

// sortChunk is the rows of each batch a Sort emits.
const sortChunk = 4096

// emitSorted emits a full sort's input in order: the batches are joined into one, a
// permutation of its rows is sorted by key comparisons on the typed columns (row number last,
// so ties keep arrival order), and the rows are gathered through it.
func (s *Sort) emitSorted() error {
	if len(s.batches) == 0 {
		return nil
	}
	all := Concat(s.batches, s.Types)
	s.batches = nil
	idx, _ := sortPermutation(all, s.Keys)
	for start := 0; start < len(idx); start += sortChunk {
		if err := s.Out.EmitBatch(Take(all, idx[start:min(start+sortChunk, len(idx))], s.Types)); err != nil {
			return err
		}
	}
	return nil
}

// sortPermutation returns b's row numbers in the order of keys, ties in row order, and the
// comparators of the keys (which order two rows of b by each key).
func sortPermutation(b *Batch, keys []SortKey) ([]int32, []func(a, b int32) int) {
	cmps := make([]func(a, b int32) int, len(keys))
	for i, k := range keys {
		cmps[i] = keyCompare(b.Cols[k.Col], k)
	}
	idx := make([]int32, b.N)
	if len(keys) == 0 {
		for i := range idx {
			idx[i] = int32(i)
		}
		return idx, cmps
	}
	rows, enc := encodeSortKeys(b, keys)
	rest := func(a, b int32) int { // the keys not encoded, then row order
		for _, c := range cmps[enc:] {
			if r := c(a, b); r != 0 {
				return r
			}
		}
		return cmp.Compare(a, b)
	}
	if enc == 0 {
		for i := range idx {
			idx[i] = int32(i)
		}
		slices.SortFunc(idx, rest)
		return idx, cmps
	}
	// The leading keys' values sit beside their row numbers: most comparisons read the
	// slice being sorted, in order, instead of the columns at random.
	slices.SortFunc(rows, func(a, b encodedRow) int {
		for k := range enc {
			if a.rank[k] != b.rank[k] {
				return cmp.Compare(a.rank[k], b.rank[k])
			}
			if a.key[k] != b.key[k] {
				return cmp.Compare(a.key[k], b.key[k])
			}
		}
		return rest(a.row, b.row)
	})
	for i, r := range rows {
		idx[i] = r.row
	}
	return idx, cmps
}

// encodedRow is a row number with its leading sort keys (up to two): each value mapped to
// an unsigned integer of the same order, after its rank (a NULL's 0 or 2 puts it first or
// last; a value's is 1).
type encodedRow struct {
	key  [2]uint64
	row  int32
	rank [2]uint8
}

// encodeSortKeys encodes b's rows for the leading keys of int64 or float64 columns, up to
// two, so that they order as keyCompare orders them, and says how many keys it encoded
// (none: rows is nil).
func encodeSortKeys(b *Batch, keys []SortKey) (rows []encodedRow, n int) {
	for ; n < min(len(keys), len(encodedRow{}.key)); n++ {
		k := keys[n]
		col := b.Cols[k.Col]
		flip := uint64(0) // DESC reverses the order of the values
		if k.Desc {
			flip = math.MaxUint64
		}
		switch c := col.(type) {
		case *array.Int64:
			rows = encodedRows(rows, b.N)
			for i, v := range c.Int64Values() {
				rows[i].key[n] = (uint64(v) ^ 1<<63) ^ flip
			}
		case *array.Float64:
			rows = encodedRows(rows, b.N)
			for i, v := range c.Float64Values() {
				rows[i].key[n] = floatKey(v) ^ flip
			}
		default:
			return rows, n
		}
		nullRank := uint8(2)
		if k.nullsFirst() {
			nullRank = 0
		}
		nulls := col.NullN() > 0
		for i := range rows {
			rows[i].rank[n] = 1
			if nulls && col.IsNull(i) {
				rows[i].rank[n], rows[i].key[n] = nullRank, 0
			}
		}
	}
	return rows, n
}

// encodedRows returns rows, or, when it is nil, n encodedRows numbered 0 to n-1.
func encodedRows(rows []encodedRow, n int) []encodedRow {
	if rows == nil {
		rows = make([]encodedRow, n)
		for i := range rows {
			rows[i].row = int32(i)
		}
	}
	return rows
}

// floatKey maps a float64 to an unsigned integer of the same order as compareFloat's: every
// NaN equal and above +Inf, -0 equal to 0.
func floatKey(x float64) uint64 {
	switch {
	case x != x:
		return math.MaxUint64
	case x == 0:
		x = 0
	}
	bits := math.Float64bits(x)
	if bits>>63 == 1 {
		return ^bits
	}
	return bits | 1<<63
}

// keyCompare orders rows a and b of col by sort key k, as rowLess does.
func keyCompare(col arrow.Array, k SortKey) func(a, b int32) int {
	var asc func(a, b int32) int // non-NULL values, ascending
	switch c := col.(type) {
	case *array.Int64:
		v := c.Int64Values()
		asc = func(a, b int32) int { return cmp.Compare(v[a], v[b]) }
	case *array.Float64:
		v := c.Float64Values()
		asc = func(a, b int32) int { return compareFloat(v[a], v[b]) }
	case *array.String:
		asc = func(a, b int32) int { return strings.Compare(c.Value(int(a)), c.Value(int(b))) }
	default:
		asc = func(a, b int32) int { return CompareValues(Value(col, int(a)), Value(col, int(b))) }
	}
	ordered := asc
	if k.Desc {
		ordered = func(a, b int32) int { return asc(b, a) }
	}
	if col.NullN() == 0 {
		return ordered
	}
	nullSide := 1
	if k.nullsFirst() {
		nullSide = -1
	}
	return func(a, b int32) int {
		an, bn := col.IsNull(int(a)), col.IsNull(int(b))
		switch {
		case an && bn:
			return 0
		case an:
			return nullSide
		case bn:
			return -nullSide
		}
		return ordered(a, b)
	}
}

// emitTop emits the rows a Top-N sort kept, in order.
func (s *Sort) emitTop() error {
	idx := make([]int, 0, len(s.top.idx))
	for _, e := range s.top.idx {
		idx = append(idx, int(e))
	}
	sort.Slice(idx, func(a, b int) bool { return s.worse(int32(idx[b]), int32(idx[a])) })
	for start := 0; start < len(idx); start += sortChunk {
		end := min(start+sortChunk, len(idx))
		rows := make([][]any, 0, end-start)
		w := make([]int64, 0, end-start)
		for _, i := range idx[start:end] {
			rows = append(rows, s.rows[i])
			w = append(w, s.ws[i])
		}
		b := RowsToBatch(rows, s.Types)
		b.W = w
		if err := s.Out.EmitBatch(b); err != nil {
			return err
		}
	}
	s.rows, s.ws, s.top = nil, nil, topHeap{}
	return nil
}

// rowLess orders rows by sort keys.
func rowLess(a, b []any, keys []SortKey) bool {
	for _, k := range keys {
		if c := CompareValues(a[k.Col], b[k.Col]); c != 0 {
			return keyLess(c, a[k.Col] == nil, b[k.Col] == nil, k)
		}
	}
	return false
}

// keyLess reports whether, under sort key k, a value comes before another it differs from:
// c is their CompareValues order (NULL least), aNull and bNull whether they are NULL.
func keyLess(c int, aNull, bNull bool, k SortKey) bool {
	if aNull || bNull {
		return aNull == k.nullsFirst()
	}
	if k.Desc {
		return c > 0
	}
	return c < 0
}

// CompareValues orders physical values; NULL is smaller than everything.
func CompareValues(a, b any) int {
	if a == nil || b == nil {
		switch {
		case a == nil && b == nil:
			return 0
		case a == nil:
			return -1
		default:
			return 1
		}
	}
	switch x := a.(type) {
	case int64:
		y := b.(int64)
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	case float64:
		return compareFloat(x, b.(float64))
	case string:
		return strings.Compare(x, b.(string))
	case bool:
		y := b.(bool)
		switch {
		case x == y:
			return 0
		case !x:
			return -1
		}
		return 1
	}
	panic(fmt.Sprintf("exec: cannot compare %T", a))
}

// Limit forwards rows Offset+1 .. Offset+Count of its (ordered) input; Count < 0 means no
// limit. It expects insert-only input, as in a batch query.
type Limit struct {
	Count, Offset int64
	Types         []types.T
	Out           Output
	seen          int64
}

var _ Operator = (*Limit)(nil)

// Push implements Operator.
func (l *Limit) Push(_ int, m Msg) error {
	if m.Kind != MsgBatch {
		return l.Out.Emit(m)
	}
	b := m.Batch
	var sel []int32
	for i := 0; i < b.N; i++ {
		for k := int64(0); k < b.Weight(i); k++ {
			l.seen++
			if l.seen > l.Offset && (l.Count < 0 || l.seen-l.Offset <= l.Count) {
				sel = append(sel, int32(i))
			}
		}
	}
	if len(sel) == 0 {
		return nil
	}
	out := Take(b, sel, l.Types)
	out.W = nil
	return l.Out.EmitBatch(out)
}

// compareFloat orders DOUBLEs as PostgreSQL does: NaN equals NaN and is above every other
// value (so sorting, MIN/MAX, DISTINCT and = agree).
func compareFloat(x, y float64) int {
	xn, yn := x != x, y != y
	switch {
	case xn || yn:
		return int(b2u(xn)) - int(b2u(yn))
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}
