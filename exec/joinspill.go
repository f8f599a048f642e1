package exec

// Join state in the store (spill.go): each side's buckets — the kept rows of one join key,
// with their multiplicity, match counts and clocks — are entries under the side and the key.
// In memory the join tracks the buckets a batch changes, and a checkpoint writes those.
// Spilled (a regular join: no interval, no TTL), a batch loads the buckets of its keys on
// both sides, runs as in memory, and once more than spillResident rows are resident the
// changed buckets are written back and memory released.

var _ Spiller = (*HashJoin)(nil)

// Attach implements Keyed.
func (j *HashJoin) Attach(store KeyedStore) {
	j.init()
	j.store = store
}

// CanSpill implements Spiller: a regular streaming join (an interval join's state is freed
// by the watermark, a TTL join's is bounded by time).
func (j *HashJoin) CanSpill() bool { return !j.Batch && j.Interval == nil && j.TTL == 0 }

// Spill implements Spiller.
func (j *HashJoin) Spill() {
	j.init()
	j.spilled = true
	j.evictAll()
}

// init makes the sides on first use.
func (j *HashJoin) init() {
	if j.sides[0] == nil {
		j.sides = [2]*joinSide{newJoinSide(), newJoinSide()}
		j.wms = [2]int64{NoWatermark, NoWatermark}
		j.dirty = [2]map[string]struct{}{{}, {}}
		j.resident = [2]map[string]struct{}{{}, {}}
	}
}

func bucketKey(side int, key string) []byte { return append([]byte{byte(side)}, key...) }

// markDirty records that side's bucket of key changed since the last checkpoint.
func (j *HashJoin) markDirty(side int, key string) {
	if j.store != nil {
		j.dirty[side][key] = struct{}{}
	}
}

// loadBuckets makes resident the buckets a batch of side touches: its own side's for every
// row, and the other side's for rows whose key has no NULL.
func (j *HashJoin) loadBuckets(side int, rowKeys []string, nullKey []bool) error {
	for i, k := range rowKeys {
		j.load(side, k)
		if !nullKey[i] {
			j.load(1-side, k)
		}
	}
	err := j.spillErr
	j.spillErr = nil
	return err
}

// load makes the bucket of key on side resident.
func (j *HashJoin) load(side int, key string) {
	if _, ok := j.resident[side][key]; ok {
		return
	}
	j.resident[side][key] = struct{}{}
	v, ok, err := j.store.Get(bucketKey(side, key))
	if err == nil && ok {
		err = j.loadBucket(side, key, v)
	}
	if err != nil && j.spillErr == nil {
		j.spillErr = err
	}
}

// loadBucket adds the rows of side's stored bucket of key.
func (j *HashJoin) loadBucket(side int, key string, val []byte) error {
	s := j.sides[side]
	r := &StateReader{Buf: val}
	n := r.Len()
	for k := 0; k < n && r.Err() == nil; k++ {
		row := r.Row()
		var vb []byte
		vb = AppendValuesKey(vb, row)
		e := s.add(string(vb), key, row, 0, 1<<63-1)
		s.w[e] = r.Int()
		s.matches[e] = r.Int()
		if j.Interval != nil {
			s.expiry[e] = r.Int()
		}
		if j.TTL > 0 {
			j.sides[side].clk.stamp(&j.due, int8(side), e, r.Int())
		}
	}
	return r.Err()
}

// writeChanges writes the buckets changed since the last checkpoint to the store (one left
// empty is deleted).
func (j *HashJoin) writeChanges() {
	for side, s := range j.sides {
		for key := range j.dirty[side] {
			ents := s.buckets[key]
			if len(ents) == 0 {
				j.store.Delete(bucketKey(side, key))
				continue
			}
			w := &StateWriter{}
			w.Int(int64(len(ents)))
			for _, e := range ents {
				w.Row(s.rows[e])
				w.Int(s.w[e])
				w.Int(s.matches[e])
				if j.Interval != nil {
					w.Int(s.expiry[e])
				}
				if j.TTL > 0 {
					w.Int(s.clk.seen[e])
				}
			}
			j.store.Put(bucketKey(side, key), w.Buf)
		}
		clear(j.dirty[side])
	}
}

// evictIfFull writes the changed buckets back once more than spillResident rows are resident.
func (j *HashJoin) evictIfFull() {
	if len(j.sides[0].index)+len(j.sides[1].index) > spillResident {
		j.evictAll()
	}
}

// evictAll writes the changed buckets to the store and starts over with empty memory.
func (j *HashJoin) evictAll() {
	j.writeChanges()
	j.sides = [2]*joinSide{newJoinSide(), newJoinSide()}
	j.resident = [2]map[string]struct{}{{}, {}}
}
