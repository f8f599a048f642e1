package exec

// Join spilling: a regular streaming join (no interval, no TTL) keeps each side's buckets —
// the kept rows of one join key, with their multiplicity and match counts — in the store
// under the side and the key. A batch loads the buckets of its keys on both sides, runs as
// in memory, and once more than spillResident rows are resident the buckets it changed are
// written back and memory released.

var _ Spiller = (*HashJoin)(nil)

// CanSpill implements Spiller: a regular streaming join (an interval join's state is freed
// by the watermark, a TTL join's is bounded by time).
func (j *HashJoin) CanSpill() bool { return !j.Batch && j.Interval == nil && j.TTL == 0 }

// Spill implements Spiller.
func (j *HashJoin) Spill(store KeyedStore) {
	j.init()
	j.spill = store
	j.spillLoaded = false
	for side, s := range j.sides {
		if j.resident[side] == nil {
			j.resident[side] = map[string]bool{}
		}
		for key := range s.buckets {
			j.resident[side][key] = true
		}
	}
	j.evictAll()
}

// Spilled implements Spiller.
func (j *HashJoin) Spilled() bool { return j.spill != nil || j.spillLoaded }

// init makes the sides on first use.
func (j *HashJoin) init() {
	if j.sides[0] == nil {
		j.sides = [2]*joinSide{newJoinSide(), newJoinSide()}
		j.wms = [2]int64{NoWatermark, NoWatermark}
	}
}

func bucketKey(side int, key string) []byte { return append([]byte{byte(side)}, key...) }

// loadBuckets makes resident the buckets a batch of side touches: its own side's for every
// row, marked dirty (its rows change), and the other side's for rows whose key has no NULL,
// dirty when that side is preserved (its rows' match counts, which pad them, change).
func (j *HashJoin) loadBuckets(side int, rowKeys []string, nullKey []bool) error {
	for i, k := range rowKeys {
		j.load(side, k)
		j.resident[side][k] = true
		if !nullKey[i] {
			j.load(1-side, k)
			if j.preserved(1 - side) {
				j.resident[1-side][k] = true
			}
		}
	}
	err := j.spillErr
	j.spillErr = nil
	return err
}

// load makes the bucket of key on side resident (not dirty).
func (j *HashJoin) load(side int, key string) {
	if _, ok := j.resident[side][key]; ok {
		return
	}
	j.resident[side][key] = false
	v, ok, err := j.spill.Get(bucketKey(side, key))
	if err != nil || !ok {
		if err != nil && j.spillErr == nil {
			j.spillErr = err
		}
		return
	}
	s := j.sides[side]
	r := &StateReader{Buf: v}
	n := r.Len()
	for k := 0; k < n && r.Err() == nil; k++ {
		row := r.Row()
		var vb []byte
		for _, x := range row {
			vb = AppendValueKey(vb, x)
		}
		e := s.add(string(vb), key, row, 0, 1<<63-1)
		s.w[e] = r.Int()
		s.matches[e] = r.Int()
	}
	if err := r.Err(); err != nil && j.spillErr == nil {
		j.spillErr = err
	}
}

// evictIfFull writes the changed buckets back once more than spillResident rows are resident.
func (j *HashJoin) evictIfFull() {
	if len(j.sides[0].index)+len(j.sides[1].index) > spillResident {
		j.evictAll()
	}
}

// evictAll writes the dirty buckets to the store (one left empty is deleted) and starts over
// with empty memory.
func (j *HashJoin) evictAll() {
	for side, s := range j.sides {
		for key, dirty := range j.resident[side] {
			ents := s.buckets[key]
			switch {
			case !dirty:
			case len(ents) == 0:
				j.spill.Delete(bucketKey(side, key))
			default:
				w := &StateWriter{}
				w.Int(int64(len(ents)))
				for _, e := range ents {
					w.Row(s.rows[e])
					w.Int(s.w[e])
					w.Int(s.matches[e])
				}
				j.spill.Put(bucketKey(side, key), w.Buf)
			}
		}
	}
	j.sides = [2]*joinSide{newJoinSide(), newJoinSide()}
	j.resident = [2]map[string]bool{{}, {}}
}
