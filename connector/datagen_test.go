package connector

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/types"
)

func datagenOpts(kv ...string) map[string]string {
	m := map[string]string{"connector": "datagen"}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

func TestDatagenSequence(t *testing.T) {
	cols := []catalog.Column{
		{Name: "id", Type: types.TBigInt},
		{Name: "name", Type: types.TVarchar},
		{Name: "amount", Type: types.DecimalOf(10, 2)},
		{Name: "f", Type: types.TDouble},
	}
	s := mustOpen(t, datagenOpts(
		"fields.id.kind", "sequence", "fields.id.start", "5", "fields.id.end", "14",
		"fields.name.kind", "sequence", "fields.name.start", "-2",
		"fields.amount.kind", "sequence",
		"fields.f.kind", "sequence", "fields.f.start", "100"), cols)
	got := format(drain(t, s, cols, -1, fixed(4)), cols)
	var want strings.Builder
	for i := 0; i < 10; i++ {
		want.WriteString(strings.Join([]string{
			types.Display(int64(5+i), types.TBigInt), types.Display(int64(i-2), types.TBigInt),
			types.Display(int64(i*100), types.DecimalOf(10, 2)), types.Display(float64(100+i), types.TDouble)}, "|") + "\n")
	}
	if got != want.String() {
		t.Fatalf("sequence rows:\n%s\nwant:\n%s", got, want.String())
	}
}

func TestDatagenSequenceEndsWithTheType(t *testing.T) {
	cols := []catalog.Column{{Name: "d", Type: types.DecimalOf(3, 1)}}
	s := mustOpen(t, datagenOpts("fields.d.kind", "sequence", "fields.d.start", "95"), cols)
	rows := drain(t, s, cols, -1, fixed(100))
	if len(rows) != 5 || rows[4][0].(int64) != 990 {
		t.Fatalf("DECIMAL(3,1) sequence from 95: %d rows ending %v, want 5 ending 99.0", len(rows), rows[len(rows)-1])
	}
}

func TestDatagenRandom(t *testing.T) {
	cols := []catalog.Column{
		{Name: "small", Type: types.TInt},
		{Name: "big", Type: types.TBigInt},
		{Name: "dbl", Type: types.TDouble},
		{Name: "dec", Type: types.DecimalOf(10, 2)},
		{Name: "s", Type: types.TVarchar},
		{Name: "b", Type: types.TBool},
		{Name: "d", Type: types.TDate},
		{Name: "ts", Type: types.TTimestamp},
	}
	s := mustOpen(t, datagenOpts(
		"fields.small.min", "-1", "fields.small.max", "1",
		"fields.dbl.kind", "random", "fields.dbl.min", "-0.5", "fields.dbl.max", "0.5",
		"fields.dec.min", "1.50", "fields.dec.max", "2",
		"fields.s.length", "7",
		"fields.d.min", "2024-02-01", "fields.d.max", "2024-02-03",
		"fields.ts.kind", "random", "fields.ts.min", "2024-05-01 00:00:00", "fields.ts.max", "2024-05-01 00:00:01",
		"number-of-rows", "2000", "seed", "9"), cols)
	rows := drain(t, s, cols, -1, randomSizes(t, 1))
	if len(rows) != 2000 {
		t.Fatalf("number-of-rows 2000 gave %d rows", len(rows))
	}
	seen := map[string]map[any]bool{}
	note := func(col string, v any) {
		if seen[col] == nil {
			seen[col] = map[any]bool{}
		}
		seen[col][v] = true
	}
	d0, _ := types.ParseDate("2024-02-01")
	ts0, _ := types.ParseTimestamp("2024-05-01 00:00:00")
	for _, r := range rows {
		if v := r[0].(int64); v < -1 || v > 1 {
			t.Fatalf("small = %d, want [-1, 1]", v)
		}
		note("small", r[0])
		if v := r[1].(int64); v < 0 || v > 999 {
			t.Fatalf("big = %d, want the default [0, 1000)", v)
		}
		if v := r[2].(float64); v < -0.5 || v > 0.5 {
			t.Fatalf("dbl = %v, want [-0.5, 0.5]", v)
		}
		if v := r[3].(int64); v < 150 || v > 200 {
			t.Fatalf("dec = %d (scaled), want [150, 200]", v)
		}
		note("dec", r[3])
		if v := r[4].(string); len(v) != 7 || strings.Trim(v, letters) != "" {
			t.Fatalf("s = %q, want 7 letters", v)
		}
		note("b", r[5])
		if v := r[6].(int64) - d0; v < 0 || v > 2 {
			t.Fatalf("d = %s, want 2024-02-01..03", types.FormatDate(r[6].(int64)))
		}
		note("d", r[6])
		if v := r[7].(int64) - ts0; v < 0 || v > 1000 {
			t.Fatalf("ts = %s outside its range", types.FormatTimestamp(r[7].(int64)))
		}
	}
	// Bounds are inclusive and every value turns up.
	for col, n := range map[string]int{"small": 3, "dec": 51, "b": 2, "d": 3} {
		if len(seen[col]) != n {
			t.Errorf("%s took %d distinct values, want %d", col, len(seen[col]), n)
		}
	}
}

// Random values depend on (seed, row, column name) only: not on the other columns or
// their order.
func TestDatagenColumnsAreIndependent(t *testing.T) {
	ab := []catalog.Column{{Name: "a", Type: types.TBigInt}, {Name: "b", Type: types.TVarchar}}
	ba := []catalog.Column{{Name: "B", Type: types.TVarchar}, {Name: "c", Type: types.TDouble}, {Name: "a", Type: types.TBigInt}}
	x := drain(t, mustOpen(t, datagenOpts("seed", "5"), ab), ab, 300, fixed(64))
	y := drain(t, mustOpen(t, datagenOpts("seed", "5"), ba), ba, 300, fixed(17))
	for i := range x {
		if x[i][0] != y[i][2] || x[i][1] != y[i][0] {
			t.Fatalf("row %d: %v vs %v", i, x[i], y[i])
		}
	}
	z := drain(t, mustOpen(t, datagenOpts("seed", "6"), ab), ab, 300, fixed(64))
	if format(x, ab) == format(z, ab) {
		t.Fatal("seeds 5 and 6 give the same rows")
	}
}

func TestDatagenSeek(t *testing.T) {
	cols := []catalog.Column{{Name: "id", Type: types.TBigInt}, {Name: "v", Type: types.TDouble},
		{Name: "s", Type: types.TVarchar}, {Name: "ts", Type: types.TTimestamp}}
	opts := datagenOpts("fields.id.kind", "sequence", "fields.ts.max.out.of.order.ms", "50", "number-of-rows", "3000", "seed", "77")
	all := drain(t, mustOpen(t, opts, cols), cols, -1, fixed(1000))
	for i, n := range []int{0, 1, 999, 2999, 3000} {
		s := mustOpen(t, opts, cols)
		if err := s.SeekTo(int64(n)); err != nil {
			t.Fatal(err)
		}
		if got, want := format(drain(t, s, cols, -1, randomSizes(t, int64(i))), cols), format(all[n:], cols); got != want {
			t.Fatalf("rows after SeekTo(%d) differ from a fresh run's", n)
		}
	}
}

func TestDatagenTimestamp(t *testing.T) {
	cols := []catalog.Column{{Name: "ts", Type: types.TTimestamp}, {Name: "plain", Type: types.TTimestamp}}
	s := mustOpen(t, datagenOpts("fields.ts.kind", "timestamp", "fields.ts.mode", "event",
		"fields.ts.start", "2024-06-01 00:00:00", "fields.ts.step.ms", "100", "fields.ts.max.out.of.order.ms", "250"), cols)
	rows := drain(t, s, cols, 5000, fixed(512))
	start, _ := types.ParseTimestamp("2024-06-01 00:00:00")
	maxSeen, disordered := rows[0][0].(int64), 0
	for r, row := range rows {
		ts := row[0].(int64)
		if base := start + int64(r)*100; ts > base || ts < base-250 {
			t.Fatalf("row %d: %s outside [base-250, base]", r, types.FormatTimestamp(ts))
		}
		if ts < maxSeen-250 {
			t.Fatalf("row %d: %s more than 250 ms behind %s", r, types.FormatTimestamp(ts), types.FormatTimestamp(maxSeen))
		}
		if ts < maxSeen {
			disordered++
		}
		maxSeen = max(maxSeen, ts)
		// A TIMESTAMP column without options is an event-time sequence from 2024-01-01, 1 ms apart.
		if got := row[1].(int64); got != defaultStart+int64(r) {
			t.Fatalf("row %d: default timestamp %s", r, types.FormatTimestamp(got))
		}
	}
	if disordered == 0 {
		t.Fatal("no row out of order")
	}
}

func TestDatagenTimestampNow(t *testing.T) {
	clock := newFakeClock()
	cols := []catalog.Column{{Name: "ts", Type: types.TTimestamp}}
	s, err := Open(datagenOpts("fields.ts.mode", "now"), cols, clock)
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(1234 * time.Millisecond)
	b, err := s.Next(context.Background(), 3)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < b.N; i++ {
		if got := b.Row(i)[0].(int64); got != clock.Now().UnixMilli() {
			t.Fatalf("mode now gave %s, want the clock's %s", types.FormatTimestamp(got), clock.Now())
		}
	}
}

func TestDatagenDefaults(t *testing.T) {
	cols := []catalog.Column{{Name: "n", Type: types.TInt}, {Name: "s", Type: types.TVarchar}, {Name: "iv", Type: types.TInterval}}
	rows := drain(t, mustOpen(t, datagenOpts(), cols), cols, 1000, fixed(1000))
	for _, r := range rows {
		if n := r[0].(int64); n < 0 || n > 999 {
			t.Fatalf("default INT %d outside [0, 1000)", n)
		}
		if s := r[1].(string); len(s) != 10 {
			t.Fatalf("default VARCHAR %q is not 10 letters", s)
		}
		if iv := r[2].(int64); iv < 0 || iv > 999 {
			t.Fatalf("default INTERVAL %d outside [0, 1000)", iv)
		}
	}
}
