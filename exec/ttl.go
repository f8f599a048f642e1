package exec

import (
	"container/heap"
	"math"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// State TTL ('state.ttl'): a key (an aggregate's group, a join's kept row) is forgotten once
// the watermark passes the watermark that followed its last change by more than the TTL.
// "Followed" is per row: the watermark after row i of a batch is the one before row i+1 (or,
// for the last row, the next Watermark message), so a key's clock, and the point at which it
// is forgotten — before any later row that finds the watermark past it — do not depend on how
// rows were cut into batches: a view fed statement by statement, fed merged deliveries, or
// rebuilt by a replay after a restart forgets the same keys.

// ttlItem is a key in a ttlQueue: its clock when queued, and its id (a side and a slot).
type ttlItem struct {
	seen int64
	side int8
	id   int32
}

// ttlQueue orders keys by their clock (a min-heap). A key is queued at most once: its
// entry may be older than its clock (it changed since), and is re-queued when it comes due.
type ttlQueue []ttlItem

func (q ttlQueue) Len() int           { return len(q) }
func (q ttlQueue) Less(i, j int) bool { return q[i].seen < q[j].seen }
func (q ttlQueue) Swap(i, j int)      { q[i], q[j] = q[j], q[i] }
func (q *ttlQueue) Push(x any)        { *q = append(*q, x.(ttlItem)) }
func (q *ttlQueue) Pop() any {
	old := *q
	it := old[len(old)-1]
	*q = old[:len(old)-1]
	return it
}

// due reports whether a queued key may have expired at watermark w.
func (q ttlQueue) due(w, ttl int64) bool {
	return len(q) > 0 && w != NoWatermark && addClamped(q[0].seen, ttl) < w
}

func (q *ttlQueue) add(it ttlItem) { heap.Push(q, it) }
func (q *ttlQueue) next() ttlItem  { return heap.Pop(q).(ttlItem) }

// clocks are the TTL clocks of an operator's slots (an aggregate's groups, one join side's
// kept rows), queued in a ttlQueue under side.
type clocks struct {
	seen   []int64 // the watermark after the slot's last change (NoWatermark: not yet known)
	recent []int32 // slots whose last change awaits the next watermark
	queued []bool  // the slot has an entry in the queue
}

// grow adds a slot without a clock.
func (c *clocks) grow() {
	c.seen = append(c.seen, NoWatermark)
	c.queued = append(c.queued, false)
}

// stamp sets slot id's clock to watermark w (NoWatermark: when the next one comes) and
// queues the slot in q unless it is queued already.
func (c *clocks) stamp(q *ttlQueue, side int8, id int32, w int64) {
	c.seen[id] = w
	if w == NoWatermark {
		c.recent = append(c.recent, id)
		return
	}
	if !c.queued[id] {
		c.queued[id] = true
		q.add(ttlItem{seen: w, side: side, id: id})
	}
}

// expire takes the entries due at watermark w and calls drop for each slot whose clock is
// more than ttl behind it; a slot that is empty (live false) or waits for a clock leaves the
// queue, one changed since it was queued is queued again.
func (q *ttlQueue) expire(w, ttl int64, clocksOf func(side int8) *clocks, live func(side int8, id int32) bool, drop func(side int8, id int32)) {
	for q.due(w, ttl) {
		it := q.next()
		c := clocksOf(it.side)
		switch seen := c.seen[it.id]; {
		case !live(it.side, it.id) || seen == NoWatermark:
			c.queued[it.id] = false
		case addClamped(seen, ttl) < w:
			c.queued[it.id] = false
			drop(it.side, it.id)
		default:
			q.add(ttlItem{seen: seen, side: it.side, id: it.id})
		}
	}
}

// watermarkAfter is the watermark after row i of b: the one before row i+1, or after when i
// is the last row (NoWatermark: not known yet).
func watermarkAfter(b *Batch, i int, after int64) int64 {
	if b.WM != nil && i+1 < b.N {
		return b.WM[i+1]
	}
	return after
}

// cutAtExpiry runs apply over b in pieces: it cuts b before each row whose watermark lets a
// key expire (a key already queued in q, or one that the piece's earlier rows changed, whose
// clocks are not queued yet), or is the first known one, so the clocks still waiting for a
// watermark are set (stamp) and the keys are forgotten (expire) before the row is applied.
// apply gets each piece with the watermark after its last row. The watermark before b's
// first row is the one after the row before it: it sets the waiting clocks (stamp) before
// anything else.
func cutAtExpiry(b *Batch, q *ttlQueue, ttl int64, stamp func(w int64), expire func(w int64) error, apply func(b *Batch, after int64) error) error {
	if b.WM == nil || b.N == 0 {
		return apply(b, NoWatermark)
	}
	stamp(b.WM[0])
	start := 0
	pending := int64(math.MaxInt64) // the least clock of the piece's rows so far
	for i := 0; i < b.N; i++ {
		if i > start && b.WM[i] != NoWatermark {
			pending = min(pending, b.WM[i]) // row i-1's clock: the watermark after it
		}
		// The first known watermark sets the clocks waiting for one, as a Watermark message
		// between the rows would.
		known := i > 0 && b.WM[i-1] == NoWatermark && b.WM[i] != NoWatermark
		soon := pending != math.MaxInt64 && b.WM[i] != NoWatermark && addClamped(pending, ttl) < b.WM[i]
		if !known && !soon && !q.due(b.WM[i], ttl) {
			continue
		}
		if i > start {
			if err := apply(b.Slice(start, i), b.WM[i]); err != nil {
				return err
			}
		}
		stamp(b.WM[i])
		if err := expire(b.WM[i]); err != nil {
			return err
		}
		start, pending = i, math.MaxInt64
	}
	if start == 0 {
		return apply(b, NoWatermark)
	}
	return apply(b.Slice(start, b.N), NoWatermark)
}

// Slice returns rows [lo, hi) of b, sharing its memory.
func (b *Batch) Slice(lo, hi int) *Batch {
	out := &Batch{N: hi - lo, Cols: make([]arrow.Array, len(b.Cols))}
	for c, a := range b.Cols {
		out.Cols[c] = array.NewSlice(a, int64(lo), int64(hi))
	}
	if b.W != nil {
		out.W = b.W[lo:hi]
	}
	if b.WM != nil {
		out.WM = b.WM[lo:hi]
	}
	return out
}

// skipForgotten runs apply over b without the retractions of rows the operator no longer
// holds: rows forgotten by the TTL. Applied, such a retraction would take from the key's
// fresh state what it never added (an aggregate's count going below its rows, a join
// retracting pairs it never emitted); Flink's aggregates drop it, and so do ours and our
// joins (Flink's joins apply it to the other side's rows). holds gives row i's
// state (a group, a kept row) and how many rows it holds before b; a retraction is dropped
// when its state holds fewer rows than it retracts at that point, b's earlier kept rows
// counted. dropped, if set, gets the dropped rows before anything is applied. With cleared
// set, b is also cut after each retraction that leaves its state holding no rows, and
// cleared is called there, before the rows after it: the operator clears that state, as
// Flink clears a group left with no rows, row by row whatever the batching. apply gets the
// pieces, each with the watermark after its last row, as cutAtExpiry does.
func skipForgotten[K comparable](b *Batch, after int64, holds func(i int) (K, int64), apply func(b *Batch, after int64) error, dropped func(rows []int), cleared func()) error {
	if b.W == nil || !slices.ContainsFunc(b.W, func(w int64) bool { return w < 0 }) {
		return apply(b, after)
	}
	var drop, zero []int
	held := map[K]int64{}
	for i, w := range b.W {
		k, n := holds(i)
		if run, ok := held[k]; ok {
			n = run
		}
		if n+w < 0 {
			drop = append(drop, i)
			continue
		}
		held[k] = n + w
		if cleared != nil && w < 0 && n+w == 0 {
			zero = append(zero, i)
		}
	}
	if len(drop) == 0 && len(zero) == 0 {
		return apply(b, after)
	}
	if dropped != nil && len(drop) > 0 {
		dropped(drop)
	}
	start := 0
	for i := 0; i < b.N; i++ {
		switch {
		case len(drop) > 0 && drop[0] == i:
			drop = drop[1:]
			if i > start {
				if err := apply(b.Slice(start, i), watermarkAfter(b, i-1, after)); err != nil {
					return err
				}
			}
			start = i + 1
		case len(zero) > 0 && zero[0] == i:
			zero = zero[1:]
			if err := apply(b.Slice(start, i+1), watermarkAfter(b, i, after)); err != nil {
				return err
			}
			cleared()
			start = i + 1
		}
	}
	if start < b.N {
		return apply(b.Slice(start, b.N), after)
	}
	return nil
}
