package sql

import "strings"

// LitKind is the kind of a literal in a fast-path INSERT ... VALUES.
type LitKind int

// Literal kinds.
const (
	LitNull      LitKind = iota
	LitInt               // 12 (Text holds the digits)
	LitDecimal           // 1.5
	LitFloat             // 1e5
	LitString            // 'abc' (Text holds the decoded value)
	LitBool              // TRUE / FALSE (Bool)
	LitTimestamp         // TIMESTAMP '...'
	LitDate              // DATE '...'
	LitParam             // ?
)

// Literal is one value of a fast-path INSERT ... VALUES row.
type Literal struct {
	Kind LitKind
	Text string
	Neg  bool
	Bool bool
	off  int
}

// LitPos is the position of a literal in the user's text.
func (s *Stmt) LitPos(l Literal) Pos { return s.src.pos(l.off) }

// fastInsert recognises `INSERT INTO t [(c, ...)] VALUES (lit, ...), ...` whose values are
// all plain literals or ? and fills st as KindInsertValues, so bulk inserts skip the TiDB
// parser and the binder. Anything else returns false and takes the general path.
func fastInsert(st *Stmt, toks []token) bool {
	i := 0
	at := func(k int) token {
		if k < len(toks) {
			return toks[k]
		}
		return token{kind: tkOp, raw: "<end>"}
	}
	if !at(0).is("INSERT") || !at(1).is("INTO") || !at(2).isName() || strings.HasPrefix(strings.ToLower(at(2).val), "__sx_") {
		return false
	}
	name := at(2).val
	i = 3
	if at(i).op(".") {
		return false
	}
	var cols []string
	if at(i).op("(") {
		i++
		for {
			if !at(i).isName() {
				return false
			}
			cols = append(cols, at(i).val)
			i++
			if at(i).op(")") {
				i++
				break
			}
			if !at(i).op(",") {
				return false
			}
			i++
		}
	}
	if !at(i).is("VALUES") {
		return false
	}
	i++
	var rows [][]Literal
	params := 0
	for {
		if !at(i).op("(") {
			return false
		}
		i++
		var row []Literal
		for {
			l, n, ok := literalAt(toks, i)
			if !ok {
				return false
			}
			if l.Kind == LitParam {
				params++
			}
			row = append(row, l)
			i = n
			if at(i).op(")") {
				i++
				break
			}
			if !at(i).op(",") {
				return false
			}
			i++
		}
		rows = append(rows, row)
		if i == len(toks) {
			break
		}
		if !at(i).op(",") {
			return false
		}
		i++
	}
	st.Kind, st.Name, st.Columns, st.Rows, st.Params = KindInsertValues, name, cols, rows, params
	return true
}

// literalAt reads a literal starting at token i.
func literalAt(toks []token, i int) (Literal, int, bool) {
	if i >= len(toks) {
		return Literal{}, i, false
	}
	t := toks[i]
	neg := false
	if t.op("-") || t.op("+") {
		neg = t.op("-")
		i++
		if i >= len(toks) || toks[i].kind != tkNumber {
			return Literal{}, i, false
		}
		t = toks[i]
	}
	l := Literal{Neg: neg, off: t.off, Text: t.raw}
	switch t.kind {
	case tkNumber:
		r := t.raw
		switch {
		case len(r) > 1 && (r[1] == 'x' || r[1] == 'X' || r[1] == 'b' || r[1] == 'B'):
			return Literal{}, i, false
		case strings.ContainsAny(r, "eE"):
			l.Kind = LitFloat
		case strings.Contains(r, "."):
			l.Kind = LitDecimal
		default:
			if len(strings.TrimLeft(r, "0")) > 18 {
				return Literal{}, i, false
			}
			l.Kind = LitInt
		}
		return l, i + 1, true
	case tkString:
		l.Kind, l.Text = LitString, t.val
		return l, i + 1, !neg
	case tkParam:
		l.Kind = LitParam
		return l, i + 1, !neg
	case tkIdent:
		if neg {
			return Literal{}, i, false
		}
		switch {
		case t.is("NULL"):
			l.Kind = LitNull
		case t.is("TRUE"), t.is("FALSE"):
			l.Kind, l.Bool = LitBool, t.is("TRUE")
		case (t.is("TIMESTAMP") || t.is("DATE")) && i+1 < len(toks) && toks[i+1].kind == tkString:
			l.Kind, l.Text = LitTimestamp, toks[i+1].val
			if t.is("DATE") {
				l.Kind = LitDate
			}
			return l, i + 2, true
		default:
			return Literal{}, i, false
		}
		return l, i + 1, true
	}
	return Literal{}, i, false
}
