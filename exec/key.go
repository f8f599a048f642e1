package exec

import (
	"encoding/binary"
	"errors"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// AppendKey appends a self-delimiting encoding of row i of a to buf. Equal SQL values of one
// physical type encode equally; NULL encodes as its own value (group keys put NULLs in one
// group; join keys check NULLs before encoding, since NULL never matches).
func AppendKey(buf []byte, a arrow.Array, i int) []byte {
	if a.IsNull(i) {
		return append(buf, 0)
	}
	switch c := a.(type) {
	case *array.Int64:
		buf = append(buf, 1)
		return binary.LittleEndian.AppendUint64(buf, uint64(c.Value(i)))
	case *array.Float64:
		f := c.Value(i)
		if f == 0 {
			f = 0 // -0 and +0 are one value
		} else if f != f {
			f = math.NaN() // so are NaNs, whatever their bits
		}
		buf = append(buf, 2)
		return binary.LittleEndian.AppendUint64(buf, math.Float64bits(f))
	case *array.Boolean:
		if c.Value(i) {
			return append(buf, 3, 1)
		}
		return append(buf, 3, 0)
	case *array.String:
		s := c.Value(i)
		buf = append(buf, 4)
		buf = binary.AppendUvarint(buf, uint64(len(s)))
		return append(buf, s...)
	}
	return append(buf, 0)
}

// RowKey encodes the values of columns cols of row i of b.
func RowKey(buf []byte, b *Batch, cols []int, i int) []byte {
	for _, c := range cols {
		buf = AppendKey(buf, b.Cols[c], i)
	}
	return buf
}

// AllKey encodes every column of row i of b.
func AllKey(buf []byte, b *Batch, i int) []byte {
	for _, c := range b.Cols {
		buf = AppendKey(buf, c, i)
	}
	return buf
}

// AppendValuesKey appends the encodings of vals (AppendValueKey), a row's or a key's.
func AppendValuesKey(buf []byte, vals []any) []byte {
	for _, v := range vals {
		buf = AppendValueKey(buf, v)
	}
	return buf
}

// AppendValueKey encodes a physical value exactly as AppendKey encodes it in a column.
func AppendValueKey(buf []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(buf, 0)
	case int64:
		buf = append(buf, 1)
		return binary.LittleEndian.AppendUint64(buf, uint64(x))
	case float64:
		if x != x {
			x = math.NaN()
		}
		if x == 0 {
			x = 0
		}
		buf = append(buf, 2)
		return binary.LittleEndian.AppendUint64(buf, math.Float64bits(x))
	case bool:
		if x {
			return append(buf, 3, 1)
		}
		return append(buf, 3, 0)
	case string:
		buf = append(buf, 4)
		buf = binary.AppendUvarint(buf, uint64(len(x)))
		return append(buf, x...)
	}
	return append(buf, 0)
}

// DecodeKey decodes n values encoded by AppendKey (or AppendValueKey) back to physical
// values. A float's -0 comes back as 0, as it was encoded.
func DecodeKey(buf []byte, n int) ([]any, error) {
	out := make([]any, n)
	for i := range out {
		if len(buf) == 0 {
			return nil, errKeyCorrupt
		}
		tag := buf[0]
		buf = buf[1:]
		switch tag {
		case 0:
		case 1, 2:
			if len(buf) < 8 {
				return nil, errKeyCorrupt
			}
			u := binary.LittleEndian.Uint64(buf)
			buf = buf[8:]
			if tag == 1 {
				out[i] = int64(u)
			} else {
				out[i] = math.Float64frombits(u)
			}
		case 3:
			if len(buf) < 1 {
				return nil, errKeyCorrupt
			}
			out[i] = buf[0] == 1
			buf = buf[1:]
		case 4:
			l, k := binary.Uvarint(buf)
			if k <= 0 || uint64(len(buf)-k) < l {
				return nil, errKeyCorrupt
			}
			out[i] = string(buf[k : k+int(l)])
			buf = buf[k+int(l):]
		default:
			return nil, errKeyCorrupt
		}
	}
	if len(buf) != 0 {
		return nil, errKeyCorrupt
	}
	return out, nil
}

var errKeyCorrupt = errors.New("exec: corrupt row key")
