package sql

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

// dumpTokens renders tokens one per line: kind, raw text, decoded value when
// it differs, and the byte range.
func dumpTokens(toks []token) string {
	var b strings.Builder
	for _, t := range toks {
		fmt.Fprintf(&b, "%-6s %q", t.kind, t.raw)
		if t.val != t.raw {
			fmt.Fprintf(&b, " val=%q", t.val)
		}
		fmt.Fprintf(&b, " [%d,%d)\n", t.off, t.end)
	}
	return b.String()
}

// TestTokenizeGolden tokenizes each case of testdata/tokens.sql (cases are
// separated by lines holding only "----") and compares with tokens.golden.
func TestTokenizeGolden(t *testing.T) {
	in, err := os.ReadFile(filepath.Join("testdata", "tokens.sql"))
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for i, c := range strings.Split(string(in), "\n----\n") {
		fmt.Fprintf(&out, "=== case %d: %q\n", i, c)
		toks, terr := tokenize(c)
		if terr != nil {
			fmt.Fprintf(&out, "error: %v\n", terr)
			continue
		}
		out.WriteString(dumpTokens(toks))
	}
	golden := filepath.Join("testdata", "tokens.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != string(want) {
		t.Errorf("tokens differ from %s (run with -update after checking):\n%s", golden, out.String())
	}
}

func TestTokenizeValues(t *testing.T) {
	cases := []struct {
		in   string
		kind tokKind
		val  string
	}{
		{`'it''s'`, tkString, "it's"},
		{`'a\b'`, tkString, `a\b`}, // a backslash is an ordinary character
		{`"say ""hi"""`, tkQIdent, `say "hi"`},
		{`'tab\there'`, tkString, `tab\there`},
		{`'100\%'`, tkString, `100\%`},
		{"`my col`", tkQIdent, "my col"},
		{"`a``b`", tkQIdent, "a`b"},
		{"1.5e-3", tkNumber, "1.5e-3"},
		{".5", tkNumber, ".5"},
		{"0x1F", tkNumber, "0x1F"},
		{"naïve", tkIdent, "naïve"},
		{"?", tkParam, "?"},
		{"<=>", tkOp, "<=>"},
		{"=>", tkOp, "=>"},
		{"::", tkOp, "::"},
	}
	for _, c := range cases {
		toks, err := tokenize(c.in)
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		if len(toks) != 1 || toks[0].kind != c.kind || toks[0].val != c.val {
			t.Errorf("%s: got %s", c.in, dumpTokens(toks))
		}
	}
}

func TestTokenizeErrors(t *testing.T) {
	cases := []struct {
		in        string
		line, col int
		msg       string
	}{
		{"SELECT 'abc", 1, 8, "unterminated string literal"},
		{"SELECT 1\n  /* never closed", 2, 3, "unterminated comment"},
		{"SELECT `x", 1, 8, "unterminated quoted identifier"},
		{"SELECT \"x", 1, 8, "unterminated quoted identifier"},
		{`SELECT 'x\`, 1, 8, "unterminated string literal"},
	}
	for _, c := range cases {
		_, err := tokenize(c.in)
		if err == nil || err.Line != c.line || err.Col != c.col || err.Msg != c.msg {
			t.Errorf("%q: got %v, want %s at %d:%d", c.in, err, c.msg, c.line, c.col)
		}
	}
}
