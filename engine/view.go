package engine

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/plan"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/table"
	"github.com/streamsql/streamsql/types"
	"github.com/streamsql/streamsql/watermark"
	"github.com/streamsql/streamsql/window"
)

// viewObj is a live materialized view: its dataflow, stored rows and readers.
type viewObj struct {
	entry       *catalog.Entry
	name        string
	cols        []catalog.Column
	emitOnClose bool
	store       *viewStore
	rel         *plan.Relation
	// cancel ends the context its operators check (defineView).
	cancel context.CancelFunc
	// inputs are the listeners this view registered on its sources.
	inputs    []input
	listeners []*listener
	subs      []*Subscription
	sinks     []*sinkObj
	// spills are the view's stores for state beyond memory, by operator (spill.go).
	spills    map[int]*state.Spill
	lateCount int64
	// lateRows are the view's late rows (system.late_rows) in the order they came; the first
	// lateLogged are in its late-row log (lateOp), in lateSegs segments.
	lateRows             []lateRow
	lateLogged, lateSegs int
	// key lists the columns that identify a row when keyed (plan.UniqueKey): a change that
	// retracts a row and inserts one with the same key is an update (-U, +U).
	key   []int
	keyed bool
	// late holds late rows reported but not yet recorded, lateOps numbers the operators
	// reporting them (lateSink).
	late      map[string]*pendingLate
	lateOps   int
	watermark int64
	// state and sources are the dataflow's stateful operators and inputs (checkpoints).
	state   []exec.Stateful
	sources []*plan.Source
	// reads are the tables and views its definition names (lower case; readers).
	reads []string
}

type input struct {
	t *tableObj
	v *viewObj
	l *listener
}

// parseDuration reads a duration option, in milliseconds: Flink's syntax (a number and an
// optional unit — '5000' is 5000 ms, '1 min', '90s', '2 hours'), Go's ('1h30m') or an
// INTERVAL's text ('1 hour 30 min'). Zero, in any unit, turns the option off.
func parseDuration(v string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(v))
	digits := len(t) - len(strings.TrimLeft(t, "0123456789"))
	n, err := strconv.ParseInt(t[:digits], 10, 64)
	if u, ok := durationUnits[strings.TrimSpace(t[digits:])]; ok && err == nil && n <= math.MaxInt64/u {
		return n * u, nil
	}
	if d, err := time.ParseDuration(strings.ReplaceAll(t, " ", "")); err == nil && (d == 0 || d >= time.Millisecond) {
		return d.Milliseconds(), nil
	}
	if ms, ok := sql.IntervalTextMillis(t); ok && ms >= 0 { // '1 hour 30 min', as in an INTERVAL
		return ms, nil
	}
	return 0, fmt.Errorf("invalid duration '%s': expected e.g. '1 hour', '30 minutes', '90s' or '5000' (milliseconds)", v)
}

// durationUnits are the units of Flink's durations down to milliseconds (none: milliseconds).
var durationUnits = map[string]int64{
	"": 1, "ms": 1, "milli": 1, "millis": 1, "millisecond": 1, "milliseconds": 1,
	"s": 1000, "sec": 1000, "secs": 1000, "second": 1000, "seconds": 1000,
	"m": 60_000, "min": 60_000, "mins": 60_000, "minute": 60_000, "minutes": 60_000,
	"h": 3_600_000, "hour": 3_600_000, "hours": 3_600_000,
	"d": 86_400_000, "day": 86_400_000, "days": 86_400_000,
}

func (e *Engine) createView(ctx context.Context, s *sql.Stmt) (*Result, error) {
	if !s.Materialized {
		return e.createLogicalView(ctx, s)
	}
	if s.Explain {
		_, node, _, err := e.bindView(ctx, s)
		if err != nil {
			return nil, err
		}
		return explainResult(node), nil
	}
	if taken, err := e.nameTaken(s, s.Name, s.IfNotExists); err != nil {
		return nil, err
	} else if taken {
		return &Result{}, nil
	}
	wb := e.store.NewBatch()
	ent := e.cat.Add(wb, catalog.KindView, s.Name, s.Text)
	var v *viewObj
	made := false
	defer func() {
		// A refusal, a failed commit or a bug's panic leaves no trace of the view.
		if !made {
			e.cat.Forget(s.Name)
			if v != nil {
				e.unwire(v)
				delete(e.views, strings.ToLower(v.name))
			}
		}
	}()
	v, err := e.defineView(ctx, s, ent, true)
	if err != nil {
		wb.Discard()
		return nil, err
	}
	if err := e.store.Commit(wb); err != nil {
		return nil, err
	}
	made = true
	return &Result{}, nil
}

// bindView binds a materialized view's query (CREATE, and EXPLAIN CREATE) with its options:
// its 'state.ttl' in ms (0: none), which its regular joins record and its aggregates take
// at Build.
func (e *Engine) bindView(ctx context.Context, s *sql.Stmt) (*plan.Binder, plan.Node, int64, error) {
	ttl, err := viewTTL(s)
	if err != nil {
		return nil, nil, 0, err
	}
	bd := e.binder(ctx, s, nil)
	bd.Streaming, bd.StateTTL = true, ttl
	node, err := bd.BindQuery(s.Node.(ast.ResultSetNode))
	return bd, node, ttl, err
}

// viewTTL reads a materialized view's options: its 'state.ttl' in ms (0: none).
func viewTTL(s *sql.Stmt) (int64, error) {
	var ttl int64
	for _, o := range s.Options {
		switch o.Key {
		case "state.ttl":
			d, err := parseDuration(o.Value)
			if err != nil {
				return 0, s.ErrorAtPos(o.Pos, "state.ttl: %s", err)
			}
			ttl = d
		default:
			return 0, s.ErrorAtPos(o.Pos, "unknown view option '%s' (known: state.ttl)", o.Key)
		}
	}
	return ttl, nil
}

// defineView binds and wires a view's dataflow and, when backfill is set, fills it from its
// inputs' current rows (at Open, the engine replays the tables into all views instead).
// Cancelling ctx stops the backfill, and the view is not created.
func (e *Engine) defineView(ctx context.Context, s *sql.Stmt, ent *catalog.Entry, backfill bool) (*viewObj, error) {
	bd, node, ttl, err := e.bindView(ctx, s)
	if err != nil {
		return nil, err
	}
	v := &viewObj{entry: ent, name: s.Name, emitOnClose: s.EmitOnClose, watermark: exec.NoWatermark, reads: catalogNames(bd.Relations())}
	seen := map[string]bool{}
	for _, c := range node.Schema() {
		if seen[strings.ToLower(c.Name)] {
			return nil, s.ErrorAt(c.Name, "materialized view %s has two columns named %s; name them with AS", s.Name, c.Name)
		}
		seen[strings.ToLower(c.Name)] = true
		v.cols = append(v.cols, catalog.Column{Name: c.Name, Type: c.T})
	}
	v.store = newViewStore(v, plan.Types(node.Schema()))
	v.rel = &plan.Relation{Name: v.name, Cols: v.cols, Handle: v, TimeCol: plan.EventTimeCol(node), Untimed: plan.Untimed(node)}
	v.key, v.keyed = plan.UniqueKey(node)
	// The operators check bctx where one batch is long work (a join's pairs). It ends with
	// ctx while the backfill runs, then only when the view is dropped: the view outlives the
	// statement.
	bctx, cancel := context.WithCancel(context.Background())
	v.cancel = cancel
	df, err := plan.Build(node, v.store, plan.BuildOptions{TTL: ttl, Late: func(table string, cols []plan.Col) window.LateSink {
		return e.lateSink(v, table, cols)
	}, RowErrors: func(err error) { e.keepError(viewError(v.name, err)) }, Ctx: bctx})
	if err != nil {
		return nil, buildErrorAt(s, err, fmt.Sprintf("materialized view %s cannot be maintained: ", s.Name))
	}
	if s.EmitOnClose && !closesWindows(node) {
		return nil, s.ErrorAtPos(s.PosAfter(nil, "EMIT"), "EMIT ON WINDOW CLOSE needs a window aggregate (GROUP BY window_start, window_end over a window TVF) or a window Top-N (PARTITION BY window_start, window_end)")
	}
	if t := v.rel.Untimed; s.EmitOnClose && t != "" {
		return nil, s.ErrorAtPos(s.PosAfter(nil, "EMIT"), "EMIT ON WINDOW CLOSE would never emit: table %s has no WATERMARK, and the view's watermark is the least of its inputs'", t)
	}
	v.state, v.sources = df.State, df.Sources
	e.attachStores(v)
	made := false
	defer func() {
		// A refusal, a cancelled backfill or a bug's panic leaves the inputs as they were.
		if !made {
			v.late = nil // the view is not created: nor are its late rows
			delete(e.views, strings.ToLower(v.name))
			e.unwire(v)
		}
	}()
	for _, src := range df.Sources {
		if src.Rel == nil {
			continue
		}
		switch h := src.Rel.Handle.(type) {
		case *tableObj:
			if l := listenerOf(h.listeners, v); l != nil {
				l.outs = append(l.outs, src.Out)
				continue
			}
			l := &listener{outs: []exec.Output{src.Out}, view: v, timeCol: h.wmCol, sent: exec.NoWatermark}
			h.listeners = append(h.listeners, l)
			v.inputs = append(v.inputs, input{t: h, l: l})
		case *viewObj:
			if l := listenerOf(h.listeners, v); l != nil {
				l.outs = append(l.outs, src.Out)
				continue
			}
			l := &listener{outs: []exec.Output{src.Out}, view: v, timeCol: -1, sent: exec.NoWatermark}
			h.listeners = append(h.listeners, l)
			v.inputs = append(v.inputs, input{v: h, l: l})
		default:
			return nil, s.ErrorAtPos(s.Pos, "a materialized view cannot read %s", src.Rel.Name)
		}
	}
	e.views[strings.ToLower(v.name)] = v
	if backfill {
		stop := context.AfterFunc(ctx, cancel)
		err := e.backfill(bctx, v, df.Sources)
		if !stop() { // ctx ended, and bctx with it: the operators would stop at once
			err = ctx.Err()
		}
		if err != nil {
			return nil, fmt.Errorf("materialized view %s: %w", v.name, err)
		}
		e.flushLate()
		// The next checkpoint covers the view: until one does, Open replays every change.
		e.dirty = true
	}
	made = true
	return v, nil
}

// closesWindows reports whether the plan holds an operator that EMIT ON WINDOW CLOSE makes
// emit once per complete window: a window aggregate or a window Top-N.
func closesWindows(n plan.Node) bool {
	switch x := n.(type) {
	case *plan.Aggregate:
		if x.Window != nil {
			return true
		}
	case *plan.Rank:
		if x.WindowEnd >= 0 {
			return true
		}
	}
	for _, c := range n.Children() {
		if closesWindows(c) {
			return true
		}
	}
	return false
}

// backfill fills a new view from its sources: tables' stored changes replayed in
// acceptance order across tables (each with the watermark progression its rows had, and the
// table's watermark after each segment, as when they were written), views' rows as they
// stand; then each source's current watermark.
func (e *Engine) backfill(ctx context.Context, v *viewObj, sources []*plan.Source) error {
	var cs []*replayCursor
	// A view input's watermark goes after the tables' replay: its rows carry the watermarks
	// they were judged against, but how its watermark rose among the tables' rows is not
	// kept, and its final one would make a table's rows late that were not.
	var viewWMs []func() error
	for _, src := range sources {
		if src.Rel == nil {
			if err := src.Out.EmitBatch(exec.RowsToBatch(src.Rows, src.Types)); err != nil {
				return err
			}
			continue
		}
		switch h := src.Rel.Handle.(type) {
		case *tableObj:
			// One replay per table, to all the view's inputs reading it (listener.deliver).
			l := listenerOf(h.listeners, v)
			if l.outs[0] != src.Out {
				continue
			}
			r, err := h.data.Replay(0)
			if err != nil {
				return err
			}
			cs = append(cs, &replayCursor{t: h, r: r, gen: watermark.New(), emit: func(b *exec.Batch, w int64) error {
				if err := ctx.Err(); err != nil {
					return err
				}
				if err := l.deliver([]step{{b, exec.NoWatermark}}); err != nil {
					return err
				}
				// Even NoWatermark: the first message starts the operators (a global
				// aggregate's row over no input).
				return l.emit(exec.Msg{Kind: exec.MsgWatermark, Watermark: w})
			}})
		case *viewObj:
			for _, b := range h.store.batches(batchRows) {
				if err := ctx.Err(); err != nil {
					return err
				}
				if err := src.Out.EmitBatch(b); err != nil {
					return err
				}
			}
			out, w := src.Out, h.watermark
			viewWMs = append(viewWMs, func() error { return out.Emit(exec.Msg{Kind: exec.MsgWatermark, Watermark: w}) })
		}
	}
	if err := e.replayMerged(cs); err != nil {
		return err
	}
	for _, emit := range viewWMs {
		if err := emit(); err != nil {
			return err
		}
	}
	for _, c := range cs {
		if err := c.emit(nil, max(c.gen.W, c.t.wm.W)); err != nil {
			return err
		}
	}
	return nil
}

// replayCursor replays one table's stored changes to one destination.
type replayCursor struct {
	t    *tableObj
	r    *table.Replay
	gen  *watermark.Generator
	emit func(change *exec.Batch, w int64) error
}

// replayWatermarks gives the watermarks before each row of a replayed segment, and after
// it: those stored with the segment when its table's watermark depended on more than its
// rows (partitions, see insertBatchWith), else computed from the rows as when they came.
func (e *Engine) replayWatermarks(t *tableObj, g *watermark.Generator, seq uint64, added *exec.Batch) ([]int64, int64, error) {
	if t.partitioned() {
		v, ok, err := e.store.Meta(wmRunsKey(t, seq))
		if err != nil {
			return nil, 0, err
		}
		if ok {
			before, after, err := watermark.DecodeRuns(v, added.N)
			return before, max(after, g.W), err
		}
	}
	vals, err := t.wmValues(added)
	if err != nil {
		return nil, 0, err
	}
	before, after := g.Advance(vals)
	return before, after, nil
}

// replayMerged steps the cursors' segments in acceptance order across tables, sending each
// segment's change (retractions judged against the watermark before it, insertions with the
// watermark before each row) and then the table's watermark.
func (e *Engine) replayMerged(cs []*replayCursor) error {
	for {
		var next *replayCursor
		var nextSeq uint64
		for _, c := range cs {
			if seq, ok := c.r.Seq(); ok && (next == nil || seq < nextSeq) {
				next, nextSeq = c, seq
			}
		}
		if next == nil {
			return nil
		}
		removed, added, err := next.r.Next()
		if err != nil {
			return err
		}
		t, g := next.t, next.gen
		prev := g.W
		if added != nil && t.wmExpr != nil {
			before, after, err := e.replayWatermarks(t, g, nextSeq, added)
			if err != nil {
				return err
			}
			g.Set(after)
			added = &exec.Batch{Cols: added.Cols, N: added.N, WM: before}
		}
		if err := next.emit(t.change(removed, added, prev), g.W); err != nil {
			return err
		}
		e.checkMemory()
	}
}

// lateSink is the late-row side output of one of v's operators reading table, its rows of
// columns cols. A view may
// read a table through several windowed operators (a UNION ALL of two windows, a self join),
// each of which judges every row: a row is recorded once per view, however many of them find
// it late. So reports wait in v.late, counted per operator, until flushLate records each
// distinct late row as often as the operator that saw it most often.
func (e *Engine) lateSink(v *viewObj, table string, cols []plan.Col) window.LateSink {
	// The row as the operator takes it: a table's or view's, or what a subquery, CTE or
	// logical view over one makes of it.
	names, ts := make([]string, len(cols)), plan.Types(cols)
	for i, c := range cols {
		names[i] = c.Name
	}
	op := v.lateOps
	v.lateOps++
	return func(lr window.LateRow) {
		js := ""
		if names != nil && len(lr.Row) >= len(names) {
			js = rowJSON(names, ts, lr.Row[:len(names)])
		}
		r := lateRow{table: table, eventTime: lr.EventTime, watermark: lr.Watermark, rowJSON: js}
		key := fmt.Sprint(table, "\x00", lr.EventTime, "\x00", lr.Watermark, "\x00", js)
		if js == "" {
			key += fmt.Sprint(lr.Row)
		}
		p, ok := v.late[key]
		if !ok {
			if v.late == nil {
				v.late = map[string]*pendingLate{}
			}
			p = &pendingLate{row: r, seq: len(v.late)}
			v.late[key] = p
		}
		for len(p.byOp) <= op {
			p.byOp = append(p.byOp, 0)
		}
		p.byOp[op]++
	}
}

// pendingLate is a distinct late row reported since the last flushLate: how many times each
// operator reported it, and the order in which it was first reported.
type pendingLate struct {
	row  lateRow
	byOp []int64
	seq  int
}

// flushLate records the late rows reported since the last call (see lateSink). It runs
// after each delivery, replay and backfill, so no report waits across them: operators that
// judge the same input row do it within one.
func (e *Engine) flushLate() {
	for _, v := range e.views {
		if len(v.late) == 0 {
			continue
		}
		ps := make([]*pendingLate, len(v.late))
		for _, p := range v.late {
			ps[p.seq] = p
		}
		for _, p := range ps {
			n := slices.Max(p.byOp)
			for k := int64(0); k < n; k++ {
				v.lateRows = append(v.lateRows, p.row)
			}
			v.lateCount += n
		}
		v.late = nil
	}
}

// listenerOf returns view v's listener among ls, or nil.
func listenerOf(ls []*listener, v *viewObj) *listener {
	for _, l := range ls {
		if l.view == v {
			return l
		}
	}
	return nil
}

// unwire detaches a view from its sources and ends its operators' context.
func (e *Engine) unwire(v *viewObj) {
	v.cancel()
	for _, in := range v.inputs {
		if in.t != nil {
			in.t.listeners = removeListener(in.t.listeners, in.l)
		} else {
			in.v.listeners = removeListener(in.v.listeners, in.l)
		}
	}
	v.inputs = nil
}

// removeListener returns ls without l, the slots past its end cleared so that the backing
// array keeps no dropped view's operators alive.
func removeListener(ls []*listener, l *listener) []*listener {
	return slices.DeleteFunc(ls, func(x *listener) bool { return x == l })
}

// dropViews runs DROP VIEW a, b, ... (views of either kind) or, materialized, DROP
// MATERIALIZED VIEW a, b, ...: as PostgreSQL does, it checks every name first, so a refused
// statement drops nothing, and it drops views that read others of the list before those (a
// view that only views of the list read can go with them).
func (e *Engine) dropViews(names []string, ifExists, materialized bool, s *sql.Stmt) (*Result, error) {
	listed := map[string]bool{}
	var pending []string
	for _, name := range names {
		l := strings.ToLower(name)
		_, isView := e.views[l]
		_, isLogical := e.logical[l]
		switch {
		case isView || isLogical && !materialized:
			if !listed[l] {
				listed[l] = true
				pending = append(pending, name)
			}
		case ifExists && !isLogical:
		default:
			_, err := e.dropView(name, false, materialized, s) // the error that names what it is
			return nil, err
		}
	}
	for _, name := range pending {
		for _, r := range e.readers(name) {
			if !listed[strings.ToLower(r.name)] {
				return nil, r.refusal(s, name, name)
			}
		}
	}
	for len(pending) > 0 {
		// The first view no remaining view of the list reads (there is one: reading is
		// acyclic).
		i := slices.IndexFunc(pending, func(name string) bool {
			return !slices.ContainsFunc(e.readers(name), func(r reader) bool { return listed[strings.ToLower(r.name)] })
		})
		if _, err := e.dropView(pending[i], false, materialized, s); err != nil {
			return nil, err
		}
		delete(listed, strings.ToLower(pending[i]))
		pending = slices.Delete(pending, i, i+1)
	}
	return &Result{}, nil
}

// reader is an object that reads a table or view: a view of either kind or a sink.
type reader struct{ kind, name string }

// refusal is the error of a drop of what ("table t", "v") that r reads.
func (r reader) refusal(s *sql.Stmt, name, what string) error {
	return s.ErrorAt(name, "cannot drop %s: %s %s reads it", what, r.kind, r.name)
}

// readers lists what reads table or view name: the materialized views wired to it, the
// views whose definitions name it, the sinks reading it.
func (e *Engine) readers(name string) []reader {
	l := strings.ToLower(name)
	var out []reader
	add := func(r reader) {
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	var ls []*listener
	var sinks []*sinkObj
	if v, ok := e.views[l]; ok {
		ls, sinks = v.listeners, v.sinks
	} else if t, ok := e.tables[l]; ok {
		ls = t.listeners
	}
	for _, li := range ls {
		add(reader{"materialized view", li.view.name})
	}
	// A materialized view reading through a logical view is not wired to what is beneath,
	// nor is a logical view: their definitions say (in creation order).
	for _, ent := range e.cat.Entries() {
		k := strings.ToLower(ent.Name)
		if lv, ok := e.logical[k]; ok && ent.Kind == catalog.KindLogicalView && slices.Contains(lv.reads, l) {
			add(reader{"view", lv.name})
		}
		if v, ok := e.views[k]; ok && ent.Kind == catalog.KindView && slices.Contains(v.reads, l) {
			add(reader{"materialized view", v.name})
		}
	}
	for _, k := range sinks {
		add(reader{"sink", k.name})
	}
	return out
}

// dropView drops a view of either kind (DROP VIEW), or only a materialized one (DROP
// MATERIALIZED VIEW).
func (e *Engine) dropView(name string, ifExists, materialized bool, s *sql.Stmt) (*Result, error) {
	if lv, ok := e.logical[strings.ToLower(name)]; ok {
		if materialized {
			return nil, s.ErrorAt(name, "%s is a view, not a materialized view; use DROP VIEW", name)
		}
		return e.dropLogicalView(lv, s)
	}
	v, ok := e.views[strings.ToLower(name)]
	if !ok {
		if ifExists {
			return &Result{}, nil
		}
		if _, isTable := e.tables[strings.ToLower(name)]; isTable {
			return nil, s.ErrorAt(name, "%s is a table; use DROP TABLE", name)
		}
		if materialized {
			return nil, s.ErrorAt(name, "materialized view %s does not exist", name)
		}
		return nil, s.ErrorAt(name, "view %s does not exist", name)
	}
	if rs := e.readers(name); len(rs) > 0 {
		return nil, rs[0].refusal(s, name, name)
	}
	wb := e.store.NewBatch()
	e.cat.Remove(wb, name)
	wb.ClearOwner(v.entry.ID)
	if err := e.store.Commit(wb); err != nil {
		e.cat.Restore(v.entry)
		return nil, err
	}
	e.unwire(v)
	e.flow.Lock()
	v.closeSubscribers(fmt.Errorf("materialized view %s was dropped", v.name))
	e.flow.Unlock()
	delete(e.views, strings.ToLower(name))
	return &Result{}, nil
}

// viewStore is a view's sink: the multiset of its rows. It forwards every change to the
// views and subscribers reading the view.
//
// In memory the rows are the batches of rows added (added, rows in all) less the rows
// retracted and not yet taken out of them (retracted in all): those in minus, and those still
// in pending, references to the retractions' rows in the batches they came in. An insertion
// costs no per-row work and a retraction a reference; their rows are hashed into minus in
// bulk (settle) only when compact takes the retracted rows out, once they outnumber the rest
// or before the rows are read, so a retraction is hashed once, by the next read or
// compaction, not on the ingest path. idx, built by the first
// holds and kept from then on, counts each row of added.
//
// Invariants: the view's rows are added minus (minus + pending) as multisets (a retraction
// waiting for its row's insertion stays in minus); retracted is the total of minus and
// pending, and rows added's row count.
type viewStore struct {
	view      *viewObj
	types     []types.T
	added     []*exec.Batch
	rows      int64
	minus     *rowBag
	pending   []rowRef
	retracted int64
	idx       *rowBag
	kb        []byte
	// spill holds the rows once the view spills (memory_limit), each as its key encoding
	// (which is the row) with its count; n is then the row count, and err a read of them
	// that failed (each cannot return it: the next query of the view or change to it does).
	spill *state.Spill
	n     int64
	err   error
	// The store holds the rows as of the last checkpoint (persist) as a changelog of segs
	// segments, logRows rows long: rows added (segAdd) and rows retracted (segSub). newAdds
	// and newSubs (nSubs rows, as references) are the changes since, which the next
	// checkpoint appends. Once spilled, the rows are in spill and dropSegs asks the next
	// checkpoint to drop the log.
	newAdds  []*exec.Batch
	newSubs  []rowRef
	nSubs    int64
	segs     uint64
	logRows  int64
	dropSegs bool
	// bytes weighs added (Batch.MemSize) and logBytes the log: a view of few rows that change
	// often (a STRING_AGG over a growing group) piles up large versions long before their
	// count calls for a compaction or a rewrite.
	bytes, logBytes int64
}

// rowRef is n copies of row i of batch b (batches are never changed once made).
type rowRef struct {
	b *exec.Batch
	i int32
	n int64
}

var _ exec.Operator = (*viewStore)(nil)

func newViewStore(v *viewObj, ts []types.T) *viewStore {
	return &viewStore{view: v, types: ts, minus: newRowBag()}
}

// Push implements exec.Operator.
func (s *viewStore) Push(_ int, m exec.Msg) error {
	v := s.view
	switch m.Kind {
	case exec.MsgWatermark:
		if m.Watermark > v.watermark {
			v.watermark = m.Watermark
		}
		for _, l := range v.listeners {
			if err := l.emit(exec.Msg{Kind: exec.MsgWatermark, Watermark: v.watermark}); err != nil {
				return err
			}
		}
		return nil
	case exec.MsgEnd:
		return nil
	}
	if err := s.takeErr(); err != nil {
		return err
	}
	b := m.Batch
	if s.spill != nil {
		if err := s.applySpilled(b); err != nil {
			return err
		}
	} else {
		s.apply(b)
	}
	// Rows keep the watermark they were judged against, so windowed views over this view
	// judge lateness as they would over its table.
	out := &exec.Batch{Cols: b.Cols, N: b.N, W: b.W, WM: b.WM}
	for _, l := range v.listeners {
		if err := l.deliver([]step{{out, exec.NoWatermark}}); err != nil {
			return err
		}
	}
	v.publish(out, s.types)
	return nil
}

// insertOnly reports whether every row of b has weight +1.
func insertOnly(b *exec.Batch) bool {
	for _, w := range b.W {
		if w != 1 {
			return false
		}
	}
	return true
}

// compactMin is the number of retracted rows, and compactBytes the size of the rows kept,
// below which compact waits for a read.
const (
	compactMin   = 1024
	compactBytes = 4 << 20
)

// apply adds a batch's weighted rows: its insertions as a batch of added, its retractions
// to minus. A batch with no weight above 1 is added whole, a retraction's own row then
// taken out with what it retracts.
func (s *viewStore) apply(b *exec.Batch) {
	// Rows keep the watermark they were judged against, for the backfill of a view over this
	// one.
	rows := &exec.Batch{Cols: b.Cols, N: b.N, WM: b.WM}
	if insertOnly(b) {
		s.add(rows, true)
		return
	}
	if noMultiples(b) {
		// The batch is added whole, its retractions too: each is retracted once more than
		// its weight says, which takes out its own row. Nothing is copied.
		for i, w := range b.W {
			if w < 0 {
				s.retract(b, i, 1-w)
			}
		}
		s.add(rows, true)
	} else {
		var pos []int32
		for i, w := range b.W {
			for ; w > 0; w-- {
				pos = append(pos, int32(i))
			}
			if w < 0 {
				s.retract(b, i, -w)
			}
		}
		if len(pos) > 0 {
			s.add(exec.Take(rows, pos, s.types), true)
		}
	}
	if (s.retracted >= compactMin || s.bytes >= compactBytes) && 2*s.retracted > s.rows {
		s.compact()
	}
}

// noMultiples reports whether every row of b has weight 1 or a negative one.
func noMultiples(b *exec.Batch) bool {
	for _, w := range b.W {
		if w > 1 || w == 0 {
			return false
		}
	}
	return true
}

// retract takes n copies of row i of b out of the rows.
func (s *viewStore) retract(b *exec.Batch, i int, n int64) {
	r := rowRef{b: b, i: int32(i), n: n}
	s.pending = append(s.pending, r)
	s.newSubs = append(s.newSubs, r)
	s.retracted += n
	s.nSubs += n
}

// settle moves the pending retractions into minus.
func (s *viewStore) settle() {
	for _, r := range s.pending {
		s.kb = exec.AllKey(s.kb[:0], r.b, int(r.i))
		s.minus.add(s.kb, r.n)
	}
	s.pending = nil
}

// add appends a batch of insertions (fresh: not in the store yet).
func (s *viewStore) add(b *exec.Batch, fresh bool) {
	s.added = append(s.added, b)
	s.rows += int64(b.N)
	s.bytes += b.MemSize()
	if fresh {
		s.newAdds = append(s.newAdds, b)
	}
	if s.idx != nil {
		for i := 0; i < b.N; i++ {
			s.kb = exec.AllKey(s.kb[:0], b, i)
			s.idx.add(s.kb, 1)
		}
	}
}

// compact takes the retracted rows out of added, and merges runs of small batches.
func (s *viewStore) compact() {
	if s.retracted == 0 && len(s.added) <= 1 {
		return
	}
	s.settle()
	var out, small []*exec.Batch
	smallRows := 0
	flush := func() {
		if len(small) > 0 {
			out = append(out, exec.Concat(small, s.types))
			small, smallRows = nil, 0
		}
	}
	for _, b := range s.added {
		if s.retracted > 0 {
			keep := make([]int32, 0, b.N)
			for i := 0; i < b.N; i++ {
				s.kb = exec.AllKey(s.kb[:0], b, i)
				if s.minus.count(s.kb) > 0 {
					s.minus.add(s.kb, -1)
					s.retracted--
					s.rows--
					if s.idx != nil {
						s.idx.add(s.kb, -1)
					}
					continue
				}
				keep = append(keep, int32(i))
			}
			if len(keep) < b.N {
				b = exec.Take(b, keep, s.types)
			}
		}
		switch {
		case b.N == 0:
		case b.N >= batchRows:
			flush()
			out = append(out, b)
		default:
			if smallRows+b.N > batchRows {
				flush()
			}
			small = append(small, b)
			smallRows += b.N
		}
	}
	flush()
	s.added, s.bytes = out, 0
	for _, b := range out {
		s.bytes += b.MemSize()
	}
}

// startSpill moves the rows into p and keeps them there from now on: under each row's key
// encoding (which is the row), its count.
func (s *viewStore) startSpill(p *state.Spill) {
	s.settle()
	counts := newRowBag()
	for _, b := range s.added {
		for i := 0; i < b.N; i++ {
			s.kb = exec.AllKey(s.kb[:0], b, i)
			counts.add(s.kb, 1)
		}
	}
	s.minus.eachKey(func(kb []byte, c int64) { counts.add(kb, -c) })
	s.n = s.rows - s.retracted
	counts.eachKey(func(kb []byte, c int64) { p.Put(kb, binary.AppendVarint(nil, c)) })
	s.spill, s.dropSegs = p, true
	s.added, s.rows, s.bytes, s.minus, s.retracted, s.idx = nil, 0, 0, newRowBag(), 0, nil
	s.newAdds, s.newSubs, s.nSubs = nil, nil, 0
}

// applySpilled adds a batch's weighted rows to the spilled rows. In a view with a unique key
// (plan.UniqueKey) a row's count is 0 or 1, so an insertion or a retraction is written
// without reading the stored count.
func (s *viewStore) applySpilled(b *exec.Batch) error {
	for i := 0; i < b.N; i++ {
		s.kb = exec.AllKey(s.kb[:0], b, i)
		w := b.Weight(i)
		s.n += w
		if s.view.keyed && (w == 1 || w == -1) {
			if w == 1 {
				s.spill.Put(s.kb, one)
			} else {
				s.spill.Delete(s.kb)
			}
			continue
		}
		v, ok, err := s.spill.Get(s.kb)
		if err != nil {
			return err
		}
		var count int64
		if ok {
			var k int
			if count, k = binary.Varint(v); k <= 0 {
				return fmt.Errorf("spilled row of view %s is corrupt", s.view.name)
			}
		}
		if count += w; count == 0 {
			s.spill.Delete(s.kb)
		} else {
			s.spill.Put(s.kb, binary.AppendVarint(nil, count))
		}
	}
	return nil
}

// holds reports whether the view holds row (encoded by exec.AppendValueKey, as AllKey).
func (s *viewStore) holds(kb []byte) (bool, error) {
	if s.spill != nil {
		_, ok, err := s.spill.Get(kb)
		return ok, err
	}
	if s.idx == nil {
		s.idx = newRowBag()
		for _, b := range s.added {
			for i := 0; i < b.N; i++ {
				s.kb = exec.AllKey(s.kb[:0], b, i)
				s.idx.add(s.kb, 1)
			}
		}
	}
	s.settle()
	return s.idx.count(kb) > s.minus.count(kb), nil
}

// one is a spilled row's count 1.
var one = binary.AppendVarint(nil, 1)

// each calls fn with every row and its count.
func (s *viewStore) each(fn func(row []any, n int64)) {
	if s.spill != nil {
		err := s.spill.Each(func(kb, v []byte) error {
			c, k := binary.Varint(v)
			row, err := exec.DecodeKey(kb, len(s.types))
			if k <= 0 || err != nil {
				return fmt.Errorf("a spilled row is corrupt")
			}
			fn(row, c)
			return nil
		})
		if err != nil && s.err == nil {
			s.err = fmt.Errorf("reading the rows of view %s: %w", s.view.name, err)
		}
		return
	}
	s.compact()
	for _, b := range s.added {
		for i := 0; i < b.N; i++ {
			fn(b.Row(i), 1)
		}
	}
}

// takeErr returns (and forgets) a failed read of spilled rows, which each cannot return.
func (s *viewStore) takeErr() error {
	err := s.err
	s.err = nil
	return err
}

// count is the number of rows in the view.
func (s *viewStore) count() int64 {
	if s.spill != nil {
		return s.n
	}
	return s.rows - s.retracted
}

// batches returns the view's rows.
func (s *viewStore) batches(size int) []*exec.Batch {
	if s.spill == nil {
		s.compact()
		return append([]*exec.Batch{}, s.added...)
	}
	var out []*exec.Batch
	var rows [][]any
	s.each(func(r []any, c int64) {
		for k := int64(0); k < c; k++ {
			rows = append(rows, r)
			if len(rows) == size {
				out = append(out, exec.RowsToBatch(rows, s.types))
				rows = nil
			}
		}
	})
	if len(rows) > 0 {
		out = append(out, exec.RowsToBatch(rows, s.types))
	}
	return out
}
