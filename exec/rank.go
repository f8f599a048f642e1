package exec

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"math/big"
	"slices"
	"sort"

	"github.com/streamsql/streamsql/types"
)

// RankFunc is a window function.
type RankFunc uint8

// Window functions: ranking, offsets, and aggregates over the window frame.
const (
	RowNumber RankFunc = iota
	Rank
	DenseRank
	Lag
	Lead
	FirstValue
	LastValue
	WinCountStar
	WinCount
	WinSum
	WinAvg
	WinMin
	WinMax
)

// Frame is a window function's explicit frame: ROWS or RANGE BETWEEN Start AND End. A nil
// Frame is SQL's default: with ORDER BY, RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
// (the row and its peers); without, the whole partition.
type Frame struct {
	Range      bool
	Start, End Bound
}

// Bound is one end of a Frame.
type Bound struct {
	Kind BoundKind
	// Offset is n of n PRECEDING or n FOLLOWING: rows (an int64) with ROWS; with RANGE, a
	// distance in the ORDER BY key's physical values (an int64: milliseconds for a
	// TIMESTAMP, days for a DATE, the unscaled value for a DECIMAL, or a Fraction of one; a
	// float64 for a DOUBLE).
	Offset any
}

// BoundKind is where a frame Bound lies.
type BoundKind uint8

const (
	UnboundedPreceding BoundKind = iota
	Preceding
	CurrentRow
	Following
	UnboundedFollowing
)

// Ranker appends a window function's value (fn(...) OVER (PARTITION BY ... ORDER BY ...))
// to each row of its input. It keeps each partition's rows; in Batch mode it emits every
// partition at End, otherwise, after each batch, it retracts a changed partition's previous
// rows and inserts the new ones. When Limit >= 0 only rows ranked <= Limit are emitted
// (Top-N). Offsets (LAG, LEAD) read Arg Offset rows away, or Default; FIRST_VALUE,
// LAST_VALUE and aggregates see the Frame (ranking functions and offsets ignore it).
type Ranker struct {
	Fn       RankFunc
	PartCols []int
	Order    []SortKey
	Types    []types.T // input column types
	Arg      int       // the argument column (offsets, values, aggregates)
	Offset   int64     // LAG / LEAD
	Default  any       // LAG / LEAD beyond the partition
	ResultT  types.T   // the appended column's type
	Frame    *Frame    // nil: SQL's default frame
	// Windowed marks a window Top-N: partition column WindowEnd holds window_end, and once a
	// watermark W >= window_end - 1 arrives the partition cannot change and its state is freed.
	// EmitOnClose (EMIT ON WINDOW CLOSE) emits a partition's rows then, once, instead of its
	// changes after each batch.
	Windowed    bool
	WindowEnd   int
	EmitOnClose bool
	Limit       int64
	// NumberHidden: the number column is dropped downstream (ORDER BY ... LIMIT in a view),
	// so a row's retraction and insertion that differ only in their number cancel out: a
	// subscriber sees only the rows that left or entered. Rows numbered up to From (the
	// OFFSET) are left out then, as they must be before the changes are netted.
	NumberHidden bool
	From         int64
	Batch        bool
	Pos          Pos // where the function stands in the user's text: its errors say so
	// Errs, when set, receives a value's data error (a SUM out of range, whose value is then
	// NULL) instead of it failing the push: a view's other partitions go on (see HashAgg.Errs).
	Errs RowErrors
	Out  Output

	// batches is the input of a columnar ranking (see columnar), kept as it came.
	batches   []*Batch
	parts     map[string]*rankPart
	dirtyKeys []string // the partitions changed by the current batch
	seq       uint64   // the next row's arrival number
	kb        []byte
	// The partitions and rows as of the last checkpoint (see partKey).
	ChangedKeys
}

// topN reports whether the Ranker keeps its partitions' rows in order (rankPart.order): a
// ranking with a limit whose changes go out after each batch ranks only the first rows.
func (r *Ranker) topN() bool {
	return r.Limit >= 0 && !r.Batch && !r.EmitOnClose && (r.Fn == RowNumber || r.Fn == Rank || r.Fn == DenseRank)
}

var _ Operator = (*Ranker)(nil)

// Push implements Operator.
func (r *Ranker) Push(_ int, m Msg) error {
	if r.columnar() {
		switch m.Kind {
		case MsgBatch:
			r.batches = append(r.batches, m.Batch)
			return nil
		case MsgEnd:
			if err := r.emitColumnar(); err != nil {
				return err
			}
		}
		return r.Out.Emit(m)
	}
	if r.parts == nil {
		r.parts = map[string]*rankPart{}
	}
	switch m.Kind {
	case MsgWatermark:
		switch {
		case r.Batch || !r.Windowed:
		case r.EmitOnClose:
			if err := r.emitComplete(m.Watermark); err != nil {
				return err
			}
		default:
			r.freeComplete(m.Watermark)
		}
		return r.Out.Emit(m)
	case MsgEnd:
		if r.Batch {
			if err := r.emit(true); err != nil {
				return err
			}
		}
		return r.Out.Emit(m)
	}
	b := m.Batch
	var vb []byte
	for i := 0; i < b.N; i++ {
		r.kb = RowKey(r.kb[:0], b, r.PartCols, i)
		p := r.parts[string(r.kb)]
		if p == nil {
			p = newRankPart(string(r.kb), r.topN())
			r.parts[string(r.kb)] = p
		}
		if !p.dirty {
			p.dirty = true
			r.mark(p, "")
			if !r.Batch && !r.EmitOnClose {
				r.dirtyKeys = append(r.dirtyKeys, string(r.kb))
			}
		}
		vb = AllKey(vb[:0], b, i)
		j, ok := p.index[string(vb)]
		if !ok {
			j = p.slot(vb, b.Row(i), &r.seq)
		}
		p.add(j, b.Weight(i))
		r.mark(p, string(vb))
	}
	if r.Batch || r.EmitOnClose {
		return nil
	}
	return r.emit(false)
}

// columnar reports whether the Ranker numbers a bounded query's rows at End from one sort
// of its whole input (ROW_NUMBER, RANK, DENSE_RANK), keeping its batches as they come
// instead of boxed rows per partition.
func (r *Ranker) columnar() bool {
	return r.Batch && !r.NumberHidden && (r.Fn == RowNumber || r.Fn == Rank || r.Fn == DenseRank)
}

// numbering counts ROW_NUMBER, RANK and DENSE_RANK along a partition's rows in order.
type numbering struct{ n, rank, dense int64 }

// next moves to the next row: the partition's first (first), or one after a row it is a
// peer of (peer: equal in the order keys) or not.
func (c *numbering) next(first, peer bool) {
	switch {
	case first:
		c.n, c.rank, c.dense = 1, 1, 1
	case peer:
		c.n++
	default:
		c.n++
		c.rank, c.dense = c.n, c.dense+1
	}
}

// of is the row's value of fn.
func (c *numbering) of(fn RankFunc) int64 {
	switch fn {
	case Rank:
		return c.rank
	case DenseRank:
		return c.dense
	}
	return c.n
}

// emitColumnar emits a columnar ranking: the rows (a row of weight w counting as w rows)
// sorted by partition, then order, then arrival, each numbered in one pass; those beyond
// the Limit are left out.
func (r *Ranker) emitColumnar() error {
	if len(r.batches) == 0 {
		return nil
	}
	all := unweighted(Concat(r.batches, r.Types), r.Types)
	r.batches = nil
	keys := make([]SortKey, 0, len(r.PartCols)+len(r.Order))
	for _, c := range r.PartCols {
		keys = append(keys, SortKey{Col: c})
	}
	idx, cmps := sortPermutation(all, append(keys, r.Order...))
	parts, order := cmps[:len(r.PartCols)], cmps[len(r.PartCols):]
	differs := func(cs []func(a, b int32) int, a, b int32) bool {
		for _, c := range cs {
			if c(a, b) != 0 {
				return true
			}
		}
		return false
	}
	var sel []int32
	var vals []int64
	var num numbering
	for pos, row := range idx {
		first := pos == 0 || differs(parts, idx[pos-1], row)
		num.next(first, !first && !differs(order, idx[pos-1], row))
		v := num.of(r.Fn)
		if r.Limit >= 0 && v > r.Limit {
			continue
		}
		sel, vals = append(sel, row), append(vals, v)
	}
	for start := 0; start < len(sel); start += sortChunk {
		end := min(start+sortChunk, len(sel))
		b := Take(all, sel[start:end], r.Types)
		b.Cols = append(b.Cols, NewInt64(vals[start:end], nil))
		if err := r.Out.EmitBatch(b); err != nil {
			return err
		}
	}
	return nil
}

// emitComplete emits, with EMIT ON WINDOW CLOSE, the ranked rows of the partitions whose
// window is complete at watermark w (in key order), and drops them.
func (r *Ranker) emitComplete(w int64) error {
	var keys []string
	for k, p := range r.parts {
		if end, ok := p.rows[0][r.WindowEnd].(int64); ok && end-1 <= w {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	outT := append(append([]types.T{}, r.Types...), r.ResultT)
	for _, k := range keys {
		cur, err := r.rank(r.parts[k], outT)
		if err != nil {
			return err
		}
		if err := r.Out.EmitBatch(cur); err != nil {
			return err
		}
		r.drop(k)
	}
	return nil
}

// freeComplete drops the partitions whose window is complete at watermark w.
func (r *Ranker) freeComplete(w int64) {
	for k, p := range r.parts {
		if p.dirty || len(p.rows) == 0 {
			continue
		}
		if end, ok := p.rows[0][r.WindowEnd].(int64); ok && end-1 <= w {
			r.drop(k)
		}
	}
}

// emit sends the ranked rows of dirty partitions (all partitions at End in Batch mode).
func (r *Ranker) emit(all bool) error {
	keys := r.dirtyKeys
	r.dirtyKeys = nil
	if all {
		keys = slices.Collect(maps.Keys(r.parts))
	}
	sort.Strings(keys)
	outT := append(append([]types.T{}, r.Types...), r.ResultT)
	for i, k := range keys {
		p := r.parts[k]
		p.dirty = false
		cur, err := r.rank(p, outT)
		if err != nil {
			if !all { // the partitions not emitted stay dirty, for the next batch
				p.dirty = true
				r.dirtyKeys = append(r.dirtyKeys, keys[i:]...)
			}
			return err
		}
		out := cur
		if !all && p.emitted != nil {
			out = rankChanges(p.emitted, cur, outT, r.Fn == RowNumber)
			if r.NumberHidden {
				out = netButNumber(out, outT)
			}
		}
		p.emitted = cur
		if err := r.Out.EmitBatch(out); err != nil {
			return err
		}
		if len(p.index) == 0 {
			r.drop(k)
		}
	}
	return nil
}

// rankChanges is what changed from a partition's ranked rows old to cur: a retraction of
// each old row cur does not have and an insertion of each cur row old did not have (rows
// compared whole, rank included), so a row that kept its place is not emitted again. The
// retractions come first; with byNumber (ROW_NUMBER, whose number is the last column) the
// changes go in number order instead, a number's retraction right before its insertion, so
// that a changed place reads as an update (-U, +U) of the partition and number.
func rankChanges(old, cur *Batch, ts []types.T, byNumber bool) *Batch {
	if cur == nil { // no rows left
		cur = &Batch{}
	}
	count := map[string]int{}
	oldKeys := make([]string, old.N)
	var kb []byte
	for i := range oldKeys {
		kb = AllKey(kb[:0], old, i)
		oldKeys[i] = string(kb)
		count[oldKeys[i]]++
	}
	var added []int32
	for i := 0; i < cur.N; i++ {
		kb = AllKey(kb[:0], cur, i)
		if count[string(kb)] > 0 {
			count[string(kb)]--
			continue
		}
		added = append(added, int32(i))
	}
	var gone []int32
	for i, k := range oldKeys {
		if count[k] > 0 {
			count[k]--
			gone = append(gone, int32(i))
		}
	}
	minus, plus := Take(old, gone, ts), Take(cur, added, ts)
	minus.W = make([]int64, len(gone))
	for i := range minus.W {
		minus.W[i] = -1
	}
	all := ConcatChanges(minus, plus)
	if !byNumber || minus.N == 0 || plus.N == 0 {
		return all
	}
	// Both lists are in number order (old and cur are ranked): merge them.
	last := len(ts) - 1
	nOld, nNew := Int64s(minus.Cols[last]), Int64s(plus.Cols[last])
	order := make([]int32, 0, all.N)
	for i, j := 0, 0; i < len(nOld) || j < len(nNew); {
		if j == len(nNew) || i < len(nOld) && nOld[i] <= nNew[j] {
			order = append(order, int32(i))
			i++
		} else {
			order = append(order, int32(len(nOld)+j))
			j++
		}
	}
	return Take(all, order, ts)
}

// netButNumber drops the changes of b that cancel out once its last column (the number) is
// dropped: for rows equal in the other columns, their weights' sum is kept, by the first of
// them whose weight has its sign, in b's order.
func netButNumber(b *Batch, ts []types.T) *Batch {
	if b == nil || b.N == 0 {
		return b
	}
	rest := &Batch{Cols: b.Cols[:len(b.Cols)-1], N: b.N}
	keys := make([]string, b.N)
	net := map[string]int64{}
	var kb []byte
	for i := range keys {
		kb = AllKey(kb[:0], rest, i)
		keys[i] = string(kb)
		net[keys[i]] += b.Weight(i)
	}
	var keep []int32
	for i, k := range keys {
		if w := b.Weight(i); net[k] != 0 && (net[k] > 0) == (w > 0) {
			keep = append(keep, int32(i))
			net[k] -= w
		}
	}
	if len(keep) == b.N {
		return b
	}
	return Take(b, keep, ts)
}

// drop frees partition k (and its entries in the store).
func (r *Ranker) drop(k string) {
	p := r.parts[k]
	for rk := range p.index {
		r.mark(p, rk)
	}
	delete(r.parts, k)
	r.mark(p, "")
}

// mark records that partition p's entry (row "") or the entry of its row encoded row changed,
// when there is a store to write it to.
func (r *Ranker) mark(p *rankPart, row string) {
	if r.store != nil {
		r.Mark(p.stored + row)
	}
}

// rank orders a partition's rows and numbers them.
func (r *Ranker) rank(p *rankPart, outT []types.T) (*Batch, error) {
	p.settle(r.Order)
	for _, row := range p.killed { // a row settled away may have an entry (EOWC: with weight 0)
		r.mark(p, row)
	}
	p.killed = p.killed[:0]
	if p.order != nil {
		return r.rankTop(p, outT), nil
	}
	rows := p.live()
	sort.SliceStable(rows, func(a, b int) bool { return r.less(rows[a], rows[b]) })
	vals, err := r.values(rows)
	if err != nil {
		return nil, err
	}
	out := make([][]any, 0, len(rows))
	for i, row := range rows {
		if r.Limit >= 0 && vals[i].(int64) > r.Limit {
			break
		}
		if r.NumberHidden && vals[i].(int64) <= r.From {
			continue
		}
		out = append(out, append(append([]any{}, row...), vals[i]))
	}
	if len(out) == 0 {
		return nil, nil
	}
	return RowsToBatch(out, outT), nil
}

// rankTop is rank for a Top-N: it numbers the ordered rows only up to the limit.
func (r *Ranker) rankTop(p *rankPart, outT []types.T) *Batch {
	var out [][]any
	var prev []any
	var num numbering
	p.order.each(func(j int32) bool {
		row := p.rows[j]
		for c := int64(0); c < p.w[j]; c++ {
			num.next(prev == nil, prev != nil && !r.less(prev, row))
			prev = row
			v := num.of(r.Fn)
			if v > r.Limit {
				return false
			}
			if r.NumberHidden && v <= r.From {
				continue
			}
			out = append(out, append(append([]any{}, row...), v))
		}
		return true
	})
	if len(out) == 0 {
		return nil
	}
	return RowsToBatch(out, outT)
}

// values computes the function for the sorted rows of one partition.
func (r *Ranker) values(rows [][]any) ([]any, error) {
	n := len(rows)
	out := make([]any, n)
	switch r.Fn {
	case RowNumber, Rank, DenseRank:
		var num numbering
		for i := range rows {
			num.next(i == 0, i > 0 && !r.less(rows[i-1], rows[i]))
			out[i] = num.of(r.Fn)
		}
		return out, nil
	case Lag, Lead:
		d := int(r.Offset)
		if r.Fn == Lag {
			d = -d
		}
		for i := range rows {
			if j := i + d; j >= 0 && j < n {
				out[i] = rows[j][r.Arg]
			} else {
				out[i] = r.Default
			}
		}
		return out, nil
	}
	start, end := r.frames(rows)
	switch r.Fn {
	case FirstValue, LastValue:
		for i := range rows {
			switch {
			case start[i] > end[i]: // an empty frame
			case r.Fn == FirstValue:
				out[i] = rows[start[i]][r.Arg]
			default:
				out[i] = rows[end[i]][r.Arg]
			}
		}
		return out, nil
	}
	// Aggregates: running while every frame starts at the partition's first row and ends no
	// earlier than the one before (the default frame's case), else from a tree of partial
	// aggregates (frameTree), each frame in O(log n).
	running := true
	for i := range rows {
		running = running && start[i] == 0 && (i == 0 || end[i] >= end[i-1])
	}
	var acc frameAcc
	var tree frameTree
	if !running {
		tree = newFrameTree(rows, r.Arg)
	}
	done := 0
	for i := range rows {
		if running {
			for ; done <= end[i]; done++ {
				acc.add(rows[done][r.Arg])
			}
		} else {
			acc = tree.query(start[i], end[i])
		}
		var err error
		if out[i], err = acc.result(r.Fn, r.Types[r.Arg]); err != nil {
			if r.Errs == nil {
				return nil, r.Pos.located(err)
			}
			r.Errs(r.Pos.located(err))
		}
	}
	return out, nil
}

// frames returns each sorted row's frame: its first and last row (an empty frame has
// start > end).
func (r *Ranker) frames(rows [][]any) (start, end []int) {
	n := len(rows)
	start, end = make([]int, n), make([]int, n)
	// first and last are each row's first and last peer (the rows ORDER BY does not tell
	// apart; all of them without ORDER BY).
	first, last := make([]int, n), make([]int, n)
	for i := range rows {
		if i > 0 && (len(r.Order) == 0 || !r.less(rows[i-1], rows[i])) {
			first[i] = first[i-1]
		} else {
			first[i] = i
		}
	}
	for i := n - 1; i >= 0; i-- {
		if i < n-1 && first[i+1] == first[i] {
			last[i] = last[i+1]
		} else {
			last[i] = i
		}
	}
	f := r.Frame
	if f == nil {
		f = &Frame{Range: true, Start: Bound{Kind: UnboundedPreceding}, End: Bound{Kind: CurrentRow}}
		if len(r.Order) == 0 {
			f.End.Kind = UnboundedFollowing
		}
	}
	// keyed is [lo, hi), the rows whose one ORDER BY key is not NULL: they sit together.
	keyed := [2]int{0, n}
	if f.Range && len(r.Order) == 1 {
		c := r.Order[0].Col
		for keyed[0] < n && rows[keyed[0]][c] == nil {
			keyed[0]++
		}
		for keyed[1] > keyed[0] && rows[keyed[1]-1][c] == nil {
			keyed[1]--
		}
	}
	for i := range rows {
		start[i] = r.bound(rows, i, f.Start, f.Range, true, first, last, keyed)
		end[i] = r.bound(rows, i, f.End, f.Range, false, first, last, keyed)
	}
	return start, end
}

// bound is row i's frame start (isStart) or end, for bound b.
func (r *Ranker) bound(rows [][]any, i int, b Bound, isRange, isStart bool, first, last []int, keyed [2]int) int {
	n := len(rows)
	switch b.Kind {
	case UnboundedPreceding:
		return 0
	case UnboundedFollowing:
		return n - 1
	case CurrentRow:
		switch {
		case !isRange:
			return i
		case isStart:
			return first[i]
		}
		return last[i]
	}
	if !isRange {
		off := b.Offset.(int64)
		var j int64
		if b.Kind == Preceding {
			j = int64(i) - off
		} else {
			j = int64(i) + min(off, int64(n)) // no overflow
		}
		if isStart {
			return int(min(max(j, 0), int64(n))) // past the end: empty
		}
		return int(max(min(j, int64(n-1)), -1)) // before the start: empty
	}
	// RANGE with an offset: one ORDER BY key. A NULL key's frame bound is its peers'; the
	// others' lie among the rows with a key (keyed).
	key := r.Order[0]
	v := rows[i][key.Col]
	if v == nil {
		if isStart {
			return first[i]
		}
		return last[i]
	}
	lo, hi := keyed[0], keyed[1]
	// The target: the key n PRECEDING / FOLLOWING v, in the order's direction.
	back := b.Kind == Preceding != key.Desc // toward smaller keys
	// after reports whether key x lies at or after the target (start), or strictly after
	// it (end), in the order's direction.
	after := func(x any) bool {
		c := compareShifted(x, v, b.Offset, back)
		if key.Desc {
			c = -c
		}
		if isStart {
			return c >= 0
		}
		return c > 0
	}
	j := lo + sort.Search(hi-lo, func(k int) bool { return after(rows[lo+k][key.Col]) })
	if isStart {
		return j
	}
	return j - 1
}

// compareShifted compares x with v - off (back) or v + off, exactly: int64s without
// overflow (a Fraction off in 128 bits), float64s as floats ordered as CompareValues orders
// them (NaN after everything, a peer of NaN only).
func compareShifted(x, v, off any, back bool) int {
	switch o := off.(type) {
	case int64:
		xv, vv := x.(int64), v.(int64)
		var t int64
		var over bool
		if back {
			t, over = vv-o, vv < math.MinInt64+o
		} else {
			t, over = vv+o, vv > math.MaxInt64-o
		}
		switch {
		case over && back:
			return 1 // the target is below every int64
		case over:
			return -1
		}
		return cmp.Compare(xv, t)
	case Fraction:
		// x * 10^shift against v * 10^shift -/+ o.V, in big integers (only such offsets).
		p := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(o.Shift)), nil)
		xs := new(big.Int).Mul(big.NewInt(x.(int64)), p)
		t := new(big.Int).Mul(big.NewInt(v.(int64)), p)
		if back {
			t.Sub(t, big.NewInt(o.V))
		} else {
			t.Add(t, big.NewInt(o.V))
		}
		return xs.Cmp(t)
	}
	xf, vf, of := x.(float64), v.(float64), off.(float64)
	if back {
		return compareFloat(xf, vf-of)
	}
	return compareFloat(xf, vf+of)
}

// Fraction is a RANGE offset finer than its integer key's unit: V / 10^Shift units (a
// DECIMAL(6,2) key's 0.019 is V 19, Shift 1).
type Fraction struct {
	V     int64
	Shift int
}

// String writes f as a decimal of the key's unit (EXPLAIN).
func (f Fraction) String() string {
	p := int64(math.Pow10(f.Shift))
	return fmt.Sprintf("%d.%0*d", f.V/p, f.Shift, f.V%p)
}

// frameTree holds partial aggregates of a partition's rows, a segment tree: leaf n+j is row j,
// node k merges 2k and 2k+1.
type frameTree []frameAcc

func newFrameTree(rows [][]any, arg int) frameTree {
	n := len(rows)
	t := make(frameTree, 2*n)
	for j, row := range rows {
		t[n+j].add(row[arg])
	}
	for k := n - 1; k > 0; k-- {
		t[k] = t[2*k]
		t[k].merge(&t[2*k+1])
	}
	return t
}

// query aggregates rows [lo, hi] (nothing when lo > hi).
func (t frameTree) query(lo, hi int) frameAcc {
	var acc frameAcc
	n := len(t) / 2
	for l, h := lo+n, hi+n+1; l < h; l, h = l/2, h/2 {
		if l&1 == 1 {
			acc.merge(&t[l])
			l++
		}
		if h&1 == 1 {
			h--
			acc.merge(&t[h])
		}
	}
	return acc
}

// frameAcc accumulates an aggregate window function's frame: integers and DECIMALs exactly,
// in 128 bits, as a grouped SUM does.
type frameAcc struct {
	rows, n int64
	isum    intSum
	fsum    float64
	min     any
	max     any
}

// merge adds what b accumulated.
func (a *frameAcc) merge(b *frameAcc) {
	a.rows += b.rows
	a.n += b.n
	a.isum.add(b.isum.hi, b.isum.lo)
	a.fsum += b.fsum
	if b.min != nil && (a.min == nil || CompareValues(b.min, a.min) < 0) {
		a.min = b.min
	}
	if b.max != nil && (a.max == nil || CompareValues(b.max, a.max) > 0) {
		a.max = b.max
	}
}

func (a *frameAcc) add(v any) {
	a.rows++
	if v == nil {
		return
	}
	a.n++
	switch x := v.(type) {
	case int64:
		a.isum.add(x>>63, uint64(x))
	case float64:
		a.fsum += x
	}
	if a.min == nil || CompareValues(v, a.min) < 0 {
		a.min = v
	}
	if a.max == nil || CompareValues(v, a.max) > 0 {
		a.max = v
	}
}

// result is the frame's value of fn, whose input has type in; a SUM out of its type's range
// is an error.
func (a *frameAcc) result(fn RankFunc, in types.T) (any, error) {
	switch fn {
	case WinCountStar:
		return a.rows, nil
	case WinCount:
		return a.n, nil
	case WinMin:
		return a.min, nil
	case WinMax:
		return a.max, nil
	}
	if a.n == 0 {
		return nil, nil
	}
	if in.Phys() != types.PhysFloat64 {
		return a.isum.of(fn == WinAvg, a.n, in)
	}
	if fn == WinAvg {
		return a.fsum / float64(a.n), nil
	}
	return a.fsum, nil
}

func (r *Ranker) less(a, b []any) bool { return rowLess(a, b, r.Order) }

var _ Keyed = (*Ranker)(nil)

// SaveState implements Stateful: the partitions and rows changed since the last checkpoint
// go to the store; those freed leave it.
func (r *Ranker) SaveState(*StateWriter) { r.WriteChanged(r.encodeState) }

// LoadState implements Stateful: every stored partition is made resident.
func (r *Ranker) LoadState(*StateReader) error { return r.loadState() }
