package engine

import (
	"context"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/types"
)

// Append ingests an Arrow record batch into a table: the bulk path. The batch must have the
// table's columns, in order, with compatible Arrow types (the types QueryArrow returns, or
// wider integer/timestamp units); it is stored and sent to views like an INSERT of its rows.
func (e *Engine) Append(ctx context.Context, name string, rec arrow.RecordBatch) (err error) {
	ctx, done := e.statementContext(ctx)
	defer func() { err = done(err) }()
	if err := ctx.Err(); err != nil {
		return err
	}
	if rec == nil {
		return fmt.Errorf("append: no record batch (nil) for table %s", name)
	}
	if err := e.lock(ctx); err != nil {
		return err
	}
	defer e.mu.Unlock()
	if e.closingDown() {
		return errClosed
	}
	if err := e.awaitRoom(ctx); err != nil {
		return err
	}
	t, ok := e.tables[strings.ToLower(name)]
	if !ok {
		if ent, isObj := e.cat.Lookup(name); isObj {
			return fmt.Errorf("append: %s is a %s, not a table: only tables take rows", name, kindName(ent.Kind))
		}
		return fmt.Errorf("append: table %s does not exist", name)
	}
	if int(rec.NumCols()) != len(t.cols) {
		return fmt.Errorf("append to %s: the batch has %d columns, the table has %d", t.name, rec.NumCols(), len(t.cols))
	}
	b := &exec.Batch{N: int(rec.NumRows()), Cols: make([]arrow.Array, len(t.cols))}
	for i, c := range t.cols {
		f := rec.Schema().Field(i)
		if !strings.EqualFold(f.Name, c.Name) {
			return fmt.Errorf("append to %s: column %d is %q in the batch but %q in the table", t.name, i+1, f.Name, c.Name)
		}
		a, err := toPhysical(rec.Column(i), c.Type)
		if err != nil {
			return fmt.Errorf("append to %s: column %s: %w", t.name, c.Name, err)
		}
		b.Cols[i] = a
	}
	return e.insertBatch(t, b)
}

// floats is a's values as DOUBLE, conv giving row i's.
func floats(a arrow.Array, conv func(i int) float64) arrow.Array {
	vals := make([]float64, a.Len())
	for i := range vals {
		vals[i] = conv(i)
	}
	return exec.NewFloat64(vals, validOf(a))
}

// toPhysical converts an external Arrow array to the engine's representation of type t.
func toPhysical(a arrow.Array, t types.T) (arrow.Array, error) {
	ints := func(conv func(i int) int64) arrow.Array {
		vals := make([]int64, a.Len())
		var valid []bool
		if a.NullN() > 0 {
			valid = make([]bool, a.Len())
		}
		for i := range vals {
			if a.IsNull(i) {
				continue
			}
			if valid != nil {
				valid[i] = true
			}
			vals[i] = conv(i)
		}
		return exec.NewInt64(vals, valid)
	}
	switch t.Kind {
	case types.Int, types.BigInt:
		switch c := a.(type) {
		case *array.Int64:
			if t.Kind == types.BigInt {
				c.Retain()
				return c, nil
			}
			for i, v := range c.Int64Values() {
				if c.IsValid(i) && (v < -1<<31 || v > 1<<31-1) {
					return nil, fmt.Errorf("value %d out of range for INT", v)
				}
			}
			c.Retain()
			return c, nil
		case *array.Int32:
			return ints(func(i int) int64 { return int64(c.Value(i)) }), nil
		case *array.Int16:
			return ints(func(i int) int64 { return int64(c.Value(i)) }), nil
		case *array.Int8:
			return ints(func(i int) int64 { return int64(c.Value(i)) }), nil
		}
	case types.Double:
		switch c := a.(type) {
		case *array.Float64:
			c.Retain()
			return c, nil
		case *array.Float32:
			return floats(a, func(i int) float64 { return float64(c.Value(i)) }), nil
		case *array.Int64: // as an INSERT of integers into DOUBLE
			return floats(a, func(i int) float64 { return float64(c.Value(i)) }), nil
		case *array.Int32:
			return floats(a, func(i int) float64 { return float64(c.Value(i)) }), nil
		case *array.Int16:
			return floats(a, func(i int) float64 { return float64(c.Value(i)) }), nil
		case *array.Int8:
			return floats(a, func(i int) float64 { return float64(c.Value(i)) }), nil
		}
	case types.Bool:
		if c, ok := a.(*array.Boolean); ok {
			c.Retain()
			return c, nil
		}
	case types.Varchar:
		switch c := a.(type) {
		case *array.String:
			c.Retain()
			return c, nil
		case *array.LargeString:
			b := exec.NewBuilder(t, c.Len())
			for i := 0; i < c.Len(); i++ {
				if c.IsNull(i) {
					b.Append(nil)
				} else {
					b.Append(c.Value(i))
				}
			}
			return b.Finish(), nil
		}
	case types.Timestamp:
		if c, ok := a.(*array.Timestamp); ok {
			unit := c.DataType().(*arrow.TimestampType).Unit
			if unit == arrow.Millisecond {
				// The engine's TIMESTAMP is epoch milliseconds in an int64 array: share the buffers.
				d := c.Data()
				nd := array.NewData(arrow.PrimitiveTypes.Int64, d.Len(), d.Buffers(), nil, d.NullN(), d.Offset())
				defer nd.Release()
				return array.NewInt64Data(nd), nil
			}
			return ints(func(i int) int64 { return toMillis(int64(c.Value(i)), unit) }), nil
		}
		if c, ok := a.(*array.Int64); ok {
			c.Retain()
			return c, nil
		}
	case types.Date:
		switch c := a.(type) {
		case *array.Date32:
			return ints(func(i int) int64 { return int64(c.Value(i)) }), nil
		case *array.Date64:
			return ints(func(i int) int64 { return types.FloorDiv(int64(c.Value(i)), types.MsPerDay) }), nil
		}
	case types.Decimal:
		if c, ok := a.(*array.Decimal128); ok {
			dt := c.DataType().(*arrow.Decimal128Type)
			var err error
			out := ints(func(i int) int64 {
				v := decimal128.Num(c.Value(i))
				d := int32(t.Scale) - dt.Scale
				// A value that does not fit before its scale rises does not after (and a wide
				// one would overflow 128 bits rising): out of range either way.
				fits := d <= 0 || v.FitsInPrecision(int32(t.Precision))
				switch {
				case fits && d > 0:
					v = v.IncreaseScaleBy(d)
				case d < 0:
					v = v.ReduceScaleBy(-d, true)
				}
				if (!fits || !v.FitsInPrecision(int32(t.Precision))) && err == nil {
					err = fmt.Errorf("value out of range for %s", t)
				}
				return int64(v.LowBits())
			})
			return out, err
		}
	}
	return nil, fmt.Errorf("cannot store Arrow %s as %s", a.DataType(), t)
}

func validOf(a arrow.Array) []bool {
	if a.NullN() == 0 {
		return nil
	}
	v := make([]bool, a.Len())
	for i := range v {
		v[i] = a.IsValid(i)
	}
	return v
}

func toMillis(v int64, u arrow.TimeUnit) int64 {
	switch u {
	case arrow.Second:
		return v * 1000
	case arrow.Microsecond:
		return types.FloorDiv(v, 1000)
	case arrow.Nanosecond:
		return types.FloorDiv(v, 1_000_000)
	}
	return v
}

// kindName is how errors name a catalog object's kind.
func kindName(k catalog.Kind) string {
	switch k {
	case catalog.KindView:
		return "materialized view"
	case catalog.KindLogicalView:
		return "view"
	}
	return string(k)
}
