package engine

import (
	"fmt"
	"strconv"

	"github.com/streamsql/streamsql/connector"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/state"
)

// badRecord is one entry of system.bad_records: a source record that could not become a
// row. It is committed with the rows and position of its poll, so it is kept exactly once.
type badRecord struct {
	table string
	connector.BadRecord
}

func badKey(t *tableObj, r connector.BadRecord) string {
	return fmt.Sprintf("bad/%d/%010d/%020d", t.entry.ID, r.Partition, r.Offset)
}

func encodeBad(r connector.BadRecord) []byte {
	w := &exec.StateWriter{}
	w.Int(int64(r.Partition))
	w.Int(r.Offset)
	w.Value(r.Err)
	w.Value(string(r.Value))
	return w.Buf
}

// loadBad reads a table's stored bad records.
func (e *Engine) loadBad(t *tableObj) error {
	return e.store.MetaPrefix("bad/"+strconv.FormatUint(t.entry.ID, 10)+"/", func(_ string, v []byte) error {
		r := &exec.StateReader{Buf: v}
		b := badRecord{table: t.name}
		b.Partition = int32(r.Int())
		b.Offset = r.Int()
		b.Err, _ = r.Value().(string)
		val, _ := r.Value().(string)
		b.Value = []byte(val)
		if err := r.Err(); err != nil {
			return fmt.Errorf("bad record of %s: %w", t.name, err)
		}
		e.bad = append(e.bad, b)
		return nil
	})
}

// dropTableMeta deletes what a table keeps besides its rows: its source position, bad
// records and stored watermarks.
func (e *Engine) dropTableMeta(wb *state.Batch, t *tableObj) {
	id := strconv.FormatUint(t.entry.ID, 10)
	wb.DeleteMeta(offsetKey(t))
	wb.DeleteMeta(tickKey(t))
	wb.DeleteMeta(wmPartsKey(t))
	wb.DeleteMetaPrefix("bad/" + id + "/")
	wb.DeleteMetaPrefix("wmruns/" + id + "/")
	kept := e.bad[:0]
	for _, b := range e.bad {
		if b.table != t.name {
			kept = append(kept, b)
		}
	}
	e.bad = kept
}
