// Package table holds the stored rows of one table: an ordered list of segments (Arrow
// batches in the engine's physical representation) kept in memory and persisted as Arrow IPC
// in the state store, plus the primary-key index of upsert tables.
//
// Invariant: segments are in acceptance order (segment seq order, rows in order within a
// segment; seqs come from the store-wide Sequence, so they also order segments across
// tables), so a scan replays rows in the order they were accepted; in an upsert table each
// key has at most one stored row, the last one accepted.
package table

import (
	"bytes"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// Segment is a batch of stored rows (all weights +1).
type Segment struct {
	Seq   uint64
	Batch *exec.Batch
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
	PK    []int
	segs  []*Segment
	seq   *state.Sequence
	index map[string]rowRef
	rows  int
}

// New returns an empty table.
func New(id uint64, names []string, ts []types.T, pk []int, seq *state.Sequence) *Table {
	t := &Table{ID: id, Names: names, Types: ts, PK: pk, seq: seq}
	if len(pk) > 0 {
		t.index = map[string]rowRef{}
	}
	return t
}

// Load reads the table's segments from the store.
func (t *Table) Load(s *state.Store) error {
	return s.Segments(t.ID, func(seq uint64, v []byte) error {
		b, err := t.decode(bytes.Clone(v))
		if err != nil {
			return fmt.Errorf("table segment %d/%d: %w", t.ID, seq, err)
		}
		seg := &Segment{Seq: seq, Batch: b}
		t.segs = append(t.segs, seg)
		t.rows += b.N
		t.seq.Observe(seq)
		t.indexSegment(seg)
		return nil
	})
}

// Rows is the number of stored rows.
func (t *Table) Rows() int { return t.rows }

// Segments returns the stored segments in acceptance order. The caller must not modify them.
func (t *Table) Segments() []*Segment { return t.segs }

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
		if s.Batch.N >= maxRows/4 {
			if err := flush(); err != nil {
				return err
			}
			if err := fn(s.Batch); err != nil {
				return err
			}
			continue
		}
		pending = append(pending, s.Batch)
		n += s.Batch.N
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
// rows added, to be applied to the store with Apply and sent to views.
type Change struct {
	table *Table
	added *exec.Batch
	// Kept lists the rows of the inserted batch that were kept, when some were superseded
	// by a later row with the same key in the same batch; nil when all were kept.
	Kept    []int32
	removed map[*Segment][]bool // per segment, rows to drop
	Deleted *exec.Batch         // the removed rows, in acceptance order
}

// Added returns the rows the change adds (nil if none).
func (c *Change) Added() *exec.Batch { return c.added }

// Insert prepares the insertion of rows b. In an upsert table a row whose key is stored
// replaces it, and of several rows with one key in b the last wins.
func (t *Table) Insert(b *exec.Batch) *Change {
	c := &Change{table: t, added: b, removed: map[*Segment][]bool{}}
	if t.index == nil || b.N == 0 {
		return c
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
			c.mark(ref.seg, ref.row)
		}
	}
	c.collectDeleted()
	return c
}

// Delete prepares the removal of the rows for which drop reports true.
func (t *Table) Delete(drop func(seg *Segment) ([]bool, error)) (*Change, error) {
	c := &Change{table: t, removed: map[*Segment][]bool{}}
	for _, s := range t.segs {
		d, err := drop(s)
		if err != nil {
			return nil, err
		}
		for i, x := range d {
			if x {
				c.mark(s, i)
			}
		}
	}
	c.collectDeleted()
	return c, nil
}

// Replace prepares an update: the rows removed by c are replaced by rows b (appended as a
// new version, as an upsert would).
func (c *Change) Replace(b *exec.Batch) { c.added = b }

func (c *Change) mark(s *Segment, row int) {
	m := c.removed[s]
	if m == nil {
		m = make([]bool, s.Batch.N)
		c.removed[s] = m
	}
	m[row] = true
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
		parts = append(parts, exec.Take(s.Batch, idx, c.table.Types))
	}
	if len(parts) > 0 {
		c.Deleted = exec.Concat(parts, c.table.Types)
	}
}

// Write adds the change's writes to batch wb; the in-memory table is untouched until Apply.
func (c *Change) Write(wb *state.Batch) (func(), error) {
	t := c.table
	type rewrite struct {
		seg  *Segment
		keep *exec.Batch
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
			rewrites = append(rewrites, rewrite{seg: s})
			continue
		}
		keep := exec.Take(s.Batch, idx, t.Types)
		v, err := t.encode(keep)
		if err != nil {
			return nil, err
		}
		wb.PutSegment(t.ID, s.Seq, v)
		rewrites = append(rewrites, rewrite{seg: s, keep: keep})
	}
	var added *Segment
	if c.added != nil && c.added.N > 0 {
		b := &exec.Batch{Cols: c.added.Cols, N: c.added.N}
		v, err := t.encode(b)
		if err != nil {
			return nil, err
		}
		added = &Segment{Seq: t.seq.Next(), Batch: b}
		wb.PutSegment(t.ID, added.Seq, v)
	}
	// apply runs after the batch commits.
	apply := func() {
		for _, r := range rewrites {
			t.unindexSegment(r.seg)
			t.rows -= r.seg.Batch.N
			if r.keep == nil {
				t.removeSegment(r.seg)
				continue
			}
			r.seg.Batch = r.keep
			t.rows += r.keep.N
			t.indexSegment(r.seg)
		}
		if added != nil {
			t.segs = append(t.segs, added)
			t.rows += added.Batch.N
			t.indexSegment(added)
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

func (t *Table) indexSegment(s *Segment) {
	if t.index == nil {
		return
	}
	for i := 0; i < s.Batch.N; i++ {
		t.index[t.KeyOf(s.Batch, i)] = rowRef{seg: s, row: i}
	}
}

func (t *Table) unindexSegment(s *Segment) {
	if t.index == nil {
		return
	}
	for i := 0; i < s.Batch.N; i++ {
		k := t.KeyOf(s.Batch, i)
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
