package exec

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/types"
)

// A scalar test case is a batch of typed input columns, an expression built over them and
// the expected rows as display text ("NULL" for NULL), or an expected error substring from
// construction or evaluation. Every case is evaluated three ways that must agree: on the
// batch, on the batch with every column sliced out of a larger array (non-zero offsets,
// junk values in the hidden rows) and row by row on one-row slices.

// scalarCol is one input column: a type and its values written as Go literals (int for integers,
// float64, bool, string; strings are parsed for DECIMAL/DATE/TIMESTAMP/INTERVAL columns), nil
// for NULL.
type scalarCol struct {
	t    types.T
	vals []any
}

func scol(t types.T, vals ...any) scalarCol { return scalarCol{t: t, vals: vals} }

// physOf converts a test literal to the physical value of t.
func sphysOf(tb testing.TB, v any, t types.T) any {
	tb.Helper()
	switch x := v.(type) {
	case nil:
		return nil
	case int:
		if t.Kind == types.Double {
			return float64(x)
		}
		return int64(x)
	case int64, float64, bool:
		return x
	case string:
		switch t.Kind {
		case types.Varchar:
			return x
		case types.Interval:
			var n int64
			var unit string
			if _, err := fmt.Sscanf(x, "%d %s", &n, &unit); err != nil {
				tb.Fatalf("bad interval literal %q", x)
			}
			mult := map[string]int64{"ms": 1, "s": 1000, "min": 60_000, "h": 3_600_000, "d": types.MsPerDay}[unit]
			return n * mult
		}
		p, err := parseText(x, t)
		if err != nil {
			tb.Fatalf("bad literal %q for %s: %v", x, t, err)
		}
		return p
	}
	tb.Fatalf("unsupported test literal %T", v)
	return nil
}

// junk is a non-null value for the hidden rows of sliced columns: extreme, so that a kernel
// reading the wrong rows overflows or compares differently.
func sjunk(t types.T) any {
	switch t.Phys() {
	case types.PhysFloat64:
		return 0.0
	case types.PhysBool:
		return true
	case types.PhysString:
		return "\xffjunk"
	}
	if t.Kind == types.Null {
		return nil
	}
	return int64(math.MaxInt64)
}

// buildCol builds column c with pad junk rows before and after the values, sliced back to
// the values (pad 0: a plain array).
func sbuildCol(tb testing.TB, c scalarCol, pad int) arrow.Array {
	b := NewBuilder(c.t, len(c.vals)+2*pad)
	for i := 0; i < pad; i++ {
		b.Append(sjunk(c.t))
	}
	for _, v := range c.vals {
		b.Append(sphysOf(tb, v, c.t))
	}
	for i := 0; i < pad; i++ {
		b.Append(sjunk(c.t))
	}
	a := b.Finish()
	if pad == 0 {
		return a
	}
	defer a.Release()
	return array.NewSlice(a, int64(pad), int64(pad+len(c.vals)))
}

func sbuildBatch(tb testing.TB, cols []scalarCol, pad int) *Batch {
	b := &Batch{}
	for i, c := range cols {
		a := sbuildCol(tb, c, pad)
		if i == 0 {
			b.N = a.Len()
		} else if a.Len() != b.N {
			tb.Fatalf("column %d has %d rows, want %d", i, a.Len(), b.N)
		}
		b.Cols = append(b.Cols, a)
	}
	if len(cols) == 0 {
		b.N = 1
	}
	return b
}

// refs returns ColRefs named a, b, c, ... for the columns.
func srefs(cols []scalarCol) []Expr {
	out := make([]Expr, len(cols))
	for i, c := range cols {
		out[i] = &ColRef{Idx: i, T: c.t, Name: string(rune('a' + i))}
	}
	return out
}

// lit is a literal of type t written as a test literal.
func slit(tb testing.TB, v any, t types.T) *Const { return &Const{V: sphysOf(tb, v, t), T: t} }

// display renders every row of a.
func sdisplay(a arrow.Array, t types.T) []string {
	out := make([]string, a.Len())
	for i := range out {
		out[i] = types.Display(Value(a, i), t)
	}
	return out
}

func sevalDisplay(e Expr, b *Batch) ([]string, error) {
	a, err := e.Eval(b)
	if err != nil {
		return nil, err
	}
	defer a.Release()
	if a.Len() != b.N {
		return nil, fmt.Errorf("result has %d rows, want %d", a.Len(), b.N)
	}
	return sdisplay(a, e.Type()), nil
}

type scalarCase struct {
	name  string
	cols  []scalarCol
	build func(c []Expr) (Expr, error)
	want  []string // rows as display text
	typ   string   // expected result type, when set
	err   string   // expected error substring (construction or evaluation)
	text  string   // expected String(), when set
}

func runScalarCases(t *testing.T, cases []scalarCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			e, err := tt.build(srefs(tt.cols))
			if err == nil {
				var got []string
				b := sbuildBatch(t, tt.cols, 0)
				got, err = sevalDisplay(e, b)
				if err == nil {
					if tt.err != "" {
						t.Fatalf("got %v, want error %q", got, tt.err)
					}
					scheckRows(t, "batch", got, tt.want)
					// Sliced columns: offsets and junk hidden rows must not matter.
					got, err = sevalDisplay(e, sbuildBatch(t, tt.cols, 3))
					if err != nil {
						t.Fatalf("sliced: %v", err)
					}
					scheckRows(t, "sliced", got, tt.want)
					// Row by row.
					for i := 0; i < b.N && len(tt.cols) > 0; i++ {
						one := &Batch{N: 1}
						for _, c := range b.Cols {
							one.Cols = append(one.Cols, array.NewSlice(c, int64(i), int64(i+1)))
						}
						got, err := sevalDisplay(e, one)
						if err != nil {
							t.Fatalf("row %d: %v", i, err)
						}
						scheckRows(t, fmt.Sprintf("row %d", i), got, tt.want[i:i+1])
					}
				}
			}
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.typ != "" && e.Type().String() != tt.typ {
				t.Errorf("type = %s, want %s", e.Type(), tt.typ)
			}
			if tt.text != "" && e.String() != tt.text {
				t.Errorf("String() = %q, want %q", e.String(), tt.text)
			}
		})
	}
}

func scheckRows(t *testing.T, how string, got, want []string) {
	t.Helper()
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("%s:\n got  %q\n want %q", how, got, want)
	}
}

// rows splits "a|b|c" into expected rows.
func srows(s string) []string { return strings.Split(s, "|") }

// bin builds a binary operator over the first two columns.
func sbin(op string) func(c []Expr) (Expr, error) {
	return func(c []Expr) (Expr, error) { return NewBinary(op, c[0], c[1]) }
}
