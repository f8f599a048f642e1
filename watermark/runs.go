package watermark

import (
	"encoding/binary"
	"errors"
)

// EncodeRuns stores the watermarks in force before each row of a batch, and the one after
// it, compactly: before is non-decreasing, so it is kept as runs of equal values. A table
// whose watermark depends on more than its rows' values (several partitions, idleness)
// stores them with each batch, so that replaying the table reproduces its lateness exactly.
func EncodeRuns(before []int64, after int64) []byte {
	var runs [][2]int64
	for _, w := range before {
		if n := len(runs); n > 0 && runs[n-1][0] == w {
			runs[n-1][1]++
			continue
		}
		runs = append(runs, [2]int64{w, 1})
	}
	b := binary.AppendUvarint(nil, uint64(len(runs)))
	for _, r := range runs {
		b = binary.AppendVarint(b, r[0])
		b = binary.AppendUvarint(b, uint64(r[1]))
	}
	return binary.AppendVarint(b, after)
}

// DecodeRuns reverses EncodeRuns for a batch of n rows.
func DecodeRuns(b []byte, n int) (before []int64, after int64, err error) {
	bad := errors.New("watermark: stored watermark runs are corrupt")
	runs, k := binary.Uvarint(b)
	if k <= 0 {
		return nil, 0, bad
	}
	b = b[k:]
	before = make([]int64, 0, n)
	for i := uint64(0); i < runs; i++ {
		w, k := binary.Varint(b)
		if k <= 0 {
			return nil, 0, bad
		}
		b = b[k:]
		c, k := binary.Uvarint(b)
		if k <= 0 || c > uint64(n-len(before)) {
			return nil, 0, bad
		}
		b = b[k:]
		for j := uint64(0); j < c; j++ {
			before = append(before, w)
		}
	}
	after, k = binary.Varint(b)
	if k <= 0 || k != len(b) || len(before) != n {
		return nil, 0, bad
	}
	return before, after, nil
}
