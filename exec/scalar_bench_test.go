package exec

import (
	"math/rand"
	"regexp"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// LIKE agrees with an equivalent regular expression on random strings and patterns over a
// small alphabet (so that matches are frequent), for both matcher strategies.
func TestScalarLikeMatchesRegexp(t *testing.T) {
	seed := int64(20240229) // fixed: a failure replays exactly
	rng := rand.New(rand.NewSource(seed))
	gen := func(alpha string, n int) string {
		var sb strings.Builder
		for i := 0; i < n; i++ {
			sb.WriteByte(alpha[rng.Intn(len(alpha))])
		}
		return sb.String()
	}
	for i := 0; i < 3000; i++ {
		p := gen("ab%_", rng.Intn(7))
		s := gen("ab", rng.Intn(9))
		re := "^" + strings.NewReplacer("%", ".*", "_", ".").Replace(p) + "$"
		m, err := compileLike(p, 0)
		if err != nil {
			t.Fatal(err)
		}
		want := regexp.MustCompile("(?s)" + re).MatchString(s)
		if got := m.match(s); got != want {
			t.Fatalf("seed %d: %q LIKE %q = %v, want %v", seed, s, p, got, want)
		}
	}
}

// Every kernel releases what it allocates: evaluate a spread of expressions under a checked
// allocator and check that nothing is left once the results are released.
func TestScalarNoLeaks(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	saved := Mem
	Mem = mem
	defer func() { Mem = saved }()

	cols := []scalarCol{
		scol(tyBig, 1, 0, nil, 4),
		scol(tyStr, "a", "b", nil, "abc"),
		scol(tyBool, true, nil, false, true),
		scol(tyDate, "2024-01-01", nil, "1969-12-31", "2000-02-29"),
	}
	b := sbuildBatch(t, cols, 0)
	c := srefs(cols)
	mk := func(e Expr, err error) Expr {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	zero := slit(t, 0, tyBig)
	eq0 := mk(NewBinary("=", c[0], zero))
	div := mk(NewBinary("/", slit(t, 8, tyBig), c[0]))
	exprs := []Expr{
		mk(NewBinary("+", c[0], slit(t, 1, tyBig))),
		mk(NewBinary("||", c[1], c[0])),
		mk(NewBinary("AND", c[2], mk(NewBinary("<>", c[0], zero)))),
		mk(NewBinary("AND", mk(NewBinary("<>", c[0], zero)), mk(NewBinary(">", div, zero)))),
		mk(NewCase(nil, []Expr{eq0}, []Expr{c[1]}, mk(NewFunc("upper", []Expr{c[1]})))),
		mk(NewCase(nil, []Expr{eq0}, []Expr{zero}, div)),
		mk(NewFunc("coalesce", []Expr{c[1], slit(t, "z", tyStr)})),
		mk(NewFunc("coalesce", []Expr{c[0], div})),
		mk(NewFunc("nullif", []Expr{c[1], slit(t, "a", tyStr)})),
		mk(NewCast(c[3], tyStr, false)),
		mk(NewCast(c[1], tyBig, true)),
		mk(NewLike(c[1], slit(t, "a%", tyStr), '\\', false)),
		mk(NewIn(c[1], []Expr{slit(t, "a", tyStr), &Const{T: tyNull}}, true)),
		mk(NewFunc("date_trunc", []Expr{slit(t, "month", tyStr), c[3]})),
		mk(NewFunc("greatest", []Expr{c[1], slit(t, "b", tyStr)})),
		NewIsNull(c[2], false),
		mk(NewNot(c[2])),
		&Const{V: "k", T: tyStr},
	}
	for _, e := range exprs {
		a, err := e.Eval(b)
		if err != nil {
			t.Fatalf("%s: %v", e, err)
		}
		a.Release()
	}
	releaseBatch(b)
	mem.AssertSize(t, 0)
}

func sbenchBatch(n int) *Batch {
	rng := rand.New(rand.NewSource(1))
	a, b := make([]int64, n), make([]int64, n)
	for i := range a {
		a[i] = rng.Int63n(1 << 40)
		b[i] = rng.Int63n(1 << 40)
	}
	return &Batch{N: n, Cols: []arrow.Array{NewInt64(a, nil), NewInt64(b, nil)}}
}

func srunBench(b *testing.B, e Expr, batch *Batch) {
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		out, err := e.Eval(batch)
		if err != nil {
			b.Fatal(err)
		}
		out.Release()
	}
	b.ReportMetric(float64(b.N)*float64(batch.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkScalarArith evaluates a + b * 2 over 64k BIGINT rows.
func BenchmarkScalarArith(b *testing.B) {
	batch := sbenchBatch(1 << 16)
	x := &ColRef{Idx: 0, T: tyBig, Name: "a"}
	y := &ColRef{Idx: 1, T: tyBig, Name: "b"}
	m, _ := NewBinary("*", y, &Const{V: int64(2), T: tyBig})
	e, err := NewBinary("+", x, m)
	if err != nil {
		b.Fatal(err)
	}
	srunBench(b, e, batch)
}

// BenchmarkScalarCompare evaluates a < b and a < constant over 64k BIGINT rows.
func BenchmarkScalarCompare(b *testing.B) {
	batch := sbenchBatch(1 << 16)
	x := &ColRef{Idx: 0, T: tyBig, Name: "a"}
	y := &ColRef{Idx: 1, T: tyBig, Name: "b"}
	b.Run("col-col", func(b *testing.B) {
		e, _ := NewBinary("<", x, y)
		srunBench(b, e, batch)
	})
	b.Run("col-const", func(b *testing.B) {
		e, _ := NewBinary("<", x, &Const{V: int64(1 << 39), T: tyBig})
		srunBench(b, e, batch)
	})
}
