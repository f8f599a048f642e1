// Package plan binds parsed statements to the catalog and turns queries into plans: a
// logical plan of relational nodes (bound names and types, implicit casts, constant folding,
// predicates pushed down and equi-join keys extracted as the tree is built), then a physical
// dataflow of exec operators for either a bounded query or a maintained view.
//
// Invariant: a plan is immutable once built; every run (a SELECT, a view's maintenance)
// instantiates fresh operators from it, so one plan serves batch and streaming execution.
package plan

import (
	"fmt"
	"strings"
	"time"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// Col is an output column of a node.
type Col struct {
	Name  string
	Table string // qualifier (table name or alias), lower-cased; "" when none
	T     types.T
	// Hidden marks a column only its qualified name reaches (a side's column merged by a
	// USING or NATURAL join): an unqualified name and SELECT * see the merged one.
	Hidden bool
}

// qualified is the column's name with its table, for EXPLAIN.
func (c Col) qualified() string {
	if c.Table != "" {
		return c.Table + "." + c.Name
	}
	return c.Name
}

// Node is a logical plan node.
type Node interface {
	Schema() []Col
	Children() []Node
	explain() string
}

// Relation is a named table or view the binder can scan.
type Relation struct {
	Name string
	Cols []catalog.Column
	// Handle is the engine's object behind the relation.
	Handle any
	// PK lists the primary key columns; TimeCol is the event-time (WATERMARK) column or -1.
	PK      []int
	TimeCol int
	// Untimed names a table without a WATERMARK that holds the relation's watermark unset
	// for good: the relation itself, or a table a view reads (see Untimed); "" when its
	// watermark can advance.
	Untimed string
	// View, set for a logical view (CREATE VIEW), is its statement: the name stands for the
	// statement's query, bound where it is named (Binder.expandView), so such a relation is
	// never scanned and holds no rows.
	View *sql.Stmt
}

// Catalog resolves relation names for the binder.
type Catalog interface {
	Relation(name string) (*Relation, bool)
	RelationNames() []string
}

// Scan reads a relation.
type Scan struct {
	Rel   *Relation
	Alias string
	cols  []Col
}

// Values is a constant relation.
type Values struct {
	Rows [][]any
	cols []Col
}

// Filter keeps the rows for which Pred is TRUE.
type Filter struct {
	Input Node
	Pred  exec.Expr
}

// Project computes expressions.
type Project struct {
	Input Node
	Exprs []exec.Expr
	cols  []Col
}

// Aggregate groups by the first NumKeys input columns and computes Aggs.
type Aggregate struct {
	Input   Node
	NumKeys int
	Aggs    []exec.AggSpec
	cols    []Col
	// Window, when set, makes this a windowed aggregate over a window TVF: the keys include
	// window_start and window_end (at WindowStart and WindowStart+1 of the input).
	Window *WindowInfo
}

// WindowInfo describes the window TVF under a windowed aggregate.
type WindowInfo struct {
	TVF         *sql.WindowTVF
	EmitOnClose bool
	// StartKey and EndKey are the keys holding window_start and window_end.
	StartKey, EndKey int
}

// Window assigns each input row to its windows (a row per window) and appends
// window_start, window_end and window_time.
type Window struct {
	Input    Node
	TVF      *sql.WindowTVF
	TimeCol  int
	PartCols []int
	cols     []Col
}

// Join joins Left and Right.
type Join struct {
	Left, Right         Node
	Kind                exec.JoinKind
	LeftKeys, RightKeys []int
	Cond                exec.Expr // over Left's columns followed by Right's
	// Interval, set for joins in views whose condition bounds the two sides' event times,
	// makes this an interval join (late rows, state freed by the watermark).
	Interval *exec.IntervalSpec
	// Maintained marks a join of a materialized view (its state matters).
	Maintained bool
	// TTL is its view's 'state.ttl' in ms (0: none): what frees a regular join's state.
	TTL int64
}

// TemporalJoin joins each Left row with the version of Right (a versioned table) as of the
// Left row's time (FOR SYSTEM_TIME AS OF).
type TemporalJoin struct {
	Left, Right         Node
	Outer               bool
	LeftKeys, RightKeys []int
	LeftTime, RightTime int
	ProcTime            bool
	Cond                exec.Expr
}

// Sort orders its input.
type Sort struct {
	Input Node
	Keys  []exec.SortKey
}

// Limit keeps a range of rows.
type Limit struct {
	Input         Node
	Count, Offset int64
}

// Rank appends a window function's value to each row.
type Rank struct {
	Input    Node
	Fn       exec.RankFunc
	PartCols []int
	Order    []exec.SortKey
	Arg      int
	Offset   int64
	Default  any
	Frame    *exec.Frame // nil: SQL's default
	// WindowEnd, when >= 0, is a PARTITION BY column holding a window's end (window Top-N):
	// a partition is complete, and freed, once the watermark passes it. EmitOnClose (EMIT ON
	// WINDOW CLOSE) then emits a partition's rows once, when it is complete.
	WindowEnd   int
	EmitOnClose bool
	// Limit, when >= 0, bounds a Top-N: of ROW_NUMBER for a LIMIT in a view (topN), or of
	// ROW_NUMBER, RANK or DENSE_RANK under `WHERE rn <= n` (newFilter): only the rows numbered
	// up to it leave the Rank, so a change below the bound emits nothing. -1: all.
	// NumberHidden: the number is dropped above (topN), so changes that only renumber a row
	// are netted out; rows numbered up to From (the OFFSET) are left out.
	Limit        int64
	NumberHidden bool
	From         int64
	Pos          exec.Pos // the function's place, for its errors
	cols         []Col
}

// Expand copies each row once per grouping set for the Aggregate above it (exec.Expand):
// its columns are the input's first NumKeys (the keys, NULL in the copies of the sets that
// do not keep them), the set's number (BIGINT), then the input's other columns.
type Expand struct {
	Input   Node
	NumKeys int
	Sets    [][]int
}

// Repeat makes Col copies of each row (rows with Col <= 0 or NULL vanish).
type Repeat struct {
	Input Node
	Col   int
}

// Union concatenates inputs with the same column types.
type Union struct {
	Inputs []Node
}

func (n *Scan) Schema() []Col      { return n.cols }
func (n *Values) Schema() []Col    { return n.cols }
func (n *Filter) Schema() []Col    { return n.Input.Schema() }
func (n *Project) Schema() []Col   { return n.cols }
func (n *Aggregate) Schema() []Col { return n.cols }
func (n *Window) Schema() []Col    { return n.cols }
func (n *Join) Schema() []Col {
	return append(append([]Col{}, n.Left.Schema()...), n.Right.Schema()...)
}
func (n *Sort) Schema() []Col  { return n.Input.Schema() }
func (n *Limit) Schema() []Col { return n.Input.Schema() }
func (n *Union) Schema() []Col { return n.Inputs[0].Schema() }
func (n *Rank) Schema() []Col  { return n.cols }
func (n *Expand) Schema() []Col {
	in := n.Input.Schema()
	out := append([]Col{}, in[:n.NumKeys]...)
	out = append(out, Col{Name: "grouping_set", T: types.TBigInt})
	return append(out, in[n.NumKeys:]...)
}
func (n *Expand) Children() []Node { return []Node{n.Input} }
func (n *Expand) explain() string {
	in := n.Input.Schema()
	var sets []string
	for _, set := range n.Sets {
		var names []string
		for _, c := range set {
			names = append(names, in[c].Name)
		}
		sets = append(sets, "("+strings.Join(names, ", ")+")")
	}
	return "Expand grouping sets " + strings.Join(sets, ", ")
}
func (n *Repeat) Schema() []Col    { return n.Input.Schema() }
func (n *Repeat) Children() []Node { return []Node{n.Input} }
func (n *Repeat) explain() string {
	return "Repeat each row " + n.Input.Schema()[n.Col].Name + " times"
}
func (n *TemporalJoin) Schema() []Col {
	return append(append([]Col{}, n.Left.Schema()...), n.Right.Schema()...)
}
func (n *TemporalJoin) Children() []Node { return []Node{n.Left, n.Right} }
func (n *TemporalJoin) explain() string {
	kind := "TemporalJoin INNER"
	if n.Outer {
		kind = "TemporalJoin LEFT"
	}
	l, r := n.Left.Schema(), n.Right.Schema()
	var keys []string
	for i := range n.LeftKeys {
		keys = append(keys, fmt.Sprintf("%s = %s", l[n.LeftKeys[i]].qualified(), r[n.RightKeys[i]].qualified()))
	}
	if n.ProcTime {
		return fmt.Sprintf("%s on %s as of PROCTIME() (lookup of the current version; not deterministic)", kind, strings.Join(keys, " AND "))
	}
	return fmt.Sprintf("%s on %s as of %s (probe rows wait for the watermark; versions older than the newest at or below it are freed)",
		kind, strings.Join(keys, " AND "), l[n.LeftTime].qualified())
}

func (n *Scan) Children() []Node      { return nil }
func (n *Values) Children() []Node    { return nil }
func (n *Filter) Children() []Node    { return []Node{n.Input} }
func (n *Project) Children() []Node   { return []Node{n.Input} }
func (n *Aggregate) Children() []Node { return []Node{n.Input} }
func (n *Window) Children() []Node    { return []Node{n.Input} }
func (n *Join) Children() []Node      { return []Node{n.Left, n.Right} }
func (n *Sort) Children() []Node      { return []Node{n.Input} }
func (n *Limit) Children() []Node     { return []Node{n.Input} }
func (n *Union) Children() []Node     { return n.Inputs }
func (n *Rank) Children() []Node      { return []Node{n.Input} }

// Types returns the column types of a schema.
func Types(cols []Col) []types.T {
	ts := make([]types.T, len(cols))
	for i, c := range cols {
		ts[i] = c.T
	}
	return ts
}

func (n *Scan) explain() string {
	// A window TVF's carrier alias (sql: __sx_tvf_<n>) is no name the user wrote.
	if n.Alias != "" && !strings.EqualFold(n.Alias, n.Rel.Name) && !strings.HasPrefix(n.Alias, "__sx_") {
		return fmt.Sprintf("Scan %s AS %s", n.Rel.Name, n.Alias)
	}
	return "Scan " + n.Rel.Name
}
func (n *Values) explain() string { return fmt.Sprintf("Values (%d rows)", len(n.Rows)) }
func (n *Filter) explain() string { return "Filter " + n.Pred.String() }
func (n *Project) explain() string {
	parts := make([]string, len(n.Exprs))
	for i, e := range n.Exprs {
		parts[i] = e.String()
		if n.cols[i].Name != "" && n.cols[i].Name != parts[i] {
			parts[i] += " AS " + n.cols[i].Name
		}
	}
	return "Project " + strings.Join(parts, ", ")
}
func (n *Aggregate) explain() string {
	in := n.Input.Schema()
	var keys []string
	for i := 0; i < n.NumKeys; i++ {
		keys = append(keys, in[i].Name)
	}
	var aggs []string
	for _, a := range n.Aggs {
		switch {
		case a.Fn == exec.AggCountStar:
			aggs = append(aggs, "count(*)")
		case a.Distinct:
			aggs = append(aggs, fmt.Sprintf("%s(DISTINCT %s)", a.Fn, in[a.Arg].Name))
		default:
			aggs = append(aggs, fmt.Sprintf("%s(%s)", a.Fn, in[a.Arg].Name))
		}
	}
	kind := "HashAggregate"
	if n.Window != nil {
		kind = "WindowAggregate " + n.Window.TVF.Kind.String()
		if n.Window.EmitOnClose {
			kind += " (emit on window close; state freed when the watermark passes window_time)"
		} else {
			kind += " (emit on update; state freed when the watermark passes window_time)"
		}
	}
	return fmt.Sprintf("%s keys=[%s] aggs=[%s]", kind, strings.Join(keys, ", "), strings.Join(aggs, ", "))
}
func (n *Window) explain() string {
	args := make([]string, len(n.TVF.Args))
	for i, a := range n.TVF.Args {
		args[i] = types.FormatInterval(a)
	}
	return fmt.Sprintf("Window %s(%s, %s)", n.TVF.Kind, n.TVF.TimeCol, strings.Join(args, ", "))
}
func (n *Join) explain() string {
	s := fmt.Sprintf("HashJoin %s", n.Kind)
	if len(n.LeftKeys) == 0 && n.Cond == nil {
		s = "CrossJoin"
	}
	l, r := n.Left.Schema(), n.Right.Schema()
	var keys []string
	for i := range n.LeftKeys {
		keys = append(keys, fmt.Sprintf("%s = %s", l[n.LeftKeys[i]].qualified(), r[n.RightKeys[i]].qualified()))
	}
	if len(keys) > 0 {
		s += " on " + strings.Join(keys, " AND ")
	}
	if n.Cond != nil {
		s += " filter " + n.Cond.String()
	}
	if n.Interval != nil {
		s = strings.Replace(s, "HashJoin", "IntervalJoin", 1)
		s += fmt.Sprintf(" (%s - %s in [%d ms, %d ms]; rows freed when the watermark passes the bounds)",
			r[n.Interval.RightTime].qualified(), l[n.Interval.LeftTime].qualified(), n.Interval.Lo, n.Interval.Hi)
	} else if n.Maintained && n.TTL > 0 {
		s += fmt.Sprintf(" (regular join: a kept row is forgotten once the watermark passes its last change by 'state.ttl' = %s)",
			time.Duration(n.TTL)*time.Millisecond)
	} else if n.Maintained {
		s += " (regular join: state grows with both inputs; bound it with 'state.ttl')"
	}
	return s
}

// keyText renders a sort key for EXPLAIN.
func keyText(in []Col, k exec.SortKey) string {
	s := in[k.Col].Name
	if k.Desc {
		s += " DESC"
	}
	switch k.Nulls {
	case exec.NullsFirst:
		s += " NULLS FIRST"
	case exec.NullsLast:
		s += " NULLS LAST"
	}
	return s
}

func (n *Sort) explain() string {
	in := n.Input.Schema()
	var ks []string
	for _, k := range n.Keys {
		ks = append(ks, keyText(in, k))
	}
	return "Sort " + strings.Join(ks, ", ")
}
func (n *Limit) explain() string {
	if n.Count < 0 {
		return fmt.Sprintf("Limit offset=%d", n.Offset)
	}
	return fmt.Sprintf("Limit %d offset=%d", n.Count, n.Offset)
}
func (n *Union) explain() string { return "UnionAll" }
func (n *Rank) explain() string {
	in := n.Input.Schema()
	var parts, keys []string
	for _, c := range n.PartCols {
		parts = append(parts, in[c].Name)
	}
	for _, k := range n.Order {
		keys = append(keys, keyText(in, k))
	}
	fn := n.cols[len(n.cols)-1].Name
	text := fmt.Sprintf("Rank %s() partition=[%s] order=[%s]", fn, strings.Join(parts, ", "), strings.Join(keys, ", "))
	if f := n.Frame; f != nil {
		kind := "ROWS"
		if f.Range {
			kind = "RANGE"
		}
		text += fmt.Sprintf(" frame=%s BETWEEN %s AND %s", kind, boundText(f.Start), boundText(f.End))
	}
	if n.NumberHidden { // ORDER BY ... LIMIT: the rows it emits
		text += fmt.Sprintf(" rows=%d..", n.From+1)
		if n.Limit >= 0 {
			text += fmt.Sprint(n.Limit)
		}
	} else if n.Limit >= 0 { // WHERE rn <= n above: the rows it numbers up to n
		text += fmt.Sprintf(" limit=%d", n.Limit)
	}
	if n.EmitOnClose {
		text += " (emit on window close)"
	}
	return text
}

// boundText is a frame bound as SQL writes it (an offset in the key's physical units).
func boundText(b exec.Bound) string {
	switch b.Kind {
	case exec.UnboundedPreceding:
		return "UNBOUNDED PRECEDING"
	case exec.UnboundedFollowing:
		return "UNBOUNDED FOLLOWING"
	case exec.CurrentRow:
		return "CURRENT ROW"
	case exec.Preceding:
		return fmt.Sprintf("%v PRECEDING", b.Offset)
	}
	return fmt.Sprintf("%v FOLLOWING", b.Offset)
}

// Explain renders a plan as a tree: each child under its parent, "├─" before all but the
// last, whose subtrees hang from a "│".
func Explain(n Node) string {
	var sb strings.Builder
	var walk func(n Node, indent, branch, rest string)
	walk = func(n Node, indent, branch, rest string) {
		sb.WriteString(indent + branch + n.explain() + "\n")
		kids := n.Children()
		for i, c := range kids {
			if i < len(kids)-1 {
				walk(c, indent+rest, "├─ ", "│  ")
			} else {
				walk(c, indent+rest, "└─ ", "   ")
			}
		}
	}
	walk(n, "", "", "")
	return sb.String()
}
