package streamsql_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql"
)

// startLongQuery fills big with 2000 rows and starts, in the background, a three-way cross
// join of it that runs for minutes unless ctx ends it or the database closes. Statements run
// one at a time, so it holds up every other statement. The channel gets the query's error.
func startLongQuery(t *testing.T, ctx context.Context, db *streamsql.DB) <-chan error {
	t.Helper()
	mustExec(t, db, "CREATE TABLE big (x BIGINT)")
	var sb strings.Builder
	sb.WriteString("INSERT INTO big VALUES ")
	for i := range 2000 {
		if i > 0 {
			sb.WriteString(",")
		}
		fmt.Fprintf(&sb, "(%d)", i)
	}
	mustExec(t, db, sb.String())
	done := make(chan error, 1)
	go func() {
		rows, err := db.QueryContext(ctx, "SELECT COUNT(*) FROM big a, big b, big c WHERE a.x + b.x + c.x = -1")
		if err == nil {
			rows.Close()
		}
		done <- err
	}()
	time.Sleep(300 * time.Millisecond) // let it take the database
	select {
	case err := <-done:
		t.Fatalf("the long query ended at once: %v", err)
	default:
	}
	return done
}

// A statement waiting for another one to finish gives up at its own deadline, having
// applied nothing.
func TestStatementWaitingGivesUpAtItsDeadline(t *testing.T) {
	db := openT(t, "")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	long := startLongQuery(t, ctx, db)

	rec := func() arrow.RecordBatch {
		b := array.NewInt64Builder(memory.NewGoAllocator())
		b.Append(-7)
		col := b.NewArray()
		schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64}}, nil)
		return array.NewRecordBatch(schema, []arrow.Array{col}, 1)
	}()
	for _, c := range []struct {
		name string
		run  func(ctx context.Context) error
	}{
		{"ExecContext INSERT", func(ctx context.Context) error {
			_, err := db.ExecContext(ctx, "INSERT INTO big VALUES (-5)")
			return err
		}},
		{"QueryContext", func(ctx context.Context) error {
			_, err := db.QueryContext(ctx, "SELECT COUNT(*) FROM big")
			return err
		}},
		{"QueryArrow", func(ctx context.Context) error {
			_, err := db.QueryArrow(ctx, "SELECT COUNT(*) FROM big")
			return err
		}},
		{"FLUSH", func(ctx context.Context) error {
			_, err := db.ExecContext(ctx, "FLUSH")
			return err
		}},
		{"Append", func(ctx context.Context) error { return db.Append(ctx, "big", rec) }},
	} {
		ctx, stop := context.WithTimeout(context.Background(), 200*time.Millisecond)
		t0 := time.Now()
		err := c.run(ctx)
		el := time.Since(t0)
		stop()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s with a 200ms deadline behind a long query: err = %v, want the deadline", c.name, err)
		}
		if el > 2*time.Second {
			t.Errorf("%s with a 200ms deadline returned after %v: it waited for the long query", c.name, el)
		}
	}
	select {
	case err := <-long:
		t.Fatalf("the long query ended while the others waited: %v", err)
	default:
	}
	cancel()
	if err := <-long; !errors.Is(err, context.Canceled) {
		t.Fatalf("the long query, cancelled: err = %v", err)
	}
	if n := queryInt(t, db, "SELECT COUNT(*) FROM big WHERE x < 0"); n != 0 {
		t.Fatalf("%d rows of the statements that gave up were applied", n)
	}
}

// Close ends a running statement, which fails as the database closed, instead of waiting
// for it; statements waiting behind it, and subscribers, fail the same way.
func TestCloseEndsRunningStatement(t *testing.T) {
	db, err := streamsql.Open("")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("CREATE TABLE s (x BIGINT); CREATE MATERIALIZED VIEW sv AS SELECT x FROM s"); err != nil {
		t.Fatal(err)
	}
	sub, err := db.Query("SUBSCRIBE sv")
	if err != nil {
		t.Fatal(err)
	}
	subscribed := make(chan error, 1)
	go func() {
		for sub.Next() {
		}
		subscribed <- sub.Err()
	}()
	long := startLongQuery(t, context.Background(), db)
	waiting := make(chan error, 1)
	go func() {
		_, err := db.Exec("INSERT INTO big VALUES (-1)")
		waiting <- err
	}()
	time.Sleep(100 * time.Millisecond)
	t0 := time.Now()
	closed := make(chan error, 1)
	go func() { closed <- db.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatalf("Close: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("Close still waiting for the running query after %v", time.Since(t0))
	}
	for name, ch := range map[string]<-chan error{"the running query": long, "the waiting INSERT": waiting, "the subscriber": subscribed} {
		if err := <-ch; err == nil || !strings.Contains(err.Error(), "database is closed") {
			t.Errorf("%s: err = %v, want the database closed", name, err)
		}
	}
}

// runningConnectors counts the goroutines reading a table's connector.
func runningConnectors() int {
	buf := make([]byte, 1<<24)
	buf = buf[:runtime.Stack(buf, true)]
	return strings.Count(string(buf), "engine.(*Engine).feedLog(")
}

// A statement that gets to run while Close is under way fails as the database closed. A
// CREATE TABLE with a connector that ran then started a connector Close never stopped: it
// read on after Close, into the closed store (the process died with 'pebble: closed').
func TestStatementDuringCloseFails(t *testing.T) {
	in := filepath.Join(t.TempDir(), "in.json")
	if err := os.WriteFile(in, []byte(`{"x":1}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	create := func(db *streamsql.DB, name string) error {
		_, err := db.Exec(fmt.Sprintf("CREATE TABLE %s (x BIGINT) WITH (connector = 'file', path = '%s', format = 'json')", name, in))
		return err
	}
	for it := range 20 {
		db, err := streamsql.Open("")
		if err != nil {
			t.Fatal(err)
		}
		if err := create(db, "f0"); err != nil { // a connector for Close to stop
			t.Fatal(err)
		}
		creating := make(chan error, 1)
		go func() {
			for i := 1; ; i++ {
				if err := create(db, fmt.Sprintf("f%d", i)); err != nil {
					creating <- err
					return
				}
			}
		}()
		time.Sleep(20 * time.Millisecond)
		if err := db.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		if err := <-creating; !strings.Contains(err.Error(), "database is closed") {
			t.Fatalf("CREATE TABLE during Close: err = %v, want the database closed", err)
		}
		if n := runningConnectors(); n > 0 {
			t.Fatalf("iteration %d: %d connectors still reading after Close", it, n)
		}
	}
}

// A statement that gives up waiting leaves nothing behind: the lock used to be taken by a
// goroutine that a statement which gave up left to hand it back, two goroutines per
// statement for as long as the long one ran.
func TestStatementGivingUpLeavesNothing(t *testing.T) {
	db := openT(t, "")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	long := startLongQuery(t, ctx, db)
	before := runtime.NumGoroutine()
	for range 1000 {
		ctx, stop := context.WithTimeout(context.Background(), time.Millisecond)
		if _, err := db.ExecContext(ctx, "INSERT INTO big VALUES (-5)"); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("INSERT with a 1ms deadline behind a long query: err = %v, want the deadline", err)
		}
		stop()
	}
	if n := runtime.NumGoroutine() - before; n > 50 {
		t.Errorf("1000 statements that gave up waiting left %d goroutines behind", n)
	}
	cancel()
	<-long
}

// A subscription whose context is cancelled ends at once while another statement runs:
// Next returns and Close returns, where they used to wait for the statement to end.
func TestSubscribeCancelledBehindLongStatement(t *testing.T) {
	db := openT(t, "")
	mustExec(t, db, "CREATE TABLE s (x BIGINT)")
	mustExec(t, db, "CREATE MATERIALIZED VIEW v AS SELECT COUNT(*) AS n FROM s")
	ctx, cancel := context.WithCancel(context.Background())
	rows, err := db.Subscribe(ctx, "v")
	if err != nil {
		t.Fatal(err)
	}
	if !rows.Next() {
		t.Fatalf("no snapshot row: %v", rows.Err())
	}
	longCtx, stopLong := context.WithCancel(context.Background())
	defer stopLong()
	long := startLongQuery(t, longCtx, db)
	cancel()
	for _, c := range []struct {
		name string
		f    func()
	}{{"Next", func() { rows.Next() }}, {"Close", func() { rows.Close() }}} {
		t0 := time.Now()
		ended := make(chan struct{})
		go func() { c.f(); close(ended) }()
		select {
		case <-ended:
		case <-time.After(5 * time.Second):
			t.Fatalf("%s of a cancelled subscription still waiting after %v, behind a long query", c.name, time.Since(t0))
		}
	}
	if err := rows.Err(); !errors.Is(err, context.Canceled) {
		t.Errorf("rows.Err() = %v, want the cancellation", err)
	}
	stopLong()
	<-long
}

// Close is idempotent even when called from several goroutines at once: they used to race
// to close the checkpoint loop's stop channel, and the process died with 'close of closed
// channel' (within a few hundred tries, at once under -race).
func TestConcurrentCloses(t *testing.T) {
	for range 500 {
		db, err := streamsql.Open("")
		if err != nil {
			t.Fatal(err)
		}
		errs := make(chan error, 3)
		for range 3 {
			go func() { errs <- db.Close() }()
		}
		for range 3 {
			if err := <-errs; err != nil {
				t.Fatalf("Close: %v", err)
			}
		}
	}
}

// A Close called while another is under way returns only once the database is closed, so
// the path can be opened again at once (it returned nil at once, the store still open).
func TestCloseDuringCloseWaitsForIt(t *testing.T) {
	path := t.TempDir() + "/db"
	for range 30 {
		db, err := streamsql.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec("CREATE TABLE IF NOT EXISTS c (x BIGINT); INSERT INTO c VALUES (1)"); err != nil {
			t.Fatal(err)
		}
		first := make(chan error, 3)
		for range 3 {
			go func() { first <- db.Close() }()
		}
		if err := <-first; err != nil {
			t.Fatalf("Close: %v", err)
		}
		again, err := streamsql.Open(path)
		if err != nil {
			t.Fatalf("Open right after a Close returned: %v", err)
		}
		for range 2 {
			if err := <-first; err != nil {
				t.Fatalf("Close: %v", err)
			}
		}
		if err := again.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
