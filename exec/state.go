package exec

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/streamsql/streamsql/types"
)

// Stateful is implemented by operators whose state a checkpoint captures. SaveState writes
// the state that the messages so far have built; LoadState, on a freshly built operator of
// the same plan, restores it, so that feeding the messages after the checkpoint gives the
// output the original operator would have given.
type Stateful interface {
	SaveState(w *StateWriter)
	LoadState(r *StateReader) error
}

// StateWriter encodes operator state.
type StateWriter struct{ Buf []byte }

// Int writes an integer.
func (w *StateWriter) Int(v int64) { w.Buf = binary.AppendVarint(w.Buf, v) }

// Bool writes a boolean.
func (w *StateWriter) Bool(v bool) {
	if v {
		w.Int(1)
	} else {
		w.Int(0)
	}
}

// Value writes a physical value (int64, float64, bool, string or nil).
func (w *StateWriter) Value(v any) {
	switch x := v.(type) {
	case nil:
		w.Buf = append(w.Buf, 0)
	case int64:
		w.Buf = append(w.Buf, 1)
		w.Int(x)
	case float64:
		w.Buf = append(w.Buf, 2)
		w.Buf = binary.LittleEndian.AppendUint64(w.Buf, math.Float64bits(x))
	case bool:
		w.Buf = append(w.Buf, 3)
		w.Bool(x)
	case string:
		w.Buf = append(w.Buf, 4)
		w.Int(int64(len(x)))
		w.Buf = append(w.Buf, x...)
	default:
		panic(fmt.Sprintf("exec: cannot save a %T", v))
	}
}

// Row writes a row of values (nil rows too).
func (w *StateWriter) Row(r []any) {
	if r == nil {
		w.Int(-1)
		return
	}
	w.Int(int64(len(r)))
	for _, v := range r {
		w.Value(v)
	}
}

// Batch writes the rows and weights of a batch (nil too).
func (w *StateWriter) Batch(b *Batch) {
	if b == nil {
		w.Int(-1)
		return
	}
	w.Int(int64(b.N))
	for i := 0; i < b.N; i++ {
		w.Row(b.Row(i))
		w.Int(b.Weight(i))
	}
}

// StateReader decodes what a StateWriter wrote. Errors are sticky: after the first, reads
// return zero values and Err reports it.
type StateReader struct {
	Buf []byte
	err error
}

// Err reports the first decoding error.
func (r *StateReader) Err() error { return r.err }

func (r *StateReader) fail() {
	if r.err == nil {
		r.err = fmt.Errorf("checkpoint state is truncated or corrupt")
	}
	r.Buf = nil
}

// Int reads an integer.
func (r *StateReader) Int() int64 {
	v, n := binary.Varint(r.Buf)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.Buf = r.Buf[n:]
	return v
}

// Len reads a length, checked against the remaining bytes.
func (r *StateReader) Len() int {
	n := r.Int()
	if n < -1 || n > int64(len(r.Buf))+1 {
		r.fail()
		return 0
	}
	return int(n)
}

// Bool reads a boolean.
func (r *StateReader) Bool() bool { return r.Int() != 0 }

// Value reads a physical value.
func (r *StateReader) Value() any {
	if len(r.Buf) == 0 {
		r.fail()
		return nil
	}
	tag := r.Buf[0]
	r.Buf = r.Buf[1:]
	switch tag {
	case 0:
		return nil
	case 1:
		return r.Int()
	case 2:
		if len(r.Buf) < 8 {
			r.fail()
			return nil
		}
		v := math.Float64frombits(binary.LittleEndian.Uint64(r.Buf))
		r.Buf = r.Buf[8:]
		return v
	case 3:
		return r.Bool()
	case 4:
		n := r.Len()
		if n < 0 || n > len(r.Buf) {
			r.fail()
			return nil
		}
		s := string(r.Buf[:n])
		r.Buf = r.Buf[n:]
		return s
	}
	r.fail()
	return nil
}

// Row reads a row.
func (r *StateReader) Row() []any {
	n := r.Len()
	if n < 0 || r.err != nil {
		return nil
	}
	row := make([]any, n)
	for i := range row {
		row[i] = r.Value()
	}
	return row
}

// Batch reads a batch of rows with weights, as physical columns of the given types.
func (r *StateReader) Batch(ts []types.T) *Batch {
	n := r.Len()
	if n < 0 || r.err != nil {
		return nil
	}
	rows := make([][]any, n)
	ws := make([]int64, n)
	for i := range rows {
		rows[i] = r.Row()
		ws[i] = r.Int()
		if r.err != nil {
			return nil
		}
	}
	b := RowsToBatch(rows, ts)
	b.W = ws
	return b
}
