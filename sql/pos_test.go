package sql

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/pingcap/tidb/pkg/parser/ast"
)

// naivePos is the definition source.pos implements: lines counted from the start, the
// column in runes from the line's start.
func naivePos(text string, off int) Pos {
	off = min(max(off, 0), len(text))
	line := 1 + strings.Count(text[:off], "\n")
	ls := strings.LastIndexByte(text[:off], '\n') + 1
	return Pos{Line: line, Col: utf8.RuneCountInString(text[ls:off]) + 1}
}

// TestSourcePos checks source.pos against naivePos at every offset of random texts: ASCII
// only and with multi-byte runes, long lines crossing runeStep strides, empty lines, and text that
// is not UTF-8.
func TestSourcePos(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"a", "SELECT ", "é", "日本", "🙂", "\n", "\n\n", "\r\n", strings.Repeat("x", 300), "'ö'", "\xff", "\xc3"}
	for round := range 300 {
		var sb strings.Builder
		for range r.IntN(200) {
			p := pieces[r.IntN(len(pieces))]
			if round%2 == 0 && !utf8.ValidString(p) || round%3 == 0 && p[0] >= utf8.RuneSelf {
				continue // half the texts are UTF-8, a third ASCII
			}
			sb.WriteString(p)
		}
		text := sb.String()
		src := &source{text: text}
		for off := -1; off <= len(text)+1; off++ {
			if got, want := src.pos(off), naivePos(text, off); got != want && (off <= 0 || off >= len(text) || utf8.RuneStart(text[off]) || !utf8.ValidString(text)) {
				t.Fatalf("text %q offset %d: %v, want %v", text, off, got, want)
			}
		}
	}
}

// BenchmarkExprPositions asks for the place of every expression of a 5000-row INSERT, as
// binding its rows does: each costs a search, not a scan of the text before it.
func BenchmarkExprPositions(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("INSERT INTO t VALUES ")
	for i := range 5000 {
		if i > 0 {
			sb.WriteString(",\n  ")
		}
		fmt.Fprintf(&sb, "(%d, 'naïve %d', TIMESTAMP '2024-01-01 00:00:00' + INTERVAL '%d' SECOND)", i, i, i)
	}
	stmts, err := Parse(sb.String())
	if err != nil {
		b.Fatal(err)
	}
	st := stmts[0]
	ins, ok := st.Node.(*ast.InsertStmt)
	if !ok || len(ins.Lists) != 5000 {
		b.Fatalf("%T: not the INSERT of 5000 rows", st.Node)
	}
	for b.Loop() {
		for _, row := range ins.Lists {
			for _, e := range row {
				_ = st.PosOf(e)
			}
		}
	}
}
