package exec

import (
	"cmp"
	"container/heap"
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/types"
)

// accumulator is the columnar state of one aggregate across all groups.
type accumulator interface {
	grow(groups int)
	reset(g int32)
	update(gids []int32, col arrow.Array, b *Batch) error
	result(g int32) any
	// column builds the results of groups gs as an array of type t.
	column(gs []int32, t types.T) arrow.Array
	// save and load checkpoint group g's state.
	save(w *StateWriter, g int32)
	load(r *StateReader, g int32)
}

// resultColumn builds a result column value by value (accumulators without a typed path).
func resultColumn(a accumulator, gs []int32, t types.T) arrow.Array {
	bl := NewBuilder(t, len(gs))
	for _, g := range gs {
		bl.Append(a.result(g))
	}
	return bl.Finish()
}

// newAccumulator returns the accumulator of a; counts are the groups' row counts (the sums
// of their rows' weights), which COUNT(*) reads instead of keeping its own.
// COUNT, SUM and AVG with DISTINCT take distinctAcc; STRING_AGG keeps DISTINCT itself, and it
// changes nothing to the others (MIN, MAX, BOOL_AND, FIRST_VALUE, ...), whose results do not
// depend on how many copies of a value a group holds. retract says whether the input can
// retract rows.
func newAccumulator(a AggSpec, retract bool, counts *[]int64) accumulator {
	if a.Distinct && (a.Fn == AggCount || a.Fn == AggSum || a.Fn == AggAvg) {
		return &distinctAcc{spec: a, typed: a.In.Phys() == types.PhysInt64}
	}
	switch a.Fn {
	case AggCountStar:
		return countStarAcc{counts}
	case AggCount:
		return &countAcc{}
	case AggBoolAnd, AggBoolOr:
		return &boolAcc{or: a.Fn == AggBoolOr}
	case AggStringAgg, AggFirstValue, AggLastValue:
		return &arrivalAcc{fn: a.Fn, sep: a.Sep, distinct: a.Distinct, retract: retract}
	case AggVarPop, AggVarSamp, AggStddevPop, AggStddevSamp:
		acc := &momentAcc{fn: a.Fn, scale: 1, exact: a.In.Phys() == types.PhysInt64}
		if a.In.Kind == types.Decimal {
			acc.scale = float64(types.Pow10[a.In.Scale])
		}
		return acc
	case AggSum, AggAvg:
		if a.In.Phys() == types.PhysFloat64 {
			return &floatSumAcc{avg: a.Fn == AggAvg}
		}
		if a.In.Kind == types.Decimal {
			return &intSumAcc{avg: a.Fn == AggAvg, scale: float64(types.Pow10[a.In.Scale]), decimal: a.Fn == AggSum}
		}
		return &intSumAcc{avg: a.Fn == AggAvg}
	}
	// MIN and MAX; ANY_VALUE, which may be any of the group's values, is the least (an order
	// of the values held alone, the same for a batch and a view under any changes).
	return &extremeAcc{max: a.Fn == AggMax, retract: retract}
}

// countStarAcc is COUNT(*): the group's row count, which the aggregate keeps anyway.
type countStarAcc struct{ counts *[]int64 }

func (c countStarAcc) grow(int)                                  {}
func (c countStarAcc) reset(int32)                               {}
func (c countStarAcc) update([]int32, arrow.Array, *Batch) error { return nil }
func (c countStarAcc) result(g int32) any                        { return (*c.counts)[g] }
func (c countStarAcc) save(*StateWriter, int32)                  {}
func (c countStarAcc) load(*StateReader, int32)                  {}

func (c countStarAcc) column(gs []int32, _ types.T) arrow.Array {
	vals := make([]int64, len(gs))
	for i, g := range gs {
		vals[i] = (*c.counts)[g]
	}
	return NewInt64(vals, nil)
}

// countAcc is COUNT(x): the non-NULL values' weights.
type countAcc struct {
	n []int64
}

func (c *countAcc) grow(g int) {
	for len(c.n) < g {
		c.n = append(c.n, 0)
	}
}

func (c *countAcc) update(gids []int32, col arrow.Array, b *Batch) error {
	if col.NullN() == 0 {
		if b.W == nil {
			for _, g := range gids {
				c.n[g]++
			}
			return nil
		}
		for i, g := range gids {
			c.n[g] += b.W[i]
		}
		return nil
	}
	for i, g := range gids {
		if col.IsValid(i) {
			c.n[g] += b.Weight(i)
		}
	}
	return nil
}

func (c *countAcc) result(g int32) any { return c.n[g] }

func (c *countAcc) column(gs []int32, _ types.T) arrow.Array {
	vals := make([]int64, len(gs))
	for i, g := range gs {
		vals[i] = c.n[g]
	}
	return NewInt64(vals, nil)
}

func (c *countAcc) reset(g int32) { c.n[g] = 0 }

// intSumAcc sums int64 physical values (integers, decimals) in 128 bits, so a sum can pass
// out of range and come back (a retraction) without losing anything; a result out of range —
// beyond int64, or for a DECIMAL SUM the widest DECIMAL (18 digits), as x + y must stay — is
// NULL, and err says why (overflowed).
type intSumAcc struct {
	avg     bool
	decimal bool    // a DECIMAL SUM (AVG's result is DOUBLE: it has no such bound)
	scale   float64 // DECIMAL's 10^scale for AVG; 0 for integers
	g       []intSum
	err     error
}

// intSum is one group's sum, in 128 bits (two's complement lo with hi, the high 64 bits), and
// its count of summed values: side by side, so an update touches one cache line.
type intSum struct {
	lo uint64
	hi int64
	n  int64
}

// maxDecimal bounds a DECIMAL's unscaled value: |v| < 10^18.
const maxDecimal = 1_000_000_000_000_000_000

// sum returns group g's sum, and whether it is in range.
func (s *intSumAcc) sum(g int32) (int64, bool) { return s.g[g].value(s.decimal) }

// value returns the sum, and whether it is in range: an int64, and for a DECIMAL one of at
// most 18 digits.
func (x intSum) value(decimal bool) (int64, bool) {
	v := int64(x.lo)
	if x.hi != v>>63 {
		return 0, false
	}
	return v, !decimal || (v < maxDecimal && v > -maxDecimal)
}

// float returns the sum as a float64 (for AVG).
func (x intSum) float() float64 {
	if v := int64(x.lo); x.hi == v>>63 {
		return float64(v)
	}
	return float64(x.hi)*(1<<64) + float64(x.lo)
}

// of is the SUM, or with avg the AVG, of the n values of type in summed in x: an AVG is a
// float; a SUM out of its type's range is an error.
func (x intSum) of(avg bool, n int64, in types.T) (any, error) {
	decimal := in.Kind == types.Decimal
	if avg {
		f := x.float() / float64(n)
		if decimal {
			f /= float64(types.Pow10[in.Scale])
		}
		return f, nil
	}
	v, ok := x.value(decimal)
	if !ok {
		return nil, sumOverflow(decimal)
	}
	return v, nil
}

// sumOverflow is the error of a SUM out of its type's range.
func sumOverflow(decimal bool) error {
	if decimal {
		return errDecOverflow
	}
	return errIntSum
}

var errIntSum = errors.New("integer overflow in SUM")

// overflowed takes the error of a result out of range since it was last called.
func (s *intSumAcc) overflowed() error {
	err := s.err
	s.err = nil
	return err
}

func (s *intSumAcc) grow(g int) {
	for len(s.g) < g {
		s.g = append(s.g, intSum{})
	}
}

// add adds the 128-bit value hi:lo to a sum.
func (x *intSum) add(hi int64, lo uint64) {
	r, carry := bits.Add64(x.lo, lo, 0)
	x.lo = r
	x.hi += hi + int64(carry)
}

func (s *intSumAcc) update(gids []int32, col arrow.Array, b *Batch) error {
	vals := Int64s(col)[:len(gids)]
	noNulls := col.NullN() == 0
	if noNulls && b.W == nil {
		for i, g := range gids {
			x := &s.g[g]
			x.add(vals[i]>>63, uint64(vals[i]))
			x.n++
		}
		return nil
	}
	for i, g := range gids {
		if !noNulls && col.IsNull(i) {
			continue
		}
		v, w, x := vals[i], b.Weight(i), &s.g[g]
		if w == 1 {
			x.add(v>>63, uint64(v))
			x.n++
			continue
		}
		// v * w in 128 bits: the product of the magnitudes, negated when the signs differ.
		hi, lo := bits.Mul64(uint64(abs64(v)), uint64(abs64(w)))
		if (v < 0) != (w < 0) {
			lo = ^lo + 1
			hi = ^hi
			if lo == 0 {
				hi++
			}
		}
		x.add(int64(hi), lo)
		x.n += w
	}
	return nil
}

// abs64 is |v|; of math.MinInt64 too, read as unsigned.
func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

func (s *intSumAcc) reset(g int32) { s.g[g] = intSum{} }

func (s *intSumAcc) column(gs []int32, t types.T) arrow.Array {
	if s.avg {
		return resultColumn(s, gs, t)
	}
	vals := make([]int64, len(gs))
	var valid []bool
	for i, g := range gs {
		v, ok := s.sum(g)
		if !ok && s.g[g].n > 0 {
			s.fail()
		}
		if !ok || s.g[g].n <= 0 {
			if valid == nil {
				valid = make([]bool, len(gs))
				for k := 0; k < i; k++ {
					valid[k] = true
				}
			}
			continue
		}
		if valid != nil {
			valid[i] = true
		}
		vals[i] = v
	}
	return NewInt64(vals, valid)
}

func (s *intSumAcc) fail() { s.err = sumOverflow(s.decimal) }

func (s *intSumAcc) result(g int32) any {
	x := s.g[g]
	if x.n <= 0 {
		return nil
	}
	if s.avg {
		f := x.float() / float64(x.n)
		if s.scale != 0 {
			f /= s.scale
		}
		return f
	}
	v, ok := s.sum(g)
	if !ok {
		s.fail()
		return nil
	}
	return v
}

// nonFinite counts a group's NaN, +Inf and -Inf values, which float sums keep apart: NaN -
// NaN is not 0, so a sum they entered could never recover when their rows are retracted.
type nonFinite struct{ nan, pos, neg []int64 }

func (f *nonFinite) grow(g int) {
	for len(f.nan) < g {
		f.nan, f.pos, f.neg = append(f.nan, 0), append(f.pos, 0), append(f.neg, 0)
	}
}

// add counts x with weight w when it is not finite, and reports whether it was.
func (f *nonFinite) add(g int32, x float64, w int64) bool {
	switch {
	case x != x:
		f.nan[g] += w
	case math.IsInf(x, 1):
		f.pos[g] += w
	case math.IsInf(x, -1):
		f.neg[g] += w
	default:
		return false
	}
	return true
}

// value is what the group's non-finite values make a sum (ok false when there are none).
func (f *nonFinite) value(g int32) (v float64, ok bool) {
	switch {
	case f.nan[g] > 0 || f.pos[g] > 0 && f.neg[g] > 0:
		return math.NaN(), true
	case f.pos[g] > 0:
		return math.Inf(1), true
	case f.neg[g] > 0:
		return math.Inf(-1), true
	}
	return 0, false
}

func (f *nonFinite) reset(g int32) { f.nan[g], f.pos[g], f.neg[g] = 0, 0, 0 }

func (f *nonFinite) save(w *StateWriter, g int32) {
	w.Int(f.nan[g])
	w.Int(f.pos[g])
	w.Int(f.neg[g])
}

func (f *nonFinite) load(r *StateReader, g int32) {
	f.nan[g], f.pos[g], f.neg[g] = r.Int(), r.Int(), r.Int()
}

type floatSumAcc struct {
	avg bool
	sum []float64
	n   []int64
	nonFinite
}

func (s *floatSumAcc) grow(g int) {
	for len(s.sum) < g {
		s.sum = append(s.sum, 0)
		s.n = append(s.n, 0)
	}
	s.nonFinite.grow(g)
}

func (s *floatSumAcc) update(gids []int32, col arrow.Array, b *Batch) error {
	vals := Float64s(col)
	for i, g := range gids {
		if col.IsNull(i) {
			continue
		}
		w := b.Weight(i)
		s.n[g] += w
		if !s.nonFinite.add(g, vals[i], w) {
			s.sum[g] += vals[i] * float64(w)
		}
	}
	return nil
}

func (s *floatSumAcc) reset(g int32) {
	s.sum[g], s.n[g] = 0, 0
	s.nonFinite.reset(g)
}

func (s *floatSumAcc) column(gs []int32, t types.T) arrow.Array { return resultColumn(s, gs, t) }

func (s *floatSumAcc) result(g int32) any {
	if s.n[g] <= 0 {
		return nil
	}
	sum := s.sum[g]
	if v, ok := s.nonFinite.value(g); ok {
		sum = v
	}
	if s.avg {
		return sum / float64(s.n[g])
	}
	return sum
}

// momentAcc keeps a group's count, sum and sum of squares, under insertions and
// retractions, for the variances and standard deviations (population: over n; sample: over
// n-1, NULL for one value). Integer and DECIMAL input is summed exactly (unscaled, in
// big integers), so retractions leave no rounding behind and equal values spread 0; DOUBLE
// input is summed in floats, its NaN and infinities apart, as differences from a shift: the
// group's first finite value (NaN until then, and again once the group empties), so values
// far from 0 but close together keep their spread (the shifted-data algorithm; the variance
// does not depend on the shift).
type momentAcc struct {
	fn         AggFunc
	scale      float64 // a DECIMAL input's 10^scale (1 otherwise)
	exact      bool    // integer or DECIMAL input
	n          []int64
	sum, sumsq []float64  // DOUBLE input, minus shift
	shift      []float64  // DOUBLE input
	isum, isq  []*big.Int // exact input
	nonFinite
	x, w big.Int // scratch
}

func (m *momentAcc) grow(g int) {
	for len(m.n) < g {
		m.n = append(m.n, 0)
		if m.exact {
			m.isum, m.isq = append(m.isum, new(big.Int)), append(m.isq, new(big.Int))
		} else {
			m.sum, m.sumsq, m.shift = append(m.sum, 0), append(m.sumsq, 0), append(m.shift, math.NaN())
		}
	}
	m.nonFinite.grow(g)
}

func (m *momentAcc) update(gids []int32, col arrow.Array, b *Batch) error {
	for i, g := range gids {
		if col.IsNull(i) {
			continue
		}
		w := b.Weight(i)
		m.n[g] += w
		if m.exact {
			m.x.SetInt64(col.(*array.Int64).Value(i))
			m.w.SetInt64(w)
			m.x.Mul(&m.x, &m.w)
			m.isum[g].Add(m.isum[g], &m.x) // x·w
			m.w.SetInt64(col.(*array.Int64).Value(i))
			m.x.Mul(&m.x, &m.w)
			m.isq[g].Add(m.isq[g], &m.x) // x²·w
			continue
		}
		x := col.(*array.Float64).Value(i)
		if !m.nonFinite.add(g, x, w) {
			if math.IsNaN(m.shift[g]) {
				m.shift[g] = x
			}
			d := x - m.shift[g]
			m.sum[g] += d * float64(w)
			m.sumsq[g] += d * d * float64(w)
		}
		if m.n[g] == 0 { // emptied: the next value starts afresh, with no rounding left behind
			m.sum[g], m.sumsq[g], m.shift[g] = 0, 0, math.NaN()
		}
	}
	return nil
}

func (m *momentAcc) reset(g int32) {
	m.n[g] = 0
	if m.exact {
		m.isum[g].SetInt64(0)
		m.isq[g].SetInt64(0)
	} else {
		m.sum[g], m.sumsq[g], m.shift[g] = 0, 0, math.NaN()
	}
	m.nonFinite.reset(g)
}

func (m *momentAcc) column(gs []int32, t types.T) arrow.Array { return resultColumn(m, gs, t) }

func (m *momentAcc) result(g int32) any {
	n := float64(m.n[g])
	div := n
	if m.fn == AggVarSamp || m.fn == AggStddevSamp {
		div = n - 1
	}
	if m.n[g] <= 0 || div <= 0 {
		return nil
	}
	if _, ok := m.nonFinite.value(g); ok {
		return math.NaN() // the spread of values that include NaN or an infinity
	}
	var v float64
	if m.exact {
		// (n·Σx² − (Σx)²) / (n·div), exact up to the last division.
		num := new(big.Int).Mul(big.NewInt(m.n[g]), m.isq[g])
		num.Sub(num, new(big.Int).Mul(m.isum[g], m.isum[g]))
		f, _ := new(big.Float).SetInt(num).Float64()
		v = max(0, f/(n*div)/(m.scale*m.scale))
	} else {
		v = max(0, (m.sumsq[g]-m.sum[g]*m.sum[g]/n)/div) // rounding can take it below 0
	}
	if m.fn == AggStddevPop || m.fn == AggStddevSamp {
		return math.Sqrt(v)
	}
	return v
}

func (m *momentAcc) save(w *StateWriter, g int32) {
	w.Int(m.n[g])
	if m.exact {
		w.Value(m.isum[g].String())
		w.Value(m.isq[g].String())
		return
	}
	w.Value(m.sum[g])
	w.Value(m.sumsq[g])
	w.Bool(!math.IsNaN(m.shift[g]))
	w.Value(m.shift[g])
	m.nonFinite.save(w, g)
}

func (m *momentAcc) load(r *StateReader, g int32) {
	m.n[g] = r.Int()
	if m.exact {
		for _, z := range []*big.Int{m.isum[g], m.isq[g]} {
			if s, ok := r.Value().(string); !ok {
				r.fail()
			} else if _, ok := z.SetString(s, 10); !ok {
				r.fail()
			}
		}
		return
	}
	m.sum[g], _ = r.Value().(float64)
	m.sumsq[g], _ = r.Value().(float64)
	m.shift[g] = math.NaN()
	set := r.Bool()
	if x, ok := r.Value().(float64); ok && set {
		m.shift[g] = x
	}
	m.nonFinite.load(r, g)
}

// extremeAcc keeps MIN or MAX: the current extreme for insert-only input, or, when the
// input can retract, also a multiset of values and a heap of them, best first, in which the
// next extreme is found when the current one's last copy is retracted — once, when the
// result is next read (stale marks it), not per retraction. The heap is built from the
// multiset when first needed and keeps values that left until they reach its top (or until
// it holds twice as many as the multiset, when it is rebuilt), so deleting the extreme of a
// group of n, statement after statement, costs log n each, not n.
type extremeAcc struct {
	max, retract bool
	val          []any
	multi        []map[any]int64
	order        []*extremeHeap // nil until first needed
	stale        []bool
}

// extremeHeap holds multiset keys, the best value (by better) first.
type extremeHeap struct {
	keys   []any
	better func(a, b any) bool
}

func (h *extremeHeap) Len() int { return len(h.keys) }
func (h *extremeHeap) Less(i, j int) bool {
	return h.better(multisetValue(h.keys[i]), multisetValue(h.keys[j]))
}
func (h *extremeHeap) Swap(i, j int) { h.keys[i], h.keys[j] = h.keys[j], h.keys[i] }
func (h *extremeHeap) Push(x any)    { h.keys = append(h.keys, x) }
func (h *extremeHeap) Pop() any {
	k := h.keys[len(h.keys)-1]
	h.keys = h.keys[:len(h.keys)-1]
	return k
}

func (e *extremeAcc) grow(g int) {
	for len(e.val) < g {
		e.val, e.stale, e.order = append(e.val, nil), append(e.stale, false), append(e.order, nil)
		var m map[any]int64
		if e.retract {
			m = map[any]int64{}
		}
		e.multi = append(e.multi, m)
	}
}

func (e *extremeAcc) better(a, b any) bool {
	c := CompareValues(a, b)
	if e.max {
		return c > 0
	}
	return c < 0
}

func (e *extremeAcc) update(gids []int32, col arrow.Array, b *Batch) error {
	for i, g := range gids {
		if col.IsNull(i) {
			continue
		}
		v := Value(col, i)
		w := b.Weight(i)
		if e.multi[g] == nil && w < 0 {
			return fmt.Errorf("internal error: MIN/MAX retraction on an insert-only aggregate")
		}
		if m := e.multi[g]; m != nil {
			k := multisetKey(v)
			m[k] += w
			if h := e.order[g]; h != nil && w > 0 && m[k] == w { // a value new to the group
				heap.Push(h, k)
			}
			switch {
			case m[k] > 0:
				if w > 0 && !e.stale[g] && (e.val[g] == nil || e.better(v, e.val[g])) {
					e.val[g] = v
				}
			case e.val[g] != nil && CompareValues(v, e.val[g]) == 0:
				// The extreme's last copy left: the next one is found among the rest when
				// the result is read (settle).
				delete(m, k)
				e.val[g], e.stale[g] = nil, true
			default:
				// None left (below zero: a retraction of a value the group never held, which
				// only a TTL's forgotten rows bring about; the group holds none of it).
				delete(m, k)
			}
			continue
		}
		if e.val[g] == nil || e.better(v, e.val[g]) {
			e.val[g] = v
		}
	}
	return nil
}

func (e *extremeAcc) result(g int32) any {
	e.settle(g)
	return e.val[g]
}

// settle finds group g's extreme in its heap, if its last one left since.
func (e *extremeAcc) settle(g int32) {
	if !e.stale[g] {
		return
	}
	e.val[g], e.stale[g] = nil, false
	m, h := e.multi[g], e.order[g]
	if h == nil || len(h.keys) > 2*len(m)+16 {
		h = &extremeHeap{keys: make([]any, 0, len(m)), better: e.better}
		for k := range m {
			h.keys = append(h.keys, k)
		}
		heap.Init(h)
		e.order[g] = h
	}
	for len(h.keys) > 0 && m[h.keys[0]] <= 0 { // values that left
		heap.Pop(h)
	}
	if len(h.keys) > 0 {
		e.val[g] = multisetValue(h.keys[0])
	}
}

func (e *extremeAcc) column(gs []int32, t types.T) arrow.Array { return resultColumn(e, gs, t) }

func (e *extremeAcc) reset(g int32) {
	e.val[g], e.stale[g], e.order[g] = nil, false, nil
	if e.retract {
		e.multi[g] = map[any]int64{}
	}
}

// boolAcc is BOOL_AND or BOOL_OR: a group's weights of TRUE and of FALSE values, so that a
// retraction takes its value out exactly. BOOL_AND is whether the group holds no FALSE,
// BOOL_OR whether it holds a TRUE; both are NULL while it holds no non-NULL value.
type boolAcc struct {
	or bool
	n  []boolCounts
}

// boolCounts are a group's weights of TRUE (t) and FALSE (f) values.
type boolCounts struct{ t, f int64 }

func (a *boolAcc) grow(g int) {
	for len(a.n) < g {
		a.n = append(a.n, boolCounts{})
	}
}

func (a *boolAcc) update(gids []int32, col arrow.Array, b *Batch) error {
	for i, g := range gids {
		if col.IsNull(i) {
			continue
		}
		if col.(*array.Boolean).Value(i) {
			a.n[g].t += b.Weight(i)
		} else {
			a.n[g].f += b.Weight(i)
		}
	}
	return nil
}

func (a *boolAcc) result(g int32) any {
	c := a.n[g]
	switch {
	case c.t <= 0 && c.f <= 0:
		return nil
	case a.or:
		return c.t > 0
	}
	return c.f <= 0
}

func (a *boolAcc) column(gs []int32, t types.T) arrow.Array { return resultColumn(a, gs, t) }
func (a *boolAcc) reset(g int32)                            { a.n[g] = boolCounts{} }
func (a *boolAcc) save(w *StateWriter, g int32)             { w.Int(a.n[g].t); w.Int(a.n[g].f) }
func (a *boolAcc) load(r *StateReader, g int32)             { a.n[g] = boolCounts{t: r.Int(), f: r.Int()} }

// arrivalAcc is STRING_AGG and LISTAGG, FIRST_VALUE and LAST_VALUE: the aggregates of a
// group's non-NULL values in arrival order, the order in which their rows reach the
// aggregate (a batch query's scan reads a table's rows in acceptance order; a view gets its
// changes in the order they were made, its backfill first). STRING_AGG concatenates the
// values in that order with sep between (each value once with DISTINCT, where its oldest
// live copy stands); FIRST_VALUE is the first value and LAST_VALUE the last, as in Flink;
// each is NULL while the group holds no non-NULL value.
//
// A retraction names a value, not which of its copies leaves: it takes the oldest live copy
// (with weight w, the w oldest). With distinct values, or without retractions, the order is
// exactly the rows' arrival order; with retracted duplicates, equal values may stand where
// their other copies arrived.
//
// Without retractions (Retract false: a batch query) FIRST_VALUE keeps only its first value
// and LAST_VALUE its last; otherwise every live value is kept (see arrivals).
type arrivalAcc struct {
	fn       AggFunc // AggStringAgg, AggFirstValue or AggLastValue
	sep      string
	distinct bool
	retract  bool
	lists    []arrivals
}

// arrivals are a group's live values in arrival order, numbered by arrival (seq).
//
// Invariants: vals is in ascending seq order, every seq below next; an entry whose v is nil is
// a tombstone (a retracted value: NULLs are never kept), dead counts them, neither end of vals
// is one, and dead <= len(vals)/2 (more are compacted away), so memory is bounded by the live
// values. With retractions, copies lists, for each live value (multisetKey), the seqs of its
// live copies, oldest first.
type arrivals struct {
	vals   []arrival
	dead   int
	next   int64
	copies map[any][]int64
}

// arrival is one value of arrivals and its seq.
type arrival struct {
	seq int64
	v   any
}

func (a *arrivalAcc) grow(g int) {
	for len(a.lists) < g {
		a.lists = append(a.lists, arrivals{})
	}
}

func (a *arrivalAcc) reset(g int32) { a.lists[g] = arrivals{} }

func (a *arrivalAcc) update(gids []int32, col arrow.Array, b *Batch) error {
	for i, g := range gids {
		if col.IsNull(i) {
			continue
		}
		l, v, w := &a.lists[g], Value(col, i), b.Weight(i)
		switch {
		case w < 0:
			if a.retract {
				l.retract(v, -w)
			}
		case !a.retract && a.fn != AggStringAgg:
			// Only the first value, or the last, counts.
			if a.fn == AggLastValue || len(l.vals) == 0 {
				l.vals = append(l.vals[:0], arrival{v: v})
			}
		default:
			for ; w > 0; w-- {
				l.push(v, a.retract)
			}
		}
	}
	return nil
}

// push appends value v; copies tracks it when the input can retract.
func (l *arrivals) push(v any, retract bool) {
	l.vals = append(l.vals, arrival{seq: l.next, v: v})
	if retract {
		if l.copies == nil {
			l.copies = map[any][]int64{}
		}
		k := multisetKey(v)
		l.copies[k] = append(l.copies[k], l.next)
	}
	l.next++
}

// retract takes out the n oldest live copies of v (as many as there are: a retraction of a
// value the group does not hold, which only a TTL's forgotten rows bring about, changes
// nothing).
func (l *arrivals) retract(v any, n int64) {
	k := multisetKey(v)
	seqs := l.copies[k]
	for ; n > 0 && len(seqs) > 0; n-- {
		j, _ := slices.BinarySearchFunc(l.vals, seqs[0], func(e arrival, seq int64) int { return cmp.Compare(e.seq, seq) })
		l.vals[j].v = nil
		l.dead++
		seqs = seqs[1:]
	}
	if len(seqs) == 0 {
		delete(l.copies, k)
	} else {
		l.copies[k] = seqs
	}
	for len(l.vals) > 0 && l.vals[0].v == nil {
		l.vals, l.dead = l.vals[1:], l.dead-1
	}
	for len(l.vals) > 0 && l.vals[len(l.vals)-1].v == nil {
		l.vals, l.dead = l.vals[:len(l.vals)-1], l.dead-1
	}
	if l.dead > len(l.vals)/2 {
		live := make([]arrival, 0, len(l.vals)-l.dead)
		for _, e := range l.vals {
			if e.v != nil {
				live = append(live, e)
			}
		}
		l.vals, l.dead = live, 0
	}
}

func (a *arrivalAcc) result(g int32) any {
	vals := a.lists[g].vals
	if len(vals) == 0 {
		return nil
	}
	switch a.fn {
	case AggFirstValue:
		return vals[0].v
	case AggLastValue:
		return vals[len(vals)-1].v
	}
	var seen map[string]bool
	if a.distinct {
		seen = map[string]bool{}
	}
	var sb strings.Builder
	first := true
	for _, e := range vals {
		s, ok := e.v.(string)
		if !ok || seen[s] { // a tombstone, or (DISTINCT) a value already written
			continue
		}
		if seen != nil {
			seen[s] = true
		}
		if !first {
			sb.WriteString(a.sep)
		}
		sb.WriteString(s)
		first = false
	}
	return sb.String()
}

func (a *arrivalAcc) column(gs []int32, t types.T) arrow.Array { return resultColumn(a, gs, t) }

// save writes group g's live values in arrival order; load numbers them anew from 0, which
// keeps their order and every later arrival's seq above theirs.
func (a *arrivalAcc) save(w *StateWriter, g int32) {
	l := &a.lists[g]
	w.Int(int64(len(l.vals) - l.dead))
	for _, e := range l.vals {
		if e.v != nil {
			w.Value(e.v)
		}
	}
}

func (a *arrivalAcc) load(r *StateReader, g int32) {
	n := r.Len()
	l := arrivals{vals: make([]arrival, 0, max(n, 0))}
	for i := 0; i < n && r.Err() == nil; i++ {
		l.push(r.Value(), a.retract)
	}
	a.lists[g] = l
}

// distinctAcc is COUNT, SUM or AVG of the distinct non-NULL values.
type distinctAcc struct {
	spec AggSpec
	sets []map[any]int64
	// typed: the values are int64s (BIGINT, TIMESTAMP, ...), kept in ints instead of sets,
	// unboxed (hashing an int64 key, not an interface).
	typed bool
	ints  []map[int64]int64
	err   error // a SUM out of range (see intSumAcc)
}

func (d *distinctAcc) grow(g int) {
	if d.typed {
		for len(d.ints) < g {
			d.ints = append(d.ints, map[int64]int64{})
		}
		return
	}
	for len(d.sets) < g {
		d.sets = append(d.sets, map[any]int64{})
	}
}

func (d *distinctAcc) update(gids []int32, col arrow.Array, b *Batch) error {
	if d.typed {
		vals := Int64s(col)
		noNulls := col.NullN() == 0
		for i, g := range gids {
			if !noNulls && col.IsNull(i) {
				continue
			}
			m, k := d.ints[g], vals[i]
			if b.W == nil {
				m[k]++
				continue
			}
			if m[k] += b.Weight(i); m[k] <= 0 {
				delete(m, k)
			}
		}
		return nil
	}
	for i, g := range gids {
		if col.IsNull(i) {
			continue
		}
		k := multisetKey(Value(col, i))
		// (Below zero: a retraction of a value the group never held, which only a TTL's
		// forgotten rows bring about; the group holds none of it.)
		if d.sets[g][k] += b.Weight(i); d.sets[g][k] <= 0 {
			delete(d.sets[g], k)
		}
	}
	return nil
}

func (d *distinctAcc) reset(g int32) {
	if d.typed {
		d.ints[g] = map[int64]int64{}
		return
	}
	d.sets[g] = map[any]int64{}
}

func (d *distinctAcc) column(gs []int32, t types.T) arrow.Array { return resultColumn(d, gs, t) }

func (d *distinctAcc) result(g int32) any {
	n := 0
	if d.typed {
		n = len(d.ints[g])
	} else {
		n = len(d.sets[g])
	}
	if d.spec.Fn == AggCount {
		return int64(n)
	}
	if n == 0 {
		return nil
	}
	if !d.typed { // DOUBLE: the other sums are of int64-backed values
		// Summed in order, so the sum does not depend on the map's.
		floats := make([]float64, 0, n)
		for k := range d.sets[g] {
			floats = append(floats, multisetValue(k).(float64))
		}
		slices.SortFunc(floats, compareFloat)
		var fsum float64
		for _, x := range floats {
			fsum += x
		}
		if d.spec.Fn == AggAvg {
			return fsum / float64(n)
		}
		return fsum
	}
	var sum intSum // exact, as intSumAcc's
	for x := range d.ints[g] {
		sum.add(x>>63, uint64(x))
	}
	v, err := sum.of(d.spec.Fn == AggAvg, int64(n), d.spec.In)
	if err != nil {
		d.err = err
	}
	return v
}

// overflowed takes the error of a SUM out of range since it was last called.
func (d *distinctAcc) overflowed() error {
	err := d.err
	d.err = nil
	return err
}

func (c *countAcc) save(w *StateWriter, g int32) { w.Int(c.n[g]) }
func (c *countAcc) load(r *StateReader, g int32) { c.n[g] = r.Int() }
func (s *intSumAcc) save(w *StateWriter, g int32) {
	x := s.g[g]
	w.Int(x.hi)
	w.Int(int64(x.lo))
	w.Int(x.n)
}
func (s *intSumAcc) load(r *StateReader, g int32) {
	s.g[g] = intSum{hi: r.Int(), lo: uint64(r.Int()), n: r.Int()}
}
func (s *floatSumAcc) save(w *StateWriter, g int32) {
	w.Value(s.sum[g])
	w.Int(s.n[g])
	s.nonFinite.save(w, g)
}
func (s *floatSumAcc) load(r *StateReader, g int32) {
	if f, ok := r.Value().(float64); ok {
		s.sum[g] = f
	}
	s.n[g] = r.Int()
	s.nonFinite.load(r, g)
}
func (e *extremeAcc) save(w *StateWriter, g int32) {
	e.settle(g)
	w.Value(e.val[g])
	saveMultiset(w, e.multi[g])
}
func (e *extremeAcc) load(r *StateReader, g int32) {
	e.val[g], e.stale[g], e.order[g] = r.Value(), false, nil
	if m := loadMultiset(r); e.retract {
		e.multi[g] = m
	}
}
func (d *distinctAcc) save(w *StateWriter, g int32) {
	if d.typed {
		m := make(map[any]int64, len(d.ints[g]))
		for k, n := range d.ints[g] {
			m[k] = n
		}
		saveMultiset(w, m)
		return
	}
	saveMultiset(w, d.sets[g])
}
func (d *distinctAcc) load(r *StateReader, g int32) {
	m := loadMultiset(r)
	if d.typed {
		ints := make(map[int64]int64, len(m))
		for k, n := range m {
			ints[k.(int64)] = n
		}
		d.ints[g] = ints
		return
	}
	d.sets[g] = m
}

// A multiset of values is a map from value to count; NaN, which is not equal to itself,
// is kept as nanKey.
type nanKey struct{}

func multisetKey(v any) any {
	if f, ok := v.(float64); ok && f != f {
		return nanKey{}
	}
	return v
}

func multisetValue(k any) any {
	if _, ok := k.(nanKey); ok {
		return math.NaN()
	}
	return k
}

func saveMultiset(w *StateWriter, m map[any]int64) {
	w.Int(int64(len(m)))
	for k, n := range m {
		w.Value(multisetValue(k))
		w.Int(n)
	}
}

func loadMultiset(r *StateReader) map[any]int64 {
	n := r.Len()
	m := make(map[any]int64, max(n, 0))
	for i := 0; i < n && r.Err() == nil; i++ {
		m[multisetKey(r.Value())] = r.Int()
	}
	return m
}
