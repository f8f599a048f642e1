package table

import "github.com/streamsql/streamsql/exec"

// Replay steps through a table's segments in acceptance order and yields, for each, the
// change the views saw when it was written: a tombstone's rows retracted; a segment's rows
// inserted, in an upsert table with the versions they replaced retracted. A replay from seq skips the segments numbered <= seq (their effect is in a
// checkpoint) but still tracks an upsert table's current rows through them.
type Replay struct {
	t    *Table
	i    int
	live map[string][]any // upsert tables: the current row of each key
}

// Replay starts a replay of the segments after seq.
func (t *Table) Replay(seq uint64) (*Replay, error) {
	r := &Replay{t: t}
	if t.index != nil {
		r.live = map[string][]any{}
	}
	for r.i < len(t.segs) && t.segs[r.i].Seq <= seq {
		if r.live == nil {
			r.i++
			continue
		}
		if _, _, err := r.step(); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// Seq is the number of the next segment; ok is false at the end.
func (r *Replay) Seq() (seq uint64, ok bool) {
	if r.i >= len(r.t.segs) {
		return 0, false
	}
	return r.t.segs[r.i].Seq, true
}

// Next returns the next segment's change: rows retracted and rows added (either may be nil).
func (r *Replay) Next() (removed, added *exec.Batch, err error) { return r.step() }

func (r *Replay) step() (removed, added *exec.Batch, err error) {
	s := r.t.segs[r.i]
	r.i++
	b, err := r.t.passBatch(s)
	if err != nil {
		return nil, nil, err
	}
	if r.live == nil {
		if s.Tombstone {
			return b, nil, nil
		}
		return nil, b, nil
	}
	var gone [][]any
	for i := 0; i < b.N; i++ {
		k := r.t.KeyOf(b, i)
		if old, ok := r.live[k]; ok {
			gone = append(gone, old)
		}
		if s.Tombstone {
			delete(r.live, k)
		} else {
			r.live[k] = b.Row(i)
		}
	}
	if len(gone) > 0 {
		removed = exec.RowsToBatch(gone, r.t.Types)
	}
	if s.Tombstone {
		return removed, nil, nil
	}
	return removed, b, nil
}
