package plan

import (
	"context"
	"fmt"
	"slices"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/temporal"
	"github.com/streamsql/streamsql/types"
	"github.com/streamsql/streamsql/window"
)

// Source is an input of a dataflow: a relation the engine feeds (a bounded scan for a
// query; a backfill then every change for a view) or constant rows.
type Source struct {
	Rel   *Relation
	Rows  [][]any
	Types []types.T
	Out   exec.Output
	// History, in a bounded query, asks for Rel's stored changes in the order they were
	// accepted, with its watermarks, instead of its current rows: the versioned side of a
	// temporal join, whose probes join the version as of their time.
	History bool
	// Bounds, in a bounded query, are those of the filters right above the scan: a table's
	// segments whose rows they all exclude need not be read (table.ScanWhere).
	Bounds []exec.ValueBound
}

// BuildOptions says how to instantiate a plan.
type BuildOptions struct {
	// Batch builds a bounded query: blocking operators emit at End.
	Batch bool
	// Late receives the late rows of a windowed operator whose rows, of columns cols, come
	// from table: the table under the operator's filters and projections (a CTE or logical
	// view over it) or, when there is none such, the relation its window TVF names.
	Late func(table string, cols []Col) window.LateSink
	// TTL (ms, 0: none) bounds the state of non-windowed aggregates and regular joins
	// ('state.ttl'): keys idle for longer, by event time, are dropped.
	TTL int64
	// Ctx cancels a bounded query: joins, whose output can be far larger than their
	// input, check it between chunks.
	Ctx context.Context
	// RowErrors, for a view, confines data errors of filters and projections to the rows
	// that raise them (see exec.RowErrors); nil fails the batch.
	RowErrors exec.RowErrors
}

// Dataflow is an instantiated plan.
type Dataflow struct {
	// Sources are in the order they must be run for a bounded query (a join's right input
	// first).
	Sources []*Source
	// State lists the stateful operators in an order fixed by the plan, so that a
	// checkpoint's states can be loaded into the operators of a rebuilt dataflow.
	State []exec.Stateful
}

// Build instantiates fresh operators for a plan, sending its output to sink.
func Build(root Node, sink exec.Operator, opt BuildOptions) (*Dataflow, error) {
	bd := &builder{opt: opt, df: &Dataflow{}}
	if err := bd.build(root, exec.Output{Op: sink}); err != nil {
		return nil, err
	}
	return bd.df, nil
}

type builder struct {
	opt BuildOptions
	df  *Dataflow
	// aggregated holds the windows whose rows reach an aggregate through filters and
	// projections only: nothing keeps their columns past a push.
	aggregated map[*Window]bool
	// runsOnly holds those of them whose window columns the aggregate reads only as its
	// window_start and window_end keys, through projections of columns (window.Assign's
	// RunsOnly).
	runsOnly map[*Window]bool
	// inOrder holds those of them whose aggregate needs its rows in arrival order
	// (window.Assign's InOrder).
	inOrder map[*Window]bool
	// bounds are those of the filters being built over a scan (filterBounds), for its
	// Source.
	bounds []exec.ValueBound
}

// filterBounds notes, in a bounded query, the bounds of filter f when it stands on a scan
// or on another filter (the chain ends at the scan, which takes them); any other input
// drops them, as its columns are not the scan's.
func (bd *builder) filterBounds(f *Filter) {
	switch f.Input.(type) {
	case *Scan, *Filter:
		if bd.opt.Batch {
			bd.bounds = append(bd.bounds, exec.ValueBounds(f.Pred)...)
		}
	default:
		bd.bounds = nil
	}
}

// stateful records a stateful operator and returns it as an output.
func (bd *builder) stateful(op interface {
	exec.Operator
	exec.Stateful
}, port int) exec.Output {
	bd.df.State = append(bd.df.State, op)
	return exec.Output{Op: op, Port: port}
}

func (bd *builder) build(n Node, out exec.Output) error {
	switch x := n.(type) {
	case *Scan:
		bd.df.Sources = append(bd.df.Sources, &Source{Rel: x.Rel, Types: Types(x.cols), Out: out, Bounds: bd.bounds})
		bd.bounds = nil
		return nil
	case *Values:
		bd.df.Sources = append(bd.df.Sources, &Source{Rows: x.Rows, Types: Types(x.cols), Out: out})
		return nil
	case *Filter:
		bd.filterBounds(x)
		return bd.build(x.Input, exec.Output{Op: &exec.Filter{Pred: x.Pred, Types: Types(x.Schema()), Errs: bd.opt.RowErrors, Out: out}})
	case *Project:
		p := &exec.Project{Exprs: x.Exprs, Types: Types(x.Input.Schema()), Errs: bd.opt.RowErrors, Out: out}
		if jn, ok := x.Input.(*Join); ok && bd.opt.Batch && jn.Cond == nil {
			if refs := columnRefs(x.Exprs); refs != nil {
				// The join gathers only the columns the projection reads.
				need := make([]bool, len(jn.Schema()))
				for _, c := range refs {
					need[c] = true
				}
				return bd.buildJoin(jn, exec.Output{Op: p}, need)
			}
		}
		if f, ok := x.Input.(*Filter); ok {
			if keep := columnRefs(x.Exprs); keep != nil {
				bd.filterBounds(f)
				return bd.build(f.Input, exec.Output{Op: &exec.Filter{Pred: f.Pred, Types: Types(f.Schema()), Errs: bd.opt.RowErrors, Keep: keep, Out: out}})
			}
		}
		return bd.build(x.Input, exec.Output{Op: p})
	case *Aggregate:
		in := x.Input.Schema()
		h := &exec.HashAgg{KeyT: Types(in[:x.NumKeys]), Aggs: x.Aggs, Batch: bd.opt.Batch, Retract: !bd.opt.Batch, Errs: bd.opt.RowErrors, Out: out}
		if x.Window == nil {
			h.TTL = bd.opt.TTL
		}
		for i := 0; i < x.NumKeys; i++ {
			h.Keys = append(h.Keys, i)
		}
		if e, ok := x.Input.(*Expand); ok {
			if h.TTL > 0 {
				// A row's copies share its watermark, so the watermark after a copy is not
				// the one after its row: the TTL clocks would run early.
				return fmt.Errorf("'state.ttl' is not supported with GROUPING SETS, ROLLUP or CUBE")
			}
			for set, keys := range e.Sets {
				if len(keys) == 0 { // (): its row is there over no input too
					key := make([]any, x.NumKeys)
					key[x.NumKeys-1] = int64(set)
					h.Always = append(h.Always, key)
				}
			}
		}
		if x.Window != nil {
			if x.Window.TVF.Kind == sql.Session {
				return bd.buildSession(x, h, out)
			}
			h.Windowed, h.WindowEnd, h.WindowStart, h.EmitOnClose = true, x.Window.EndKey, x.Window.StartKey, x.Window.EmitOnClose
			if w := windowOf(x.Input); w != nil {
				if bd.aggregated == nil {
					bd.aggregated, bd.runsOnly, bd.inOrder = map[*Window]bool{}, map[*Window]bool{}, map[*Window]bool{}
				}
				bd.aggregated[w] = true
				bd.runsOnly[w] = windowKeysOnly(x, w)
				bd.inOrder[w] = slices.ContainsFunc(x.Aggs, exec.AggSpec.InArrivalOrder)
			}
		}
		return bd.build(x.Input, bd.stateful(h, 0))
	case *Window:
		if x.TVF.Kind == sql.Session {
			return &sql.Error{Line: x.TVF.Pos.Line, Col: x.TVF.Pos.Col, Msg: "SESSION windows are only supported under GROUP BY window_start, window_end"}
		}
		a := &window.Assign{Spec: window.Spec{Kind: x.TVF.Kind, Args: x.TVF.Args}, TimeCol: x.TimeCol, Types: Types(x.Input.Schema()),
			Reuse: bd.aggregated[x], RunsOnly: bd.runsOnly[x], InOrder: bd.inOrder[x], Out: out}
		if bd.opt.Late != nil {
			a.Late = bd.opt.Late(lateTable(x), x.Input.Schema())
		}
		return bd.build(x.Input, bd.stateful(a, 0))
	case *Join:
		return bd.buildJoin(x, out, nil)
	case *TemporalJoin:
		j := &temporal.Join{Outer: x.Outer, LeftKeys: x.LeftKeys, RightKeys: x.RightKeys, LeftTime: x.LeftTime, RightTime: x.RightTime,
			LeftT: Types(x.Left.Schema()), RightT: Types(x.Right.Schema()), Cond: x.Cond, ProcTime: x.ProcTime, Out: out}
		if bd.opt.Late != nil {
			if name := scannedTable(x.Left); name != "" {
				j.Late = bd.opt.Late(name, x.Left.Schema())
			}
		}
		n := len(bd.df.Sources)
		if err := bd.build(x.Right, bd.stateful(j, 1)); err != nil {
			return err
		}
		for _, src := range bd.df.Sources[n:] {
			src.History = bd.opt.Batch && !x.ProcTime
		}
		return bd.build(x.Left, exec.Output{Op: j, Port: 0})
	case *Sort:
		return bd.build(x.Input, exec.Output{Op: &exec.Sort{Keys: x.Keys, Types: Types(x.Schema()), Out: out}})
	case *Limit:
		if srt, ok := x.Input.(*Sort); ok && bd.opt.Batch && x.Count >= 0 {
			// ORDER BY ... LIMIT over bounded input: the sort keeps only the rows the limit
			// can return (a Top-N heap) instead of sorting every row.
			lim := &exec.Limit{Count: x.Count, Offset: x.Offset, Types: Types(x.Schema()), Out: out}
			so := &exec.Sort{Keys: srt.Keys, Types: Types(srt.Schema()), Limit: x.Count + x.Offset, Out: exec.Output{Op: lim}}
			return bd.build(srt.Input, exec.Output{Op: so})
		}
		return bd.build(x.Input, exec.Output{Op: &exec.Limit{Count: x.Count, Offset: x.Offset, Types: Types(x.Schema()), Out: out}})
	case *Rank:
		sch := x.Schema()
		r := &exec.Ranker{Fn: x.Fn, PartCols: x.PartCols, Order: x.Order, Types: Types(x.Input.Schema()), Arg: x.Arg,
			Offset: x.Offset, Default: x.Default, Frame: x.Frame, ResultT: sch[len(sch)-1].T, Windowed: x.WindowEnd >= 0, WindowEnd: x.WindowEnd, EmitOnClose: x.EmitOnClose, Limit: x.Limit, NumberHidden: x.NumberHidden, From: x.From, Batch: bd.opt.Batch, Pos: x.Pos, Errs: bd.opt.RowErrors, Out: out}
		return bd.build(x.Input, bd.stateful(r, 0))
	case *Expand:
		return bd.build(x.Input, exec.Output{Op: &exec.Expand{NumKeys: x.NumKeys, Sets: x.Sets, Types: Types(x.Input.Schema()), Out: out}})
	case *Repeat:
		return bd.build(x.Input, exec.Output{Op: &exec.Repeat{Col: x.Col, Types: Types(x.Schema()), Out: out}})
	case *Union:
		u := &exec.Union{Ports: len(x.Inputs), Out: out}
		bd.df.State = append(bd.df.State, u)
		for i, in := range x.Inputs {
			if err := bd.build(in, exec.Output{Op: u, Port: i}); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("internal error: no operator for %T", n)
}

// buildSession builds a SESSION window aggregate: the session operator reads the window's
// input and evaluates, per session, the operators between the window and the aggregate
// plus the aggregate itself (in batch mode) over the session's rows.
func (bd *builder) buildSession(x *Aggregate, proto *exec.HashAgg, out exec.Output) error {
	w := windowOf(x.Input)
	outT := Types(x.Schema())
	eval := func(b *exec.Batch) (*exec.Batch, error) {
		coll := &exec.Collector{Types: outT, Ordered: true}
		h := &exec.HashAgg{Keys: proto.Keys, KeyT: proto.KeyT, Aggs: proto.Aggs, Batch: true, Out: exec.Output{Op: coll}}
		in, err := chain(x.Input, w, exec.Output{Op: h})
		if err != nil {
			return nil, err
		}
		if err := in.EmitBatch(b); err != nil {
			return nil, err
		}
		if err := in.Emit(exec.Msg{Kind: exec.MsgEnd}); err != nil {
			return nil, err
		}
		bs := coll.Batches(1 << 16)
		if len(bs) == 0 {
			return nil, nil
		}
		return exec.Concat(bs, outT), nil
	}
	s := &window.Session{Gap: w.TVF.Args[0], TimeCol: w.TimeCol, PartCols: w.PartCols, Types: Types(w.Input.Schema()),
		Eval: eval, OutTypes: outT, EmitOnClose: x.Window.EmitOnClose, Batch: bd.opt.Batch, Out: out}
	if bd.opt.Late != nil {
		s.Late = bd.opt.Late(lateTable(w), w.Input.Schema())
	}
	return bd.build(w.Input, bd.stateful(s, 0))
}

// buildJoin builds a hash join; need, when not nil, marks the output columns read above it
// (exec.HashJoin.Need).
func (bd *builder) buildJoin(x *Join, out exec.Output, need []bool) error {
	j := &exec.HashJoin{Kind: x.Kind, LeftKeys: x.LeftKeys, RightKeys: x.RightKeys,
		LeftT: Types(x.Left.Schema()), RightT: Types(x.Right.Schema()), Cond: x.Cond, Batch: bd.opt.Batch, Ctx: bd.opt.Ctx, Need: need, Out: out}
	if x.Interval == nil {
		j.TTL = x.TTL
	}
	if x.Interval != nil && !bd.opt.Batch {
		spec := *x.Interval
		for side, n := range []Node{x.Left, x.Right} {
			if bd.opt.Late != nil {
				// A side that is not a table or view (a UNION ALL, another join, an
				// aggregate) still reports its late rows, named by the time column's
				// qualifier (the subquery's alias, the table it came from), as a window
				// over a CTE is named by the CTE.
				name := scannedTable(n)
				if name == "" {
					tc := spec.LeftTime
					if side == 1 {
						tc = spec.RightTime
					}
					name = n.Schema()[tc].Table
				}
				sink := bd.opt.Late(name, n.Schema())
				spec.Late[side] = func(t, w int64, row []any) { sink(window.LateRow{EventTime: t, Watermark: w, Row: row}) }
			}
		}
		j.Interval = &spec
	}
	if err := bd.build(x.Right, bd.stateful(j, 1)); err != nil {
		return err
	}
	return bd.build(x.Left, exec.Output{Op: j, Port: 0})
}

// columnRefs returns the input columns exprs reference when each is a plain column
// reference, else nil.
func columnRefs(exprs []exec.Expr) []int {
	keep := make([]int, len(exprs))
	for i, e := range exprs {
		c, ok := e.(*exec.ColRef)
		if !ok {
			return nil
		}
		keep[i] = c.Idx
	}
	return keep
}

// chain instantiates the filters and projections from n down to stop, sending to out, and
// returns the input of the lowest one.
func chain(n Node, stop Node, out exec.Output) (exec.Output, error) {
	switch x := n.(type) {
	case *Filter:
		if x == stop {
			return out, nil
		}
		return chain(x.Input, stop, exec.Output{Op: &exec.Filter{Pred: x.Pred, Types: Types(x.Schema()), Out: out}})
	case *Project:
		return chain(x.Input, stop, exec.Output{Op: &exec.Project{Exprs: x.Exprs, Out: out}})
	case *Expand:
		return chain(x.Input, stop, exec.Output{Op: &exec.Expand{NumKeys: x.NumKeys, Sets: x.Sets, Types: Types(x.Input.Schema()), Out: out}})
	case *Window:
		if n == stop {
			return out, nil
		}
	}
	return exec.Output{}, fmt.Errorf("internal error: unexpected %T between a SESSION window and its aggregate", n)
}

// lateTable names the relation whose rows window w judges: the one under its input's
// filters and projections (a CTE or logical view over a table passes on the table's rows,
// each with its watermark), else the one its TVF names.
func lateTable(w *Window) string {
	if name := scannedTable(w.Input); name != "" {
		return name
	}
	return w.TVF.Table
}

// scannedTable names the relation under a chain of single-input nodes, or "".
func scannedTable(n Node) string {
	for {
		switch x := n.(type) {
		case *Scan:
			return x.Rel.Name
		case *Filter:
			n = x.Input
		case *Project:
			n = x.Input
		default:
			return ""
		}
	}
}

// windowKeysOnly reports whether windowed aggregate x reads the columns window w appends
// only as its window_start and window_end keys, with nothing but projections of columns
// between them (no filter, no computed column).
func windowKeysOnly(x *Aggregate, w *Window) bool {
	for n := x.Input; n != Node(w); {
		p, ok := n.(*Project)
		if !ok {
			return false
		}
		for _, e := range p.Exprs {
			if _, ok := e.(*exec.ColRef); !ok {
				return false
			}
		}
		n = p.Input
	}
	first := len(w.Input.Schema()) // window_start; window_end and window_time follow
	used := func(col int) bool {
		n, c := origin(x.Input, col)
		return n == Node(w) && c >= first
	}
	for i := 0; i < x.NumKeys; i++ {
		if used(i) && i != x.Window.StartKey && i != x.Window.EndKey {
			return false
		}
	}
	for _, a := range x.Aggs {
		if a.Fn != exec.AggCountStar && used(a.Arg) {
			return false
		}
	}
	_, s := origin(x.Input, x.Window.StartKey)
	_, e := origin(x.Input, x.Window.EndKey)
	return s == first && e == first+1
}
