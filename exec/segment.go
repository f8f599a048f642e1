package exec

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/types"
)

// The segment encoding of batches: how tables store their segments and views checkpoint
// their rows. Integer columns (every type whose physical type is int64: BIGINT, INT, DATE,
// TIMESTAMP, DECIMAL, INTERVAL) are bit-packed against their least value, which stores a
// column of timestamps a few seconds apart, or of small keys, in a few bits a row instead of
// 64; the other columns go together in one Arrow IPC stream (EncodeIPC). Weights and
// watermarks are not kept.
//
// Layout (integers little-endian):
//
//	uvarint rows, uvarint columns, one byte per column: colPacked or colIPC
//	per packed column, in order: a flags byte (bit 0: a validity bitmap follows; bit 1:
//	  the column is delta-packed), the bitmap ((rows+7)/8 bytes, bit i set when row i is
//	  not NULL), then the packed values:
//	  plain: the least value (8 bytes), the bit width w (one byte, 0 to 64), then
//	    (rows*w+63)/64 words of 8 bytes: row i's value minus the least value in bits
//	    [i*w, i*w+w) of the words read as one little-endian bit string;
//	  delta-packed (rows >= 2): row 0's value (8 bytes), then the rows' differences
//	    v[i] - v[i-1], i >= 1, packed as plain values are (rows-1 of them); the arithmetic
//	    wraps around 2^64, so any values round-trip;
//	  a NULL row holds the previous valid row's value (the first valid one's before it),
//	  so NULLs add no width
//	then, if any column is colIPC, the IPC stream of those columns, to the end.
//
// A column is delta-packed when that takes fewer bits a row: event times, which arrive
// almost in order, differ from the previous row's by little, whatever their range.
const (
	colPacked = 1
	colIPC    = 2
)

// Flags of a packed column.
const (
	packedNulls = 1 << iota // a validity bitmap follows
	packedDelta             // the values are delta-packed
)

// AppendSegment appends b's columns to dst and returns the extended slice. A column whose
// array is not of its type's physical Arrow type is an error.
func AppendSegment(dst []byte, b *Batch, ts []types.T) ([]byte, error) {
	return AppendSegmentRanges(dst, b, ts, nil)
}

// AppendSegmentRanges is AppendSegment that also sets ranges[i], when ranges is not nil, to
// the range of int64-backed column i's values, which packing the column finds anyway.
func AppendSegmentRanges(dst []byte, b *Batch, ts []types.T, ranges []ValueRange) ([]byte, error) {
	if b.N > MaxSegmentRows {
		return nil, fmt.Errorf("a segment of %d rows, more than %d", b.N, MaxSegmentRows)
	}
	dst = binary.AppendUvarint(dst, uint64(b.N))
	dst = binary.AppendUvarint(dst, uint64(len(ts)))
	var rest []int // the columns in the IPC stream
	for i, t := range ts {
		if want := t.ArrowType(); !arrow.TypeEqual(b.Cols[i].DataType(), want) {
			return nil, fmt.Errorf("column %d holds %s, not %s", i, b.Cols[i].DataType(), want)
		}
		if b.Cols[i].Len() != b.N {
			return nil, fmt.Errorf("column %d holds %d rows, the batch %d", i, b.Cols[i].Len(), b.N)
		}
		if t.Phys() == types.PhysInt64 {
			dst = append(dst, colPacked)
			continue
		}
		dst = append(dst, colIPC)
		rest = append(rest, i)
	}
	for i, t := range ts {
		if t.Phys() == types.PhysInt64 {
			var r ValueRange
			dst, r = appendPacked(dst, b.Cols[i].(*array.Int64))
			if ranges != nil {
				ranges[i] = r
			}
		}
	}
	if len(rest) == 0 {
		return dst, nil
	}
	sub := &Batch{N: b.N, Cols: make([]arrow.Array, len(rest))}
	subTs := make([]types.T, len(rest))
	for j, i := range rest {
		sub.Cols[j], subTs[j] = b.Cols[i], ts[i]
	}
	buf := bytes.NewBuffer(dst)
	if err := EncodeIPC(buf, sub, subTs); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// appendPacked appends a's packed column (see the layout above) and returns the range of
// its values.
func appendPacked(dst []byte, a *array.Int64) ([]byte, ValueRange) {
	vals, n := a.Int64Values(), a.Len()
	var bm []byte
	if a.NullN() > 0 {
		// Pack a copy whose NULL rows hold a valid row's value, so they add no width.
		bm = make([]byte, (n+7)/8)
		fill, filled := int64(0), false
		for i := 0; i < n; i++ {
			if a.IsValid(i) {
				bm[i>>3] |= 1 << (i & 7)
				if !filled {
					fill, filled = vals[i], true
				}
			}
		}
		vals = slices.Clone(vals)
		for i := range vals {
			if a.IsValid(i) {
				fill = vals[i]
			} else {
				vals[i] = fill
			}
		}
	}
	lo, hi := valueRange(vals)
	w := uint(bits.Len64(uint64(hi - lo)))
	// Delta-packing stores row 0's value besides: it must save more than that, which
	// differences as wide as the values never do. The differences of a prefix of the values
	// are at most as wide as all of them, so all of them are only taken when the prefix's
	// are narrower (event times in order, not keys at random).
	var dlo int64
	var dw uint
	delta := false
	if slo, shi := deltaRange(vals[:min(n, deltaSample)]); n >= 2 && uint(bits.Len64(uint64(shi-slo))) < w {
		var dhi int64
		dlo, dhi = deltaRange(vals)
		dw = uint(bits.Len64(uint64(dhi - dlo)))
		delta = 8+packedSize(n-1, dw) < packedSize(n, w)
	}
	flags := byte(0)
	if bm != nil {
		flags |= packedNulls
	}
	if delta {
		flags |= packedDelta
	}
	dst = append(dst, flags)
	dst = append(dst, bm...)
	// The NULL rows hold valid rows' values: lo and hi are the valid values' range.
	r := ValueRange{Lo: lo, Hi: hi, Some: a.NullN() < n}
	if delta {
		dst = binary.LittleEndian.AppendUint64(dst, uint64(vals[0]))
		return appendBits(dst, vals, dlo, dw, true), r
	}
	return appendBits(dst, vals, lo, w, false), r
}

// appendBits appends the least value lo, the width w and the packed words of vals (their
// differences from the previous value when delta is set, from vals[1] on).
func appendBits(dst []byte, vals []int64, lo int64, w uint, delta bool) []byte {
	dst = append(binary.LittleEndian.AppendUint64(dst, uint64(lo)), byte(w))
	n := len(vals)
	if delta {
		n--
	}
	size := packedSize(n, w)
	dst = slices.Grow(dst, size)
	out := dst[len(dst) : len(dst)+size]
	switch {
	case w == 0:
	case delta:
		packDeltas(out, vals, lo, w)
	default:
		packBits(out, vals, lo, w)
	}
	return dst[:len(dst)+size]
}

// packedSize is the bytes n values of w bits are packed in.
func packedSize(n int, w uint) int { return (n*int(w) + 63) / 64 * 8 }

// valueRange returns the least and the greatest of vals (0, 0 for none). Two of each are
// kept, in registers, so that the comparisons do not wait on each other.
func valueRange(vals []int64) (lo, hi int64) {
	if len(vals) == 0 {
		return 0, 0
	}
	l0, h0 := vals[0], vals[0]
	l1, h1 := l0, h0
	i := 0
	for ; i+2 <= len(vals); i += 2 {
		v := vals[i : i+2 : i+2]
		l0, h0 = min(l0, v[0]), max(h0, v[0])
		l1, h1 = min(l1, v[1]), max(h1, v[1])
	}
	if i < len(vals) {
		l0, h0 = min(l0, vals[i]), max(h0, vals[i])
	}
	return min(l0, l1), max(h0, h1)
}

// deltaRange returns the least and the greatest difference of a value of vals from the one
// before it (wrapping around 2^64; 0, 0 for fewer than two values), kept as valueRange
// keeps its.
func deltaRange(vals []int64) (lo, hi int64) {
	if len(vals) < 2 {
		return 0, 0
	}
	d := vals[1] - vals[0]
	l0, h0, l1, h1 := d, d, d, d
	i := 1
	for ; i+2 <= len(vals); i += 2 {
		v := vals[i-1 : i+2 : i+2]
		d0, d1 := v[1]-v[0], v[2]-v[1]
		l0, h0 = min(l0, d0), max(h0, d0)
		l1, h1 = min(l1, d1), max(h1, d1)
	}
	if i < len(vals) {
		d := vals[i] - vals[i-1]
		l0, h0 = min(l0, d), max(h0, d)
	}
	return min(l0, l1), max(h0, h1)
}

// deltaSample is how many leading values appendPacked first takes the differences of.
const deltaSample = 1024

// packBits writes vals[i] - lo, w bits each (0 < w <= 64), as a little-endian bit string
// into out, which holds exactly the words they take. It is kept out of line so that its
// loop runs in registers.
//
//go:noinline
func packBits(out []byte, vals []int64, lo int64, w uint) {
	var acc uint64
	used := uint(0) // bits of acc taken, always < 64 at the top of the loop
	for _, v := range vals {
		acc, used, out = putBits(acc, used, out, uint64(v-lo), w)
	}
	if used > 0 {
		binary.LittleEndian.PutUint64(out, acc)
	}
}

// packDeltas is packBits of the differences vals[i] - vals[i-1], i >= 1.
//
//go:noinline
func packDeltas(out []byte, vals []int64, lo int64, w uint) {
	var acc uint64
	used := uint(0)
	for i := 1; i < len(vals); i++ {
		acc, used, out = putBits(acc, used, out, uint64(vals[i]-vals[i-1]-lo), w)
	}
	if used > 0 {
		binary.LittleEndian.PutUint64(out, acc)
	}
}

// putBits adds the w low bits of u to the bit string: acc holds its used bits not yet
// written, out the words still to write.
func putBits(acc uint64, used uint, out []byte, u uint64, w uint) (uint64, uint, []byte) {
	acc |= u << (used & 63)
	used += w
	if used >= 64 {
		binary.LittleEndian.PutUint64(out, acc)
		out = out[8:]
		used -= 64
		// The bits of u that did not fit: u >> (w - used), where 1 <= w - used <= 64
		// (0 when it is 64), written so that no shift reaches 64.
		acc = (u >> 1) >> ((w - used - 1) & 63)
	}
	return acc, used, out
}

var errSegment = errors.New("malformed segment")

// MaxSegmentRows bounds a segment's rows (callers split larger batches), so that what a
// segment claims bounds what decoding its packed columns allocates, even for a damaged one.
// (The IPC part is decoded by Arrow's reader, which trusts the sizes its messages claim;
// stored segments are checksummed before they are decoded.)
const MaxSegmentRows = 1 << 22

// DecodeSegment reads a batch that AppendSegment wrote with len(ts) columns. Packed columns
// are decoded into new memory; v is not retained by them.
func DecodeSegment(v []byte, ts []types.T) (*Batch, error) {
	rows, k := binary.Uvarint(v)
	if k <= 0 || rows > MaxSegmentRows {
		return nil, errSegment
	}
	v = v[k:]
	ncols, k := binary.Uvarint(v)
	if k <= 0 || ncols != uint64(len(ts)) || uint64(len(v)-k) < ncols {
		return nil, fmt.Errorf("%w: columns do not match the table's %d", errSegment, len(ts))
	}
	kinds := v[k : k+int(ncols)]
	v = v[k+int(ncols):]
	n := int(rows)
	b := &Batch{N: n, Cols: make([]arrow.Array, len(ts))}
	var rest []int
	for i, kind := range kinds {
		switch {
		case kind == colPacked && ts[i].Phys() == types.PhysInt64:
			var err error
			if b.Cols[i], v, err = unpackInt64(v, n); err != nil {
				return nil, err
			}
		case kind == colIPC && ts[i].Phys() != types.PhysInt64:
			rest = append(rest, i)
		default:
			return nil, fmt.Errorf("%w: column %d", errSegment, i)
		}
	}
	if len(rest) == 0 {
		if len(v) != 0 {
			return nil, fmt.Errorf("%w: %d bytes after the columns", errSegment, len(v))
		}
		return b, nil
	}
	subTs := make([]types.T, len(rest))
	for j, i := range rest {
		subTs[j] = ts[i]
	}
	sub, err := DecodeIPC(v, subTs)
	if err != nil {
		return nil, err
	}
	if sub.N != n {
		return nil, fmt.Errorf("%w: %d rows in its IPC part, %d in all", errSegment, sub.N, n)
	}
	for j, i := range rest {
		b.Cols[i] = sub.Cols[j]
	}
	return b, nil
}

// unpackInt64 decodes a packed column of n rows from the front of v and returns the rest.
func unpackInt64(v []byte, n int) (arrow.Array, []byte, error) {
	if len(v) < 1 || v[0]&^(packedNulls|packedDelta) != 0 {
		return nil, nil, errSegment
	}
	var bm *memory.Buffer // Arrow's validity bitmap has the layout's bit order
	nulls := 0
	flags, v := v[0], v[1:]
	if flags&packedNulls != 0 {
		if len(v) < (n+7)/8 {
			return nil, nil, errSegment
		}
		bm = memory.NewBufferBytes(bytes.Clone(v[:(n+7)/8]))
		nulls = n - bitutil.CountSetBits(bm.Bytes(), 0, n)
		v = v[(n+7)/8:]
	}
	vals := make([]int64, n)
	packed := vals
	delta := flags&packedDelta != 0
	if delta {
		if n < 2 || len(v) < 8 {
			return nil, nil, errSegment
		}
		vals[0], v = int64(binary.LittleEndian.Uint64(v)), v[8:]
		packed = vals[1:]
	}
	if len(v) < 9 || v[8] > 64 {
		return nil, nil, errSegment
	}
	lo, w := int64(binary.LittleEndian.Uint64(v)), uint(v[8])
	v = v[9:]
	words := (len(packed)*int(w) + 63) / 64
	if len(v) < words*8 {
		return nil, nil, errSegment
	}
	data, v := v[:words*8], v[words*8:]
	if w == 0 {
		for i := range packed {
			packed[i] = lo
		}
	} else {
		unpackBits(packed, data, lo, w)
	}
	if delta {
		for i := 1; i < n; i++ {
			vals[i] += vals[i-1]
		}
	}
	d := array.NewData(arrow.PrimitiveTypes.Int64, n, []*memory.Buffer{bm, memory.NewBufferBytes(arrow.Int64Traits.CastToBytes(vals))}, nil, nulls, 0)
	defer d.Release()
	return array.NewInt64Data(d), v, nil
}

// unpackBits reads len(vals) values of w bits (0 < w <= 64) from the bit string data, which
// holds exactly the words they take, and adds lo to each.
func unpackBits(vals []int64, data []byte, lo int64, w uint) {
	mask := uint64(1)<<w - 1 // all ones when w is 64
	var acc uint64           // the next avail bits, at the bottom
	avail := uint(0)
	for i := range vals {
		var u uint64
		if avail >= w {
			u = acc
			acc >>= w
			avail -= w
		} else {
			next := binary.LittleEndian.Uint64(data)
			data = data[8:]
			u = acc | next<<avail
			acc = next >> (w - avail)
			avail += 64 - w
		}
		vals[i] = int64(u&mask) + lo
	}
}
