// Package table holds the stored rows of one table: an ordered list of segments (Arrow
// batches in the engine's physical representation) persisted as Arrow IPC in the state
// store, plus the primary-key index of upsert tables. Decoded segments are kept in memory up
// to a byte budget (the most recently used first); the rest are read back from the store
// when a scan or a write needs them, so a table can be larger than memory.
//
// A table is a changelog: INSERT and Append add a segment of rows; DELETE adds a tombstone
// segment holding the rows it removed; UPDATE a tombstone and the new rows — in an upsert
// (PRIMARY KEY) table an upsert or UPDATE just adds the new versions, which replace the old
// ones by key. Stored segments are never rewritten, so Replay gives views exactly the changes
// they saw live (every version, for temporal joins), and a checkpoint is never invalidated.
// Which stored rows are current is kept in memory: the key index of an upsert table, the
// dead rows of an append table.
//
// Invariant: segments are in acceptance order (segment seq order, rows in order within a
// segment; seqs come from the store-wide Sequence, so they also order segments across
// tables), so scans and replays see rows in the order they were accepted; in an upsert
// table each key has at most one live row, the last one accepted.
package table

import (
	"bytes"
	"container/list"
	"fmt"
	"sort"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// Segment is a batch of stored rows (all weights +1), or a tombstone: rows a DELETE removed.
type Segment struct {
	Seq       uint64
	N         int
	Tombstone bool
	size      int64         // the memory its decoded rows take (exec.Batch.MemSize)
	batch     *exec.Batch   // nil when not in memory
	lru       *list.Element // position in the table's cache, when in memory
	// ranges holds the range of each int64-backed column's values (exec.ValueRange), so that
	// a scan under bounds skips the segment without reading it (ScanWhere).
	ranges []exec.ValueRange
}

// rangesOf returns the ranges of b's int64-backed columns (the others' are empty).
func rangesOf(b *exec.Batch) []exec.ValueRange {
	r := make([]exec.ValueRange, len(b.Cols))
	for c, col := range b.Cols {
		r[c] = exec.Int64Range(col)
	}
	return r
}

// outside reports whether bounds exclude every row of s: some bounded column has no
// non-NULL value inside its bound there. A segment without ranges (a tombstone) is never
// outside.
func (s *Segment) outside(bounds []exec.ValueBound) bool {
	for _, b := range bounds {
		if s.ranges == nil || b.Col >= len(s.ranges) {
			return false
		}
		if b.Excludes(s.ranges[b.Col]) {
			return true
		}
	}
	return false
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
	store *state.Store
	// index maps each key of an upsert table to its current row; dead marks the deleted
	// rows of an append table's segments.
	index  map[string]rowRef
	dead   map[*Segment][]bool
	rows   int
	cache  *list.List // of *Segment, most recently used at the front
	cached int64
	// CacheBytes is how many bytes of decoded segments the table keeps in memory.
	CacheBytes int64
	// enc is the buffer segments are encoded in (the store copies them).
	enc []byte
}

// New returns an empty table stored in store.
func New(id uint64, names []string, ts []types.T, pk []int, seq *state.Sequence, store *state.Store, cacheBytes int64) *Table {
	t := &Table{ID: id, Names: names, Types: ts, PK: pk, seq: seq, store: store, cache: list.New(), dead: map[*Segment][]bool{}, CacheBytes: cacheBytes}
	if len(pk) > 0 {
		t.index = map[string]rowRef{}
	}
	return t
}

// Load reads the table's segments from the store and works out which rows are current.
func (t *Table) Load() error {
	// An append table's tombstone kills the earliest live occurrence of each of its rows.
	occ := map[string][]rowRef{}
	err := t.store.Segments(t.ID, func(seq uint64, v []byte) error {
		b, tomb, err := t.decode(bytes.Clone(v))
		if err != nil {
			return fmt.Errorf("table segment %d/%d: %w", t.ID, seq, err)
		}
		seg := &Segment{Seq: seq, N: b.N, Tombstone: tomb, size: b.MemSize()}
		if !tomb {
			seg.ranges = rangesOf(b)
		}
		t.segs = append(t.segs, seg)
		t.seq.Observe(seq)
		switch {
		case t.index != nil && tomb:
			t.unindexKeys(b)
		case t.index != nil:
			t.indexRows(seg, b)
		case tomb:
			var kb []byte
			for i := 0; i < b.N; i++ {
				kb = exec.AllKey(kb[:0], b, i)
				if refs := occ[string(kb)]; len(refs) > 0 {
					t.kill(refs[0].seg, refs[0].row)
					occ[string(kb)] = refs[1:]
				}
			}
		default:
			var kb []byte
			for i := 0; i < b.N; i++ {
				kb = exec.AllKey(kb[:0], b, i)
				occ[string(kb)] = append(occ[string(kb)], rowRef{seg: seg, row: i})
			}
			t.rows += b.N
		}
		if t.index != nil {
			t.rows = len(t.index)
		}
		t.keep(seg, b)
		return nil
	})
	return err
}

// kill marks row i of an append table's segment s deleted.
func (t *Table) kill(s *Segment, i int) {
	d := t.dead[s]
	if d == nil {
		d = make([]bool, s.N)
		t.dead[s] = d
	}
	if !d[i] {
		d[i] = true
		t.rows--
	}
}

// Rows is the number of current rows.
func (t *Table) Rows() int { return t.rows }

// Batch returns a segment's stored rows, reading them from the store if they are not in
// memory; the least recently used segments make room for them.
func (t *Table) Batch(s *Segment) (*exec.Batch, error) { return t.batch(s, true) }

// passBatch is Batch for a pass over every segment (a scan, a replay, a DELETE's search): a
// segment it reads is kept only if it fits in the budget beside those kept. A pass over a
// table larger than the budget would otherwise evict each segment before the next pass
// came back to it, and no pass would find one in memory; this way the segments kept serve
// every pass.
func (t *Table) passBatch(s *Segment) (*exec.Batch, error) { return t.batch(s, false) }

func (t *Table) batch(s *Segment, evict bool) (*exec.Batch, error) {
	if s.batch != nil {
		t.cache.MoveToFront(s.lru)
		return s.batch, nil
	}
	v, err := t.store.Segment(t.ID, s.Seq)
	if err != nil {
		return nil, err
	}
	b, _, err := t.decode(v)
	if err != nil {
		return nil, fmt.Errorf("table segment %d/%d: %w", t.ID, s.Seq, err)
	}
	if evict || t.cached+s.size <= t.CacheBytes {
		t.keep(s, b)
	}
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
	for t.cached > t.CacheBytes && t.cache.Len() > 1 {
		old := t.cache.Remove(t.cache.Back()).(*Segment)
		old.batch, old.lru = nil, nil
		t.cached -= old.size
	}
}

// isLive reports whether row i of segment s (rows b) is current.
func (t *Table) isLive(s *Segment, b *exec.Batch, i int) bool {
	if t.index != nil {
		ref, ok := t.index[t.KeyOf(b, i)]
		return ok && ref.seg == s && ref.row == i
	}
	d := t.dead[s]
	return d == nil || !d[i]
}

// live returns the current rows of segment s.
func (t *Table) live(s *Segment, b *exec.Batch) *exec.Batch {
	if t.index == nil && t.dead[s] == nil {
		return b
	}
	var idx []int32
	for i := 0; i < b.N; i++ {
		if t.isLive(s, b, i) {
			idx = append(idx, int32(i))
		}
	}
	if len(idx) == b.N {
		return b
	}
	return exec.Take(b, idx, t.Types)
}

// Scan calls fn with the current rows in acceptance order, in batches of up to maxRows
// (small segments are coalesced).
func (t *Table) Scan(maxRows int, fn func(*exec.Batch) error) error {
	return t.ScanWhere(maxRows, nil, fn)
}

// ScanWhere is Scan of the rows a predicate with bounds may keep: segments whose rows all
// lie outside the bounds are skipped unread; the rows of the others all come (the
// predicate itself still filters them).
func (t *Table) ScanWhere(maxRows int, bounds []exec.ValueBound, fn func(*exec.Batch) error) error {
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
		if s.Tombstone || s.outside(bounds) {
			continue
		}
		b, err := t.passBatch(s)
		if err != nil {
			return err
		}
		if b = t.live(s, b); b.N == 0 {
			continue
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

// Change is the effect of a write, to be stored with Write and sent to views.
type Change struct {
	table *Table
	added *exec.Batch
	// killed marks the current rows the change removes, per segment.
	killed map[*Segment][]int
	// tombstone is set when the removed rows must be logged as a tombstone (a DELETE, an
	// append table's UPDATE), not implied by new versions of their keys.
	tombstone bool
	// Deleted is the retracted rows, in acceptance order: rows deleted, old versions
	// replaced, and versions superseded by a later row of the same statement.
	Deleted *exec.Batch
}

// Insert prepares the insertion of rows b. In an upsert table every row is stored as a
// version; the last one of each key is current, and the versions it replaces (stored ones
// and earlier rows of b) are retracted.
func (t *Table) Insert(b *exec.Batch) (*Change, error) {
	c := &Change{table: t, added: b, killed: map[*Segment][]int{}}
	if t.index == nil || b.N == 0 {
		return c, nil
	}
	last := make(map[string]int, b.N)
	var superseded []int32
	for i := 0; i < b.N; i++ {
		k := t.KeyOf(b, i)
		if j, ok := last[k]; ok {
			superseded = append(superseded, int32(j))
		}
		last[k] = i
	}
	for k := range last {
		if ref, ok := t.index[k]; ok {
			c.killed[ref.seg] = append(c.killed[ref.seg], ref.row)
		}
	}
	if err := c.collectDeleted(); err != nil {
		return nil, err
	}
	if len(superseded) > 0 {
		sort.Slice(superseded, func(i, j int) bool { return superseded[i] < superseded[j] })
		sup := exec.Take(b, superseded, t.Types)
		if c.Deleted == nil {
			c.Deleted = sup
		} else {
			c.Deleted = exec.Concat([]*exec.Batch{c.Deleted, sup}, t.Types)
		}
	}
	return c, nil
}

// Delete prepares the removal of the current rows for which drop reports true.
func (t *Table) Delete(drop func(b *exec.Batch) ([]bool, error)) (*Change, error) {
	c := &Change{table: t, killed: map[*Segment][]int{}, tombstone: true}
	for _, s := range t.segs {
		if s.Tombstone {
			continue
		}
		b, err := t.passBatch(s)
		if err != nil {
			return nil, err
		}
		d, err := drop(b)
		if err != nil {
			return nil, err
		}
		for i, x := range d {
			if x && t.isLive(s, b, i) {
				c.killed[s] = append(c.killed[s], i)
			}
		}
	}
	return c, c.collectDeleted()
}

// Replace turns a prepared Delete into an update: the removed rows are replaced by rows b.
// In an upsert table b has the same keys, so the new versions alone record the change.
func (c *Change) Replace(b *exec.Batch) {
	c.added = b
	c.tombstone = c.table.index == nil
}

func (c *Change) collectDeleted() error {
	var parts []*exec.Batch
	for _, s := range c.table.segs {
		rows := c.killed[s]
		if len(rows) == 0 {
			continue
		}
		b, err := c.table.Batch(s)
		if err != nil {
			return err
		}
		sort.Ints(rows)
		idx := make([]int32, len(rows))
		for i, r := range rows {
			idx[i] = int32(r)
		}
		parts = append(parts, exec.Take(b, idx, c.table.Types))
	}
	if len(parts) > 0 {
		c.Deleted = exec.Concat(parts, c.table.Types)
	}
	return nil
}

// Write adds the change's segments to batch wb and returns the function that applies the
// change to the table once wb has committed; the table is untouched until then.
func (c *Change) Write(wb *state.Batch) (func(), error) {
	t := c.table
	type seg struct {
		s *Segment
		b *exec.Batch
	}
	var segs []seg
	add := func(b *exec.Batch, tomb bool) error {
		for lo := 0; lo < b.N; lo += exec.MaxSegmentRows {
			part := &exec.Batch{Cols: b.Cols, N: b.N}
			if b.N > exec.MaxSegmentRows {
				part = b.Slice(lo, min(lo+exec.MaxSegmentRows, b.N))
				part.W, part.WM = nil, nil
			}
			s := &Segment{Seq: t.seq.Next(), N: part.N, Tombstone: tomb, size: part.MemSize()}
			v, ranges, err := t.encode(part, tomb)
			if err != nil {
				return err
			}
			if !tomb {
				s.ranges = ranges
			}
			wb.PutSegment(t.ID, s.Seq, v)
			segs = append(segs, seg{s, part})
		}
		return nil
	}
	if c.tombstone && c.Deleted != nil {
		if err := add(c.Deleted, true); err != nil {
			return nil, err
		}
	}
	if c.added != nil && c.added.N > 0 {
		if err := add(c.added, false); err != nil {
			return nil, err
		}
	}
	apply := func() {
		if t.index == nil {
			for s, rows := range c.killed {
				for _, r := range rows {
					t.kill(s, r)
				}
			}
		}
		for _, x := range segs {
			t.segs = append(t.segs, x.s)
			switch {
			case t.index != nil && x.s.Tombstone:
				t.unindexKeys(x.b)
			case t.index != nil:
				t.indexRows(x.s, x.b)
			case !x.s.Tombstone:
				t.rows += x.b.N
			}
			if t.index != nil {
				t.rows = len(t.index)
			}
			t.keep(x.s, x.b)
		}
	}
	return apply, nil
}

func (t *Table) indexRows(s *Segment, b *exec.Batch) {
	for i := 0; i < b.N; i++ {
		t.index[t.KeyOf(b, i)] = rowRef{seg: s, row: i}
	}
}

// unindexKeys forgets the keys of the rows of a tombstone.
func (t *Table) unindexKeys(b *exec.Batch) {
	for i := 0; i < b.N; i++ {
		delete(t.index, t.KeyOf(b, i))
	}
}

// Drop removes all of the table's rows from the store, in wb.
func (t *Table) Drop(wb *state.Batch) { wb.DeleteTable(t.ID) }

// A segment is a kind byte, then its rows: segRows and segTombstone in the segment encoding
// (exec.AppendSegment); ipcRows and ipcTombstone, which only older databases hold, in Arrow
// IPC (exec.EncodeIPC).
const (
	ipcRows = iota
	ipcTombstone
	segRows
	segTombstone
)

// encode writes a segment into t.enc and returns it, valid until the next encode, with the
// ranges of its int64-backed columns, which packing them finds.
func (t *Table) encode(b *exec.Batch, tombstone bool) ([]byte, []exec.ValueRange, error) {
	kind := byte(segRows)
	if tombstone {
		kind = segTombstone
	}
	ranges := make([]exec.ValueRange, len(t.Types))
	v, err := exec.AppendSegmentRanges(append(t.enc[:0], kind), b, t.Types, ranges)
	if err != nil {
		return nil, nil, err
	}
	t.enc = v
	return v, ranges, nil
}

func (t *Table) decode(v []byte) (*exec.Batch, bool, error) {
	if len(v) == 0 || v[0] > segTombstone {
		return nil, false, fmt.Errorf("unknown segment kind")
	}
	decode := exec.DecodeSegment
	if v[0] < segRows {
		decode = exec.DecodeIPC
	}
	b, err := decode(v[1:], t.Types)
	if err != nil {
		return nil, false, err
	}
	return b, v[0] == ipcTombstone || v[0] == segTombstone, nil
}
