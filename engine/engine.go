package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"os"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/test_driver"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/connector"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/plan"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// errClosed is the error of anything asked of a closed database.
var errClosed = errors.New("database is closed")

// Options configure an engine.
type Options struct {
	// Path is the database directory; "" is in memory.
	Path string
	// NoSync commits writes without a WAL sync: faster, but a crash may lose the last
	// acknowledged statements (never corrupts).
	NoSync bool
	// Clock paces rate-limited connectors; nil is the real clock.
	Clock connector.Clock
	// CheckpointInterval is how often a checkpoint is taken while there are changes
	// (0: the default, 1 s; negative: only on CHECKPOINT and Close).
	CheckpointInterval time.Duration
	// CacheSize bounds the decoded table rows each table keeps in memory (the rest are read
	// back from the store); 0 is 1/16 of MemoryLimit.
	CacheSize int64
	// MemoryLimit is the memory the engine aims to stay under; 0 is a quarter of the
	// machine's. Past an eighth of it live, views' unbounded state spills to the store
	// (spill.go); the default cache sizes derive from it.
	MemoryLimit int64
	goLimitSet  bool // Open set the Go runtime's memory limit (Close lifts it)
	// SplitSeed, when not 0, cuts every inserted batch into random smaller ones before the
	// views see it (seeded): a test aid, since results must not depend on batch boundaries.
	SplitSeed int64
}

// Column describes a result column.
type Column struct {
	Name string
	Type types.T
}

// Result is what a statement returns.
type Result struct {
	Cols         []Column
	Batches      []*exec.Batch
	RowsAffected int64
	// Sub is set for SUBSCRIBE: the stream of changes.
	Sub *Subscription
}

// Engine is one open database.
type Engine struct {
	// mu serialises statements (and the background work that changes state). A statement
	// takes it with lock, which gives up when the statement's context ends.
	mu stmtMutex
	// closing is cancelled first thing in Close: statements run under it too
	// (statementContext), so Close ends a running statement instead of waiting for it.
	closing  context.Context
	closeAll context.CancelFunc
	opts     Options
	store    *state.Store
	seq      state.Sequence
	cat      *catalog.Catalog
	tables   map[string]*tableObj
	views    map[string]*viewObj
	// logical are the views that are not materialized (logical.go).
	logical map[string]*logicalView
	bad     []badRecord
	closed  bool // set under mu and qmu: either lock reads it
	// closeOnce runs Close's work once; a Close called meanwhile waits for it, and every
	// Close returns its closeErr.
	closeOnce sync.Once
	closeErr  error
	clock     connector.Clock
	split     *rand.Rand

	// Checkpoints: the one in force (nil: none, or dropped by a write), the last id, recent
	// ones for system.checkpoints, whether anything changed since, and the loop's channels.
	ckpt     *checkpointInfo
	ckptID   int64
	ckpts    []*checkpointInfo
	dirty    bool
	ckptStop chan struct{}
	ckptDone chan struct{}
	wantCkpt atomic.Bool // spilled changes pile up: checkpoint soon (spill.go)

	// Asynchronous delivery to views (ingest.go): committed changes waiting and their rows
	// (guarded by qmu), the worker's wake-up and exit, and an error a view raised in the
	// background.
	qmu        sync.Mutex
	queue      []queued
	queuedRows int
	commitFrom uint64     // the sequence number before the last commit's segments
	flow       sync.Mutex // see ingest.go
	ingest     *sync.Cond // on qmu
	room       *sync.Cond // on qmu: signalled when a delivery takes from the queue (awaitRoom)
	ingestDone chan struct{}
	ingestErr  error
}

// Open opens or creates the database at opts.Path and restores every table and view.
func Open(opts Options) (*Engine, error) {
	if opts.MemoryLimit <= 0 {
		opts.MemoryLimit = physicalMemory() / 4
	} else if debug.SetMemoryLimit(-1) == math.MaxInt64 {
		// An explicit limit also steers the garbage collector, which otherwise lets the heap
		// grow to twice what is live — unless the program has set a limit of its own. It gets
		// 7/8 of the limit, the rest being the runtime's own overhead. Close lifts it again.
		debug.SetMemoryLimit(opts.MemoryLimit * 7 / 8)
		opts.goLimitSet = true
	}
	st, err := state.Open(opts.Path, !opts.NoSync, opts.MemoryLimit)
	if err != nil {
		return nil, err
	}
	e := &Engine{mu: make(stmtMutex, 1), opts: opts, store: st, tables: map[string]*tableObj{}, views: map[string]*viewObj{},
		logical: map[string]*logicalView{}, clock: opts.Clock}
	e.closing, e.closeAll = context.WithCancel(context.Background())
	if e.clock == nil {
		e.clock = connector.RealClock()
	}
	if opts.SplitSeed != 0 {
		e.split = rand.New(rand.NewSource(opts.SplitSeed))
	}
	e.ingest = sync.NewCond(&e.qmu)
	e.room = sync.NewCond(&e.qmu)
	if e.cat, err = catalog.Load(st, &e.seq); err != nil {
		st.Close()
		return nil, err
	}
	for _, ent := range e.cat.Entries() {
		if err := e.restore(ent); err != nil {
			st.Close()
			return nil, fmt.Errorf("restoring %s %s: %w", ent.Kind, ent.Name, err)
		}
	}
	if err := e.recover(); err != nil {
		st.Close()
		return nil, err
	}
	e.ingestDone = make(chan struct{})
	go e.ingestLoop()
	interval := opts.CheckpointInterval
	if interval == 0 {
		interval = time.Second
	}
	if interval > 0 {
		e.ckptStop, e.ckptDone = make(chan struct{}), make(chan struct{})
		go e.checkpointLoop(interval)
	}
	// Connectors resume only once every view is wired, so none misses a row.
	for _, t := range e.tables {
		if _, ok := t.options["connector"]; ok {
			src, err := e.openSource(t)
			if err != nil {
				// The database opens all the same (SPEC.md §6): the table keeps its rows and
				// takes INSERTs, DROP TABLE works, and the source is reported failed.
				t.feeder = e.failedFeeder(t, fmt.Errorf("restoring the connector: %w", err))
				continue
			}
			e.startFeeder(t, src)
		}
	}
	return e, nil
}

func (e *Engine) restore(ent *catalog.Entry) error {
	stmts, err := sql.Parse(ent.SQL)
	if err != nil {
		return err
	}
	if len(stmts) != 1 {
		return fmt.Errorf("catalog entry holds %d statements", len(stmts))
	}
	switch ent.Kind {
	case catalog.KindTable:
		t, err := e.defineTable(stmts[0], ent)
		if err != nil {
			return err
		}
		if err := e.loadBad(t); err != nil {
			return err
		}
		return t.data.Load()
	case catalog.KindView:
		_, err := e.defineView(context.Background(), stmts[0], ent, false)
		return err
	case catalog.KindLogicalView:
		_, err := e.defineLogicalView(context.Background(), stmts[0], ent)
		return err
	case catalog.KindSink:
		_, err := e.defineSink(stmts[0], ent)
		return err
	}
	return fmt.Errorf("unknown catalog kind %q", ent.Kind)
}

// cacheSize is the per-table cache budget.
func (e *Engine) cacheSize() int64 {
	if e.opts.CacheSize > 0 {
		return e.opts.CacheSize
	}
	return e.opts.MemoryLimit / 16
}

// physicalMemory reads the machine's memory (1 GiB when it cannot be read).
func physicalMemory() int64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			f := strings.Fields(line)
			if len(f) >= 2 && f[0] == "MemTotal:" {
				if kb, err := strconv.ParseInt(f[1], 10, 64); err == nil {
					return kb << 10
				}
			}
		}
	}
	return 1 << 30
}

// Close closes the database. It is idempotent. A statement running or waiting to run ends
// with errClosed, having applied nothing (a statement is atomic).
func (e *Engine) Close() error {
	e.closeOnce.Do(func() { e.closeErr = e.close() })
	return e.closeErr
}

// close is Close's work, done once.
func (e *Engine) close() error {
	e.closeAll()
	e.mu.Lock()
	var feeders []*feeder
	for _, t := range e.tables {
		if t.feeder != nil {
			feeders = append(feeders, t.feeder)
		}
	}
	if e.ckptStop != nil {
		close(e.ckptStop)
	}
	e.mu.Unlock()
	for _, f := range feeders {
		f.stop()
	}
	if e.ckptStop != nil {
		<-e.ckptDone
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	if e.dirty {
		// A clean close leaves a checkpoint, so the next Open replays nothing.
		_ = e.checkpoint("close")
	}
	e.qmu.Lock()
	e.closed = true
	e.ingest.Broadcast()
	e.room.Broadcast()
	e.qmu.Unlock()
	e.mu.Unlock()
	<-e.ingestDone
	e.mu.Lock()
	if e.opts.goLimitSet {
		debug.SetMemoryLimit(math.MaxInt64)
	}
	// The sinks close side by side: each may wait for brokers that are gone.
	var sinks sync.WaitGroup
	for _, v := range e.views {
		e.flow.Lock()
		v.closeSubscribers(errClosed)
		e.flow.Unlock()
		for len(v.sinks) > 0 {
			k := v.sinks[0]
			k.unwire()
			sinks.Go(k.k.Close)
		}
	}
	sinks.Wait()
	return e.store.Close()
}

// Exec runs every statement of text and returns the last one's result.
func (e *Engine) Exec(ctx context.Context, text string, args []any) (*Result, error) {
	return e.exec(ctx, text, args, true)
}

// ExecNoRows is Exec for a caller that takes no rows: a SUBSCRIBE is refused — alone, once
// it has checked its view and options; among other statements, before any of them runs.
func (e *Engine) ExecNoRows(ctx context.Context, text string, args []any) (*Result, error) {
	res, err := e.exec(ctx, text, args, false)
	if err == nil && res.Sub != nil {
		res.Sub.Close()
		return nil, errSubscribeRows
	}
	return res, err
}

var errSubscribeRows = errors.New("SUBSCRIBE returns rows: use Query or Subscribe")

func (e *Engine) exec(ctx context.Context, text string, args []any, rows bool) (*Result, error) {
	stmts, err := sql.Parse(text)
	if err != nil {
		return nil, err
	}
	if len(stmts) == 0 {
		return &Result{}, nil
	}
	nparams := 0
	for i, s := range stmts {
		if s.Kind == sql.KindSubscribe && !rows && len(stmts) > 1 {
			return nil, s.ErrorAtPos(s.Pos, "%v", errSubscribeRows)
		}
		if s.Kind == sql.KindSubscribe && i < len(stmts)-1 {
			return nil, s.ErrorAtPos(s.Pos, "SUBSCRIBE must be the last statement: its rows are the result")
		}
		n := numberParams(s) + s.Params
		if n > 0 && s.Kind == sql.KindCreateView {
			return nil, s.ErrorAtPos(s.Pos, "placeholders (?) are not allowed in %s: its query is kept as text; write the values in", createViewWords(s))
		}
		if w := s.Watermark; w != nil && numberParams(w.Stmt) > 0 {
			return nil, w.Stmt.ErrorAtPos(w.Stmt.Pos, "placeholders (?) are not allowed in a WATERMARK expression: the table's definition is kept as text; write the values in")
		}
		nparams += n
	}
	if nparams != len(args) {
		return nil, fmt.Errorf("statement has %d placeholder(s) but %d argument(s) were given", nparams, len(args))
	}
	var res *Result
	for _, s := range stmts {
		n := numberParams(s) + s.Params
		if res, err = e.execOne(ctx, s, args[:n]); err != nil {
			return nil, err
		}
		args = args[n:]
	}
	return res, nil
}

// statementContext is ctx for one statement, ended too by Close. done, called with the
// statement's error when it returns, releases it and reports an end that Close caused as
// errClosed rather than as a cancelled context.
func (e *Engine) statementContext(ctx context.Context) (context.Context, func(error) error) {
	ctx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(e.closing, func() { cancel(errClosed) })
	return ctx, func(err error) error {
		stop()
		if err != nil && errors.Is(err, context.Canceled) && errors.Is(context.Cause(ctx), errClosed) {
			err = errClosed
		}
		cancel(nil)
		return err
	}
}

// closingDown reports, mu held, whether Close has begun. A statement that gets mu then
// fails with errClosed: Close may already have gathered the feeders it stops, and a
// connector a CREATE TABLE started now would outlive the database, reading into its closed
// store.
func (e *Engine) closingDown() bool {
	return e.closed || e.closing.Err() != nil
}

// lock takes mu for a statement, or returns ctx's error if ctx ends first: a statement
// waiting behind a long one gives up at its own deadline, and leaves nothing behind.
func (e *Engine) lock(ctx context.Context) error {
	if e.mu.TryLock() {
		return nil
	}
	select {
	case e.mu <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// stmtMutex is the engine's lock: a channel of one slot, full while the lock is held, so
// that a waiter can give up (lock) and leave the queue. A sync.Mutex cannot be waited for
// under a context: a statement that gave up left a goroutine to take the lock and hand it
// back, two goroutines per statement for as long as the lock stayed taken (and, while
// Close waited for it, one pair per statement any client sent, each taking the lock in
// turn). Waiters are served in turn.
type stmtMutex chan struct{}

func (m stmtMutex) Lock() { m <- struct{}{} }

func (m stmtMutex) TryLock() bool {
	select {
	case m <- struct{}{}:
		return true
	default:
		return false
	}
}

func (m stmtMutex) Unlock() {
	select {
	case <-m:
	default:
		panic("engine: unlock of an unlocked mutex")
	}
}

// NumInput counts the placeholders of text; an error reports a syntax error.
func NumInput(text string) (int, error) {
	stmts, err := sql.Parse(text)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, s := range stmts {
		n += numberParams(s) + s.Params
	}
	return n, nil
}

func (e *Engine) execOne(ctx context.Context, s *sql.Stmt, args []any) (res *Result, err error) {
	ctx, done := e.statementContext(ctx)
	defer func() { err = done(err) }()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := checkSchemas(s); err != nil {
		return nil, err
	}
	if s.Kind == sql.KindFlush {
		if err := e.awaitSources(ctx, s); err != nil {
			return nil, err
		}
	}
	if err := e.lock(ctx); err != nil {
		return nil, err
	}
	defer e.mu.Unlock()
	defer func() {
		// A bug must not take the process down: report it as an internal error.
		if r := recover(); r != nil {
			res, err = nil, fmt.Errorf("internal error (please report it) in %s: %v", firstWords(s.Text), r)
		}
	}()
	if e.closingDown() {
		return nil, errClosed
	}
	if e.writes(s) {
		if err := e.awaitRoom(ctx); err != nil {
			return nil, err
		}
	} else {
		// Everything but a write sees the views current: deliver what is queued.
		if err := e.drained(s.Kind == sql.KindFlush); err != nil {
			return nil, err
		}
	}
	switch s.Kind {
	case sql.KindCreateTable:
		return e.createTable(s)
	case sql.KindCreateView:
		return e.createView(ctx, s)
	case sql.KindInsertValues:
		return e.insertLiterals(s, args)
	case sql.KindDropView:
		return e.dropViews(s.Names, s.IfExists, true, s)
	case sql.KindFlush:
		return &Result{}, e.flushSinks(ctx)
	case sql.KindCheckpoint:
		return &Result{}, e.checkpoint("manual")
	case sql.KindSubscribe:
		return e.subscribe(s)
	case sql.KindShowViews:
		names := e.cat.Names(catalog.KindView)
		if !s.Materialized {
			names = sortStrings(append(names, e.cat.Names(catalog.KindLogicalView)...))
		}
		return namesResult(names), nil
	case sql.KindBackup:
		return e.backup(s)
	case sql.KindSet:
		return nil, s.ErrorAtPos(s.Pos, "SET %s: unknown setting", s.Options[0].Key)
	case sql.KindCreateSink:
		return e.createSink(s)
	case sql.KindDropSink:
		return e.dropSink(s)
	case sql.KindShowSinks:
		return namesResult(e.cat.Names(catalog.KindSink)), nil
	case sql.KindShowCreate:
		return e.showCreate(s)
	}
	switch n := s.Node.(type) {
	case *ast.SelectStmt, *ast.SetOprStmt:
		return e.query(ctx, s, n.(ast.ResultSetNode), args)
	case *ast.InsertStmt:
		return e.insertStmt(ctx, s, n, args)
	case *ast.UpdateStmt:
		return e.updateStmt(ctx, s, n, args)
	case *ast.DeleteStmt:
		return e.deleteStmt(ctx, s, n, args)
	case *ast.DropTableStmt:
		return e.dropTables(s, n)
	case *ast.ShowStmt:
		return e.show(s, n)
	case *ast.ExplainStmt:
		if sh, ok := n.Stmt.(*ast.ShowStmt); ok {
			return e.show(s, sh)
		}
		return e.explain(s, n, args)
	case *ast.CreateViewStmt:
		// What the front pass leaves to TiDB: CREATE OR REPLACE VIEW, MySQL's ALGORITHM= ...
		return nil, s.ErrorAtPos(s.Pos, "this form of CREATE VIEW is not supported: use CREATE VIEW [IF NOT EXISTS] v AS query (DROP VIEW v first to replace it)")
	}
	return nil, s.ErrorAtPos(s.Pos, "statement not supported: %s", firstWords(s.Text))
}

// writes reports whether a statement only writes table rows (INSERT, UPDATE, DELETE) and
// reads no view or system table: those leave their changes queued for the views and run
// while the views consume earlier ones (see ingest.go).
func (e *Engine) writes(s *sql.Stmt) bool {
	switch n := s.Node.(type) {
	case *ast.InsertStmt, *ast.UpdateStmt, *ast.DeleteStmt:
		v := &relationVisitor{e: e, windows: s.Windows}
		n.Accept(v)
		return !v.readsView
	}
	return s.Kind == sql.KindInsertValues
}

// checkSchemas refuses a name qualified by a schema other than system, the only one there
// is, so that a mistyped qualifier never lets a statement act on the table of that name.
func checkSchemas(s *sql.Stmt) error {
	if s.Node == nil {
		return nil
	}
	v := &schemaVisitor{}
	s.Node.Accept(v)
	if v.bad != nil {
		return s.ErrorAt(v.bad.Schema.O, "unknown schema %s", v.bad.Schema.O)
	}
	return nil
}

// schemaVisitor finds the first table name qualified by an unknown schema.
type schemaVisitor struct{ bad *ast.TableName }

func (v *schemaVisitor) Enter(n ast.Node) (ast.Node, bool) {
	if tn, ok := n.(*ast.TableName); ok && v.bad == nil && tn.Schema.L != "" && tn.Schema.L != "system" {
		v.bad = tn
	}
	return n, v.bad != nil
}

func (v *schemaVisitor) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// relationVisitor finds whether a statement names a view or a system table, directly or as
// a window TVF's input (windows: the statement's TVF carriers).
type relationVisitor struct {
	e         *Engine
	windows   map[string]*sql.WindowTVF
	readsView bool
}

func (v *relationVisitor) Enter(n ast.Node) (ast.Node, bool) {
	if tn, ok := n.(*ast.TableName); ok {
		name := strings.ToLower(tn.Name.O)
		if w, isTVF := v.windows[tn.Name.O]; isTVF {
			name = strings.ToLower(w.Table)
		} else if tn.Schema.O != "" {
			name = strings.ToLower(tn.Schema.O) + "." + name
		}
		_, logical := v.e.logical[name]
		if _, ok := v.e.views[name]; ok || logical || strings.HasPrefix(name, "system.") {
			v.readsView = true
		}
	}
	return n, false
}

func (v *relationVisitor) Leave(n ast.Node) (ast.Node, bool) { return n, true }

func firstWords(s string) string {
	f := strings.Fields(s)
	if len(f) > 2 {
		f = f[:2]
	}
	return strings.ToUpper(strings.Join(f, " "))
}

// numberParams gives the ? placeholders of a statement their order (TiDB leaves it 0).
func numberParams(s *sql.Stmt) int {
	if s.Node == nil {
		return 0
	}
	v := &paramVisitor{}
	s.Node.Accept(v)
	sort.Slice(v.params, func(i, j int) bool { return s.UserOffset(v.params[i].Offset) < s.UserOffset(v.params[j].Offset) })
	for i, p := range v.params {
		p.Order = i
	}
	return len(v.params)
}

type paramVisitor struct {
	params []*test_driver.ParamMarkerExpr
}

func (v *paramVisitor) Enter(n ast.Node) (ast.Node, bool) {
	if p, ok := n.(*test_driver.ParamMarkerExpr); ok {
		v.params = append(v.params, p)
	}
	return n, false
}

func (v *paramVisitor) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// binder returns a binder for s over the engine's relations.
func (e *Engine) binder(ctx context.Context, s *sql.Stmt, args []any) *plan.Binder {
	return &plan.Binder{Cat: e, Stmt: s, Args: args, Run: func(n plan.Node) ([][]any, error) { return e.runPlan(ctx, n) }}
}

// Relation implements plan.Catalog.
func (e *Engine) Relation(name string) (*plan.Relation, bool) {
	l := strings.ToLower(name)
	if t, ok := e.tables[l]; ok {
		return t.rel, true
	}
	if v, ok := e.views[l]; ok {
		return v.rel, true
	}
	if v, ok := e.logical[l]; ok {
		return v.rel, true
	}
	if r, ok := e.systemRelation(l); ok {
		return r, true
	}
	return nil, false
}

// RelationNames implements plan.Catalog.
func (e *Engine) RelationNames() []string {
	var out []string
	for _, t := range e.tables {
		out = append(out, t.name)
	}
	for _, v := range e.views {
		out = append(out, v.name)
	}
	for _, v := range e.logical {
		out = append(out, v.name)
	}
	return out
}

func namesResult(names []string) *Result {
	rows := make([][]any, len(names))
	for i, n := range names {
		rows[i] = []any{n}
	}
	return rowsResult([]Column{{Name: "name", Type: types.TVarchar}}, rows)
}

func rowsResult(cols []Column, rows [][]any) *Result {
	ts := make([]types.T, len(cols))
	for i, c := range cols {
		ts[i] = c.Type
	}
	r := &Result{Cols: cols}
	if len(rows) > 0 {
		r.Batches = []*exec.Batch{exec.RowsToBatch(rows, ts)}
	}
	return r
}

func (e *Engine) backup(s *sql.Stmt) (*Result, error) {
	dir := s.Path
	if dir == "" {
		return nil, s.ErrorAtPos(s.Pos, "BACKUP TO needs a directory")
	}
	if _, err := os.Stat(dir); err == nil {
		return nil, s.ErrorAtPos(s.Pos, "backup to %s: it exists; back up into a new directory", dir)
	}
	if err := e.store.Checkpoint(dir); err != nil {
		return nil, s.ErrorAtPos(s.Pos, "backup to %s: %v", dir, err)
	}
	return &Result{}, nil
}
