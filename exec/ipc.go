package exec

import (
	"bytes"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/streamsql/streamsql/types"
)

// IPC encoding of batches: how tables store their segments and views checkpoint their rows.
// A batch is written as an Arrow IPC stream of one record whose columns have the physical
// Arrow types of ts (types.T.ArrowType); weights and watermarks are not kept.

// EncodeIPC appends b's columns to buf. A column whose array is not of its type's physical
// Arrow type is an error.
func EncodeIPC(buf *bytes.Buffer, b *Batch, ts []types.T) error {
	fields := make([]arrow.Field, len(ts))
	for i, t := range ts {
		fields[i] = arrow.Field{Name: fmt.Sprintf("c%d", i), Type: t.ArrowType(), Nullable: true}
		if !arrow.TypeEqual(b.Cols[i].DataType(), fields[i].Type) {
			return fmt.Errorf("column %d holds %s, not %s", i, b.Cols[i].DataType(), fields[i].Type)
		}
	}
	rec := array.NewRecordBatch(arrow.NewSchema(fields, nil), b.Cols, int64(b.N))
	buf.Grow(b.N*len(b.Cols)*9 + 1024)
	w := ipc.NewWriter(buf, ipc.WithSchema(rec.Schema()))
	if err := w.Write(rec); err != nil {
		return err
	}
	return w.Close()
}

// DecodeIPC reads a batch that EncodeIPC wrote with len(ts) columns.
func DecodeIPC(v []byte, ts []types.T) (*Batch, error) {
	r, err := ipc.NewReader(bytes.NewReader(v), ipc.WithAllocator(Mem))
	if err != nil {
		return nil, err
	}
	defer r.Release()
	if !r.Next() {
		if r.Err() != nil {
			return nil, r.Err()
		}
		return nil, fmt.Errorf("no record")
	}
	rec := r.RecordBatch()
	if int(rec.NumCols()) != len(ts) {
		return nil, fmt.Errorf("%d columns, want %d", rec.NumCols(), len(ts))
	}
	b := &Batch{N: int(rec.NumRows()), Cols: make([]arrow.Array, rec.NumCols())}
	for i := range b.Cols {
		if want := ts[i].ArrowType(); !arrow.TypeEqual(rec.Column(i).DataType(), want) {
			return nil, fmt.Errorf("column %d holds %s, not %s", i, rec.Column(i).DataType(), want)
		}
		b.Cols[i] = rec.Column(i)
		b.Cols[i].Retain()
	}
	return b, nil
}
