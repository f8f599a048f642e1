package exec

import (
	"cmp"
	"encoding/binary"
	"slices"
	"sort"

	"github.com/streamsql/streamsql/types"
)

// rankPart is one partition of a Ranker: its distinct rows, each in a slot with its
// multiplicity, in arrival order.
//
// A change to a row only updates its slot's weight (a Top-N's also lists the slot as touched);
// settle then takes the slots whose weight fell to 0 out (the row is gone) and, for a Top-N,
// moves the touched slots into or out of order, the slots of positive weight kept sorted by the ORDER BY keys
// and then by arrival (seq), so that ranking the first N rows costs a walk of N slots rather
// than a sort of the partition.
//
// Invariants: index maps the encoding (AllKey) of each live slot's row to the slot; a dead
// slot (dead[j]) is in neither index nor order, and its row stays until compact drops the
// dead slots (once they are half of them), keeping the others' relative order; seq grows with
// arrival, so slot order is seq order; order, when not nil, holds exactly the live slots of
// positive weight as of the last settle.
type rankPart struct {
	stored  string // the key of the partition's entry in the store (partKey); rows' follow it
	index   map[string]int32
	rows    [][]any
	w       []int64
	seq     []uint64
	dead    []bool
	touched []int32 // with order: the slots changed since the last settle, each once (mark)
	mark    []bool
	killed  []string // the encodings of the rows settle took out, for the Ranker to mark
	ndead   int
	order   *rankOrder
	emitted *Batch
	dirty   bool // changed by the current batch
}

func newRankPart(pk string, topN bool) *rankPart {
	p := &rankPart{stored: partKey(pk), index: map[string]int32{}}
	if topN {
		p.order = &rankOrder{}
	}
	return p
}

// slot gives row, encoded kb and not in the partition, a new slot with arrival number *seq.
func (p *rankPart) slot(kb []byte, row []any, seq *uint64) int32 {
	j := int32(len(p.rows))
	p.index[string(kb)] = j
	p.rows, p.w, p.seq, p.dead = append(p.rows, row), append(p.w, 0), append(p.seq, *seq), append(p.dead, false)
	if p.order != nil {
		p.mark = append(p.mark, false)
	}
	*seq++
	return j
}

// add changes slot j's multiplicity by w.
func (p *rankPart) add(j int32, w int64) {
	p.w[j] += w
	if p.order != nil && !p.mark[j] {
		p.mark[j] = true
		p.touched = append(p.touched, j)
	}
}

// before orders slots for a Top-N: by the ORDER BY keys, then by arrival.
func (p *rankPart) before(keys []SortKey) func(a, b int32) bool {
	return func(a, b int32) bool {
		if rowLess(p.rows[a], p.rows[b], keys) {
			return true
		}
		return !rowLess(p.rows[b], p.rows[a], keys) && p.seq[a] < p.seq[b]
	}
}

// settle applies the changes since the last: a slot of weight 0 dies, and order follows the
// weights. Without order it looks at every slot (the caller sorts them all anyway).
func (p *rankPart) settle(keys []SortKey) {
	if p.order == nil {
		for j := range p.rows {
			if p.w[j] == 0 && !p.dead[j] {
				p.kill(int32(j))
			}
		}
	} else {
		before := p.before(keys)
		for _, j := range p.touched {
			p.mark[j] = false
			in := p.order.has(j)
			switch {
			case p.w[j] > 0 && !in:
				p.order.insert(j, before)
			case p.w[j] <= 0 && in:
				p.order.remove(j, before)
			}
			if p.w[j] == 0 {
				p.kill(j)
			}
		}
		p.touched = p.touched[:0]
	}
	if p.ndead > 64 && 2*p.ndead > len(p.rows) {
		p.compact()
	}
}

// kill takes slot j's row out of the partition.
func (p *rankPart) kill(j int32) {
	k := string(AppendValuesKey(nil, p.rows[j]))
	delete(p.index, k)
	p.killed = append(p.killed, k)
	p.dead[j] = true
	p.ndead++
}

// compact drops the dead slots (no slot is touched).
func (p *rankPart) compact() {
	to := make([]int32, len(p.rows)) // old slot -> new
	n := int32(0)
	for j := range p.rows {
		if p.dead[j] {
			continue
		}
		to[j] = n
		p.rows[n], p.w[n], p.seq[n] = p.rows[j], p.w[j], p.seq[j]
		p.index[string(AppendValuesKey(nil, p.rows[n]))] = n
		n++
	}
	clear(p.rows[n:])
	p.rows, p.w, p.seq = p.rows[:n], p.w[:n], p.seq[:n]
	p.dead = make([]bool, n)
	if p.order != nil {
		p.mark = make([]bool, n)
	}
	p.ndead = 0
	if p.order != nil {
		p.order.remap(to)
	}
}

// live returns the rows of positive weight, each repeated by its weight, in arrival order.
func (p *rankPart) live() [][]any {
	var rows [][]any
	for j, row := range p.rows {
		for k := int64(0); k < p.w[j] && !p.dead[j]; k++ {
			rows = append(rows, row)
		}
	}
	return rows
}

// orderBlock is the size a rankOrder block splits at (twice it).
const orderBlock = 256

// rankOrder is a sorted sequence of slots in blocks, so that an insertion or removal moves at
// most a block's worth: blocks in order, each sorted and not empty; in[j] tells whether slot
// j is in the order.
type rankOrder struct {
	blocks [][]int32
	in     []bool
}

func (o *rankOrder) has(j int32) bool { return int(j) < len(o.in) && o.in[j] }

// find returns the block that holds (or would hold) slot j, and j's place in it.
func (o *rankOrder) find(j int32, before func(a, b int32) bool) (int, int) {
	bi := sort.Search(len(o.blocks), func(i int) bool {
		b := o.blocks[i]
		return !before(b[len(b)-1], j)
	})
	if bi == len(o.blocks) {
		if bi == 0 {
			return 0, 0
		}
		bi--
		return bi, len(o.blocks[bi])
	}
	b := o.blocks[bi]
	return bi, sort.Search(len(b), func(i int) bool { return !before(b[i], j) })
}

func (o *rankOrder) insert(j int32, before func(a, b int32) bool) {
	for int(j) >= len(o.in) {
		o.in = append(o.in, false)
	}
	o.in[j] = true
	if len(o.blocks) == 0 {
		o.blocks = [][]int32{{j}}
		return
	}
	bi, at := o.find(j, before)
	b := slices.Insert(o.blocks[bi], at, j)
	if len(b) < 2*orderBlock {
		o.blocks[bi] = b
		return
	}
	half := append([]int32(nil), b[orderBlock:]...)
	o.blocks[bi] = b[:orderBlock:orderBlock]
	o.blocks = slices.Insert(o.blocks, bi+1, half)
}

func (o *rankOrder) remove(j int32, before func(a, b int32) bool) {
	bi, at := o.find(j, before)
	b := o.blocks[bi]
	if at >= len(b) || b[at] != j {
		panic("exec: a ranked slot is not in its order")
	}
	o.in[j] = false
	if b = slices.Delete(b, at, at+1); len(b) == 0 {
		o.blocks = slices.Delete(o.blocks, bi, bi+1)
		return
	}
	o.blocks[bi] = b
}

// remap renumbers the slots (to[old] = new).
func (o *rankOrder) remap(to []int32) {
	in := make([]bool, len(o.in))
	for _, b := range o.blocks {
		for i, j := range b {
			b[i] = to[j]
			in[to[j]] = true
		}
	}
	o.in = in
}

// each calls fn with the slots in order until it returns false.
func (o *rankOrder) each(fn func(j int32) bool) {
	for _, b := range o.blocks {
		for _, j := range b {
			if !fn(j) {
				return
			}
		}
	}
}

// A Ranker's checkpoint holds an entry per partition, under the partition's length-prefixed
// key (partKey), with the rows it last emitted; and an entry per row, under that key followed
// by the row's encoding, with its arrival number and weight: a checkpoint writes the rows
// changed since the last, not whole partitions.

// partKey is the stored key of partition pk's entry.
func partKey(pk string) string {
	return string(binary.AppendUvarint(nil, uint64(len(pk)))) + pk
}

// splitStateKey splits a stored key into its partition key and row encoding ("" for the
// partition's own entry); ok is false for a malformed key.
func splitStateKey(k []byte) (pk, row string, ok bool) {
	n, m := binary.Uvarint(k)
	if m <= 0 || uint64(len(k)-m) < n {
		return "", "", false
	}
	return string(k[m : m+int(n)]), string(k[m+int(n):]), true
}

// encodeState gives stored key k's entry (nil: it has none).
func (r *Ranker) encodeState(k string) []byte {
	pk, row, ok := splitStateKey([]byte(k))
	p := r.parts[pk]
	if !ok || p == nil {
		return nil
	}
	w := &StateWriter{}
	if row == "" {
		w.Batch(p.emitted)
		w.Bool(p.dirty)
		return w.Buf
	}
	j, ok := p.index[row]
	if !ok {
		return nil
	}
	w.Int(int64(p.seq[j]))
	w.Int(p.w[j])
	w.Row(p.rows[j])
	return w.Buf
}

// loadState rebuilds the partitions from the stored entries.
func (r *Ranker) loadState() error {
	r.parts = map[string]*rankPart{}
	outT := append(append([]types.T{}, r.Types...), r.ResultT)
	type stored struct {
		seq uint64
		w   int64
		row []any
		key string
	}
	rows := map[string][]stored{}
	err := r.EachStored(func(k, val []byte) error {
		pk, row, ok := splitStateKey(k)
		if !ok {
			return errKeyCorrupt
		}
		rd := &StateReader{Buf: val}
		p := r.parts[pk]
		if p == nil {
			p = newRankPart(pk, r.topN())
			r.parts[pk] = p
		}
		if row == "" {
			p.emitted = rd.Batch(outT)
			p.dirty = rd.Bool()
			return rd.Err()
		}
		s := stored{seq: uint64(rd.Int()), w: rd.Int(), key: row}
		s.row = rd.Row()
		rows[pk] = append(rows[pk], s)
		return rd.Err()
	})
	if err != nil {
		return err
	}
	for pk, p := range r.parts {
		rs := rows[pk]
		slices.SortFunc(rs, func(a, b stored) int { return cmp.Compare(a.seq, b.seq) })
		for _, s := range rs {
			j := int32(len(p.rows))
			p.index[s.key] = j
			p.rows, p.w, p.seq, p.dead = append(p.rows, s.row), append(p.w, s.w), append(p.seq, s.seq), append(p.dead, false)
			if p.order != nil {
				p.mark = append(p.mark, s.w == 0)
				if s.w == 0 { // retracted to nothing, not yet settled
					p.touched = append(p.touched, j)
				}
			}
			r.seq = max(r.seq, s.seq+1)
		}
		if p.dirty && !r.Batch && !r.EmitOnClose {
			r.dirtyKeys = append(r.dirtyKeys, pk)
		}
		if p.order != nil {
			before := p.before(r.Order)
			for j := range p.rows {
				if p.w[j] > 0 {
					p.order.insert(int32(j), before)
				}
			}
		}
	}
	return nil
}
