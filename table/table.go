// Package table holds the stored rows of one table: an ordered list of segments (Arrow
// batches in the engine's physical representation) persisted as Arrow IPC in the state
// store, plus the primary-key index of upsert tables. Decoded segments are kept in memory up
// to a byte budget (the most recently used first); the rest are read back from the store
// when a scan or a write needs them, so a table can be larger than memory.
//
// Invariant: segments are in acceptance order (segment seq order, rows in order within a
// segment; seqs come from the store-wide Sequence, so they also order segments across
// tables), so a scan replays rows in the order they were accepted; in an upsert table each
// key has at most one stored row, the last one accepted.
package table

import (
	"bytes"
	"container/list"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// CacheBytes is how many bytes of decoded segments a table keeps in memory.
var CacheBytes int64 = 64 << 20

// Segment is a batch of stored rows (all weights +1).
type Segment struct {
	Seq   uint64
	N     int
	size  int64
	batch *exec.Batch   // nil when not in memory
	lru   *list.Element // position in the table's cache, when in memory
}

type rowRef struct {
	seg *Segment
	row int
}

// Table is the stored rows of one table.
type Table struct {
	ID    uint64
	Types []types.T
	Names []string
	// PK lists the primary key columns; empty for an append table.
	PK     []int
	segs   []*Segment
	seq    *state.Sequence
	store  *state.Store
	index  map[string]rowRef
	rows   int
	cache  *list.List // of *Segment, most recently used at the front
	cached int64
}

// New returns an empty table stored in store.
func New(id uint64, names []string, ts []types.T, pk []int, seq *state.Sequence, store *state.Store) *Table {
	t := &Table{ID: id, Names: names, Types: ts, PK: pk, seq: seq, store: store, cache: list.New()}
	if len(pk) > 0 {
		t.index = map[string]rowRef{}
	}
	return t
}

// Load reads the table's segments from the store.
func (t *Table) Load() error {
	return t.store.Segments(t.ID, func(seq uint64, v []byte) error {
		b, err := t.decode(bytes.Clone(v))
		if err != nil {
			return fmt.Errorf("table segment %d/%d: %w", t.ID, seq, err)
		}
		seg := &Segment{Seq: seq, N: b.N, size: int64(len(v))}
		t.segs = append(t.segs, seg)
		t.rows += b.N
		t.seq.Observe(seq)
		t.indexRows(seg, b)
		t.keep(seg, b)
		return nil
	})
}

// Rows is the number of stored rows.
func (t *Table) Rows() int { return t.rows }

// Segments returns the stored segments in acceptance order. The caller must not modify them.
func (t *Table) Segments() []*Segment { return t.segs }

// Batch returns a segment's rows, reading them from the store if they are not in memory.
func (t *Table) Batch(s *Segment) (*exec.Batch, error) {
	if s.batch != nil {
		t.cache.MoveToFront(s.lru)
		return s.batch, nil
	}
	v, err := t.store.Segment(t.ID, s.Seq)
	if err != nil {
		return nil, err
	}
	b, err := t.decode(v)
	if err != nil {
		return nil, fmt.Errorf("table segment %d/%d: %w", t.ID, s.Seq, err)
	}
	t.keep(s, b)
	return b, nil
}

// keep puts a decoded segment in the cache and evicts the least recently used beyond the
// budget.
func (t *Table) keep(s *Segment, b *exec.Batch) {
	if s.batch != nil {
		t.cached -= s.size
		t.cache.Remove(s.lru)
	}
	s.batch = b
	s.lru = t.cache.PushFront(s)
	t.cached += s.size
	for t.cached > CacheBytes && t.cache.Len() > 1 {
		old := t.cache.Remove(t.cache.Back()).(*Segment)
		old.batch, old.lru = nil, nil
		t.cached -= old.size
	}
}

func (t *Table) drop(s *Segment) {
	if s.batch != nil {
		t.cache.Remove(s.lru)
		t.cached -= s.size
		s.batch, s.lru = nil, nil
	}
}

// Scan calls fn with the stored rows in acceptance order, in batches of up to maxRows (small
// segments are coalesced).
func (t *Table) Scan(maxRows int, fn func(*exec.Batch) error) error {
	var pending []*exec.Batch
	n := 0
	flush := func() error {
		if n == 0 {
			return nil
		}
		b := exec.Concat(pending, t.Types)
		pending, n = pending[:0], 0
		return fn(b)
	}
	for _, s := range t.segs {
		b, err := t.Batch(s)
		if err != nil {
			return err
		}
		if b.N >= maxRows/4 {
			if err := flush(); err != nil {
				return err
			}
			if err := fn(b); err != nil {
				return err
			}
			continue
		}
		pending = append(pending, b)
		n += b.N
		if n >= maxRows {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}

// KeyOf encodes the primary key of row i of b.
func (t *Table) KeyOf(b *exec.Batch, i int) string {
	var buf []byte
	for _, c := range t.PK {
		buf = exec.AppendKey(buf, b.Cols[c], i)
	}
	return string(buf)
}

// Change is the effect of a write: the rows removed (old versions, deleted rows) and the
// rows added, to be applied to the store with Write and sent to views.
type Change struct {
	table *Table
	added *exec.Batch
	// Kept lists the rows of the inserted batch that were kept, when some were superseded
	// by a later row with the same key in the same batch; nil when all were kept.
	Kept    []int32
	removed map[*Segment][]bool // per segment, rows to drop
	old     map[*Segment]*exec.Batch
	Deleted *exec.Batch // the removed rows, in acceptance order
}

// Added returns the rows the change adds (nil if none).
func (c *Change) Added() *exec.Batch { return c.added }

// Insert prepares the insertion of rows b. In an upsert table a row whose key is stored
// replaces it, and of several rows with one key in b the last wins.
func (t *Table) Insert(b *exec.Batch) (*Change, error) {
	c := &Change{table: t, added: b, removed: map[*Segment][]bool{}, old: map[*Segment]*exec.Batch{}}
	if t.index == nil || b.N == 0 {
		return c, nil
	}
	last := make(map[string]int, b.N)
	for i := 0; i < b.N; i++ {
		last[t.KeyOf(b, i)] = i
	}
	if len(last) < b.N {
		keep := make([]int32, 0, len(last))
		for i := 0; i < b.N; i++ {
			if last[t.KeyOf(b, i)] == i {
				keep = append(keep, int32(i))
			}
		}
		c.added = exec.Take(b, keep, t.Types)
		c.Kept = keep
	}
	for k := range last {
		if ref, ok := t.index[k]; ok {
			if err := c.mark(ref.seg, ref.row); err != nil {
				return nil, err
			}
		}
	}
	c.collectDeleted()
	return c, nil
}

// Delete prepares the removal of the rows for which drop reports true.
func (t *Table) Delete(drop func(b *exec.Batch) ([]bool, error)) (*Change, error) {
	c := &Change{table: t, removed: map[*Segment][]bool{}, old: map[*Segment]*exec.Batch{}}
	for _, s := range t.segs {
		b, err := t.Batch(s)
		if err != nil {
			return nil, err
		}
		d, err := drop(b)
		if err != nil {
			return nil, err
		}
		for i, x := range d {
			if x {
				if err := c.mark(s, i); err != nil {
					return nil, err
				}
			}
		}
	}
	c.collectDeleted()
	return c, nil
}

// Replace prepares an update: the rows removed by c are replaced by rows b (appended as a
// new version, as an upsert would).
func (c *Change) Replace(b *exec.Batch) { c.added = b }

func (c *Change) mark(s *Segment, row int) error {
	m := c.removed[s]
	if m == nil {
		b, err := c.table.Batch(s)
		if err != nil {
			return err
		}
		m = make([]bool, s.N)
		c.removed[s] = m
		c.old[s] = b
	}
	m[row] = true
	return nil
}

func (c *Change) collectDeleted() {
	var parts []*exec.Batch
	for _, s := range c.table.segs {
		m := c.removed[s]
		if m == nil {
			continue
		}
		var idx []int32
		for i, x := range m {
			if x {
				idx = append(idx, int32(i))
			}
		}
		parts = append(parts, exec.Take(c.old[s], idx, c.table.Types))
	}
	if len(parts) > 0 {
		c.Deleted = exec.Concat(parts, c.table.Types)
	}
}

// Write adds the change's writes to batch wb and returns the function that applies the
// change to the table once wb has committed; the table is untouched until then.
func (c *Change) Write(wb *state.Batch) (func(), error) {
	t := c.table
	type rewrite struct {
		seg       *Segment
		old, keep *exec.Batch
		size      int64
	}
	var rewrites []rewrite
	for s, m := range c.removed {
		var idx []int32
		for i, x := range m {
			if !x {
				idx = append(idx, int32(i))
			}
		}
		if len(idx) == 0 {
			wb.DeleteSegment(t.ID, s.Seq)
			rewrites = append(rewrites, rewrite{seg: s, old: c.old[s]})
			continue
		}
		keep := exec.Take(c.old[s], idx, t.Types)
		v, err := t.encode(keep)
		if err != nil {
			return nil, err
		}
		wb.PutSegment(t.ID, s.Seq, v)
		rewrites = append(rewrites, rewrite{seg: s, old: c.old[s], keep: keep, size: int64(len(v))})
	}
	var added *Segment
	var addedBatch *exec.Batch
	if c.added != nil && c.added.N > 0 {
		addedBatch = &exec.Batch{Cols: c.added.Cols, N: c.added.N}
		v, err := t.encode(addedBatch)
		if err != nil {
			return nil, err
		}
		added = &Segment{Seq: t.seq.Next(), N: addedBatch.N, size: int64(len(v))}
		wb.PutSegment(t.ID, added.Seq, v)
	}
	apply := func() {
		for _, r := range rewrites {
			t.unindexRows(r.seg, r.old)
			t.rows -= r.seg.N
			t.drop(r.seg)
			if r.keep == nil {
				t.removeSegment(r.seg)
				continue
			}
			r.seg.N, r.seg.size = r.keep.N, r.size
			t.rows += r.keep.N
			t.indexRows(r.seg, r.keep)
			t.keep(r.seg, r.keep)
		}
		if added != nil {
			t.segs = append(t.segs, added)
			t.rows += added.N
			t.indexRows(added, addedBatch)
			t.keep(added, addedBatch)
		}
	}
	return apply, nil
}

func (t *Table) removeSegment(s *Segment) {
	for i, x := range t.segs {
		if x == s {
			t.segs = append(t.segs[:i], t.segs[i+1:]...)
			return
		}
	}
}

func (t *Table) indexRows(s *Segment, b *exec.Batch) {
	if t.index == nil {
		return
	}
	for i := 0; i < b.N; i++ {
		t.index[t.KeyOf(b, i)] = rowRef{seg: s, row: i}
	}
}

func (t *Table) unindexRows(s *Segment, b *exec.Batch) {
	if t.index == nil {
		return
	}
	for i := 0; i < b.N; i++ {
		k := t.KeyOf(b, i)
		if ref, ok := t.index[k]; ok && ref.seg == s {
			delete(t.index, k)
		}
	}
}

// Drop removes all of the table's rows from the store, in wb.
func (t *Table) Drop(wb *state.Batch) { wb.DeleteTable(t.ID) }

func (t *Table) schema() *arrow.Schema {
	fields := make([]arrow.Field, len(t.Types))
	for i, ty := range t.Types {
		fields[i] = arrow.Field{Name: fmt.Sprintf("c%d", i), Type: ty.ArrowType(), Nullable: true}
	}
	return arrow.NewSchema(fields, nil)
}

func (t *Table) encode(b *exec.Batch) ([]byte, error) {
	rec := array.NewRecordBatch(t.schema(), b.Cols, int64(b.N))
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(rec.Schema()))
	if err := w.Write(rec); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func (t *Table) decode(v []byte) (*exec.Batch, error) {
	r, err := ipc.NewReader(bytes.NewReader(v), ipc.WithAllocator(exec.Mem))
	if err != nil {
		return nil, err
	}
	defer r.Release()
	if !r.Next() {
		if r.Err() != nil {
			return nil, r.Err()
		}
		return nil, fmt.Errorf("empty segment")
	}
	rec := r.RecordBatch()
	if int(rec.NumCols()) != len(t.Types) {
		return nil, fmt.Errorf("segment has %d columns, table has %d", rec.NumCols(), len(t.Types))
	}
	b := &exec.Batch{N: int(rec.NumRows()), Cols: make([]arrow.Array, rec.NumCols())}
	for i := range b.Cols {
		b.Cols[i] = rec.Column(i)
		b.Cols[i].Retain()
	}
	return b, nil
}
