package streamsql_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"runtime/debug"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql"
)

// TestConcurrentBackpressureSpillAndDDL runs, for a few seconds, everything that takes the
// engine's lock, the flow lock and the queue's lock, under a memory limit small enough that
// the queue of committed changes fills (a write waits for room holding the engine's lock, or
// delivers a change larger than the queue itself), views spill, and spilled state asks for
// early checkpoints (taken by the worker, or by the next write when the worker cannot get
// the engine's lock): Arrow appends (some with deadlines that pass while they wait), INSERTs,
// upserts, UPDATEs and DELETEs; SELECTs on views and FLUSHes; SUBSCRIBE readers that check
// the order changes come in, a slow one, ones whose contexts end or that close early;
// CHECKPOINTs and periodic checkpoints; CREATE and DROP MATERIALIZED VIEW; a bounded datagen
// table. It checks that a read sees every write that returned before it, that changes reach
// the views in commit order (a writer's rows are numbered: its MAX(seq) is COUNT(*) - 1 in
// every state a view goes through; an UPDATEd counter's changelog steps by one), and that
// after the last FLUSH every view equals its query run as a batch SELECT. A watchdog dumps
// every goroutine and ends the test binary when a participant makes no progress for 20 s (a
// deadlock or a lost wake-up: the worker blocking on the engine's lock while a write waits
// for room, or a delivery that does not signal room, hangs it within a second). Run it
// under -race too.
func TestConcurrentBackpressureSpillAndDDL(t *testing.T) {
	// The engine would set the Go runtime's soft limit to 7/8 of its own: the garbage
	// collector would run all the time (a program that set a limit keeps its own).
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(1 << 30))
	const (
		memLimit = 2 << 20 // queue bound 2048 rows: writes wait from 1024 rows queued
		run      = 3 * time.Second
		genRows  = 20_000
		stall    = 20 * time.Second
	)
	db := openT(t, t.TempDir(), streamsql.WithMemoryLimit(memLimit), streamsql.WithCheckpointInterval(100*time.Millisecond))
	views := map[string]string{
		"ev_agg":  "SELECT k, COUNT(*) AS n, SUM(v) AS s FROM ev GROUP BY k",
		"ev_w":    "SELECT w, COUNT(*) AS n, MAX(seq) AS mx FROM ev GROUP BY w",
		"up_agg":  "SELECT k, COUNT(*) AS n, SUM(v) AS s, MIN(v) AS lo FROM up GROUP BY k",
		"up_rows": "SELECT id, k, v FROM up WHERE v % 3 <> 1",
		"jn":      "SELECT up.k, COUNT(*) AS n, SUM(ev.v) AS s FROM ev JOIN up ON ev.k = up.id GROUP BY up.k",
		"seq_v":   "SELECT w, n FROM seqt",
		"gen_agg": "SELECT k, COUNT(*) AS n, SUM(id) AS s FROM gen GROUP BY k",
	}
	mustExec(t, db, "CREATE TABLE ev (w BIGINT, seq BIGINT, k BIGINT, v BIGINT)")
	mustExec(t, db, "CREATE TABLE up (id BIGINT PRIMARY KEY, k BIGINT, v BIGINT)")
	mustExec(t, db, "CREATE TABLE seqt (w BIGINT PRIMARY KEY, n BIGINT)")
	mustExec(t, db, "INSERT INTO seqt VALUES (0, 0), (1, 0)")
	for name, q := range views {
		if !strings.Contains(q, "gen") {
			mustExec(t, db, "CREATE MATERIALIZED VIEW "+name+" AS "+q)
		}
	}

	// Progress: each participant stamps its slot after every operation; the watchdog fails
	// the test when a slot that is still running has not moved for stall.
	type slot struct {
		name string
		last atomic.Int64 // unix nanoseconds; 0: finished
	}
	var (
		slotsMu sync.Mutex
		slots   []*slot
	)
	register := func(name string) *slot {
		s := &slot{name: name}
		s.last.Store(time.Now().UnixNano())
		slotsMu.Lock()
		slots = append(slots, s)
		slotsMu.Unlock()
		return s
	}
	tick := func(s *slot) { s.last.Store(time.Now().UnixNano()) }
	watchDone := make(chan struct{})
	defer close(watchDone)
	go func() {
		for {
			select {
			case <-watchDone:
				return
			case <-time.After(time.Second):
			}
			now := time.Now().UnixNano()
			slotsMu.Lock()
			var stuck []string
			for _, s := range slots {
				if l := s.last.Load(); l != 0 && time.Duration(now-l) > stall {
					stuck = append(stuck, s.name)
				}
			}
			slotsMu.Unlock()
			if len(stuck) > 0 {
				// The stuck goroutines cannot be unblocked: dump them and end the test binary.
				fmt.Fprintf(os.Stderr, "no progress for %s in %v; goroutines:\n", stall, stuck)
				pprof.Lookup("goroutine").WriteTo(os.Stderr, 2)
				panic(fmt.Sprintf("TestConcurrentBackpressureSpillAndDDL: no progress for %s in %v (deadlock or lost wake-up)", stall, stuck))
			}
		}
	}()

	stop := make(chan struct{})
	stopped := func() bool {
		select {
		case <-stop:
			return true
		default:
			return false
		}
	}
	subCtx, cancelSubs := context.WithCancel(context.Background())
	defer cancelSubs()
	var wg sync.WaitGroup
	goRun := func(name string, f func(s *slot)) {
		s := register(name)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer s.last.Store(0)
			f(s)
		}()
	}
	// (t.Fatal is for the test's goroutine: the participants report with fail and stop.)
	fail := t.Errorf
	exec := func(q string, args ...any) bool {
		if _, err := db.Exec(q, args...); err != nil {
			fail("%s: %v", q, err)
			return false
		}
		return true
	}

	// The bounded generator starts with the load; FLUSH waits for it to end.
	mustExec(t, db, fmt.Sprintf(`CREATE TABLE gen (id BIGINT, k BIGINT) WITH (connector = 'datagen',
		'rows.per.second' = '20000', 'number-of-rows' = '%d', 'seed' = '7',
		'fields.id.kind' = 'sequence', 'fields.id.start' = '1',
		'fields.k.kind' = 'random', 'fields.k.min' = '0', 'fields.k.max' = '499')`, genRows))
	mustExec(t, db, "CREATE MATERIALIZED VIEW gen_agg AS "+views["gen_agg"])

	// Rows of ev accepted per writer (w 0, 1: Append; 2: INSERT), and UPDATEs of seqt done
	// per counter: a read started after they were counted must see them.
	var accepted [3]atomic.Int64
	var bumped [2]atomic.Int64
	mem := memory.NewGoAllocator()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "w", Type: arrow.PrimitiveTypes.Int64}, {Name: "seq", Type: arrow.PrimitiveTypes.Int64},
		{Name: "k", Type: arrow.PrimitiveTypes.Int64}, {Name: "v", Type: arrow.PrimitiveTypes.Int64},
	}, nil)
	// Writer 1's appends have short deadlines: one that passes while it waits for room (or
	// for the engine's lock) applies nothing, and the same rows go again.
	var timedOut atomic.Int64
	for w := range 2 {
		goRun(fmt.Sprintf("append %d", w), func(s *slot) {
			rng := rand.New(rand.NewSource(int64(w)))
			for seq := int64(0); !stopped(); tick(s) {
				n := 1 + rng.Intn(2000)
				if rng.Intn(20) == 0 {
					n = 5000 // more than the queue holds: the write delivers it itself
				}
				b := array.NewRecordBuilder(mem, schema)
				for i := range int64(n) {
					b.Field(0).(*array.Int64Builder).Append(int64(w))
					b.Field(1).(*array.Int64Builder).Append(seq + i)
					b.Field(2).(*array.Int64Builder).Append(rng.Int63n(500))
					b.Field(3).(*array.Int64Builder).Append(rng.Int63n(100))
				}
				rec := b.NewRecordBatch()
				b.Release()
				ctx, cancel := context.Background(), context.CancelFunc(func() {})
				if w == 1 {
					ctx, cancel = context.WithTimeout(ctx, time.Duration(1+rng.Intn(250))*time.Millisecond)
				}
				err := db.Append(ctx, "ev", rec)
				cancel()
				rec.Release()
				if w == 1 && errors.Is(err, context.DeadlineExceeded) {
					timedOut.Add(1)
					continue
				}
				if err != nil {
					fail("append: %v", err)
					return
				}
				seq += int64(n)
				accepted[w].Add(int64(n))
			}
		})
	}
	goRun("insert", func(s *slot) {
		rng := rand.New(rand.NewSource(2))
		for seq := 0; !stopped(); tick(s) {
			var sb strings.Builder
			sb.WriteString("INSERT INTO ev VALUES ")
			n := 1 + rng.Intn(50)
			for i := range n {
				if i > 0 {
					sb.WriteString(", ")
				}
				fmt.Fprintf(&sb, "(2, %d, %d, %d)", seq, rng.Intn(500), rng.Intn(100))
				seq++
			}
			if !exec(sb.String()) {
				return
			}
			accepted[2].Add(int64(n))
		}
	})
	goRun("upsert", func(s *slot) {
		rng := rand.New(rand.NewSource(3))
		for i := 0; !stopped(); i++ {
			var q string
			switch i % 4 {
			case 0, 1:
				var sb strings.Builder
				sb.WriteString("INSERT INTO up VALUES ")
				for j := range 1 + rng.Intn(200) {
					if j > 0 {
						sb.WriteString(", ")
					}
					fmt.Fprintf(&sb, "(%d, %d, %d)", rng.Intn(2000), rng.Intn(50), rng.Intn(1000))
				}
				q = sb.String()
			case 2:
				q = fmt.Sprintf("UPDATE up SET v = v + 1, k = (k + 1) %% 50 WHERE id %% 97 = %d", rng.Intn(97))
			case 3:
				q = fmt.Sprintf("DELETE FROM up WHERE id %% 89 = %d", rng.Intn(89))
			}
			if !exec(q) {
				return
			}
			tick(s)
		}
	})
	for w := range 2 {
		goRun(fmt.Sprintf("update %d", w), func(s *slot) {
			for !stopped() {
				if !exec("UPDATE seqt SET n = n + 1 WHERE w = ?", int64(w)) {
					return
				}
				bumped[w].Add(1)
				tick(s)
			}
		})
	}

	// Readers. fresh runs stmt (if any) and checks that ev_w and seq_v then show every write
	// that returned before it was called, each writer's MAX(seq) being its COUNT(*) - 1 (a
	// change that reached the view before an earlier one breaks it).
	values := func(q string) ([][]any, bool) {
		rs, err := db.Query(q)
		if err != nil {
			fail("%s: %v", q, err)
			return nil, false
		}
		defer rs.Close()
		var out [][]any
		for rs.Next() {
			out = append(out, append([]any(nil), rs.Values()...))
		}
		if err := rs.Err(); err != nil {
			fail("%s: %v", q, err)
			return nil, false
		}
		return out, true
	}
	fresh := func(stmt string) bool {
		var rows, counters [3]int64
		for w := range accepted {
			rows[w] = accepted[w].Load()
		}
		for c := range bumped {
			counters[c] = bumped[c].Load()
		}
		if stmt != "" && !exec(stmt) {
			return false
		}
		ev, ok := values("SELECT w, n, mx FROM ev_w")
		if !ok {
			return false
		}
		for _, r := range ev {
			if w, n, mx := r[0].(int64), r[1].(int64), r[2].(int64); n < rows[w] || mx != n-1 {
				fail("after %q: ev_w shows writer %d with %d rows, the last numbered %d; %d were accepted before", stmt, w, n, mx, rows[w])
				return false
			}
		}
		seq, ok := values("SELECT w, n FROM seq_v")
		if !ok {
			return false
		}
		for _, r := range seq {
			if w, n := r[0].(int64), r[1].(int64); n < counters[w] {
				fail("after %q: seq_v shows counter %d at %d; %d UPDATEs had returned before", stmt, w, n, counters[w])
				return false
			}
		}
		return true
	}
	goRun("select", func(s *slot) {
		for !stopped() && fresh("") {
			tick(s)
		}
	})
	goRun("flush", func(s *slot) {
		for !stopped() && fresh("FLUSH") {
			tick(s)
			time.Sleep(5 * time.Millisecond)
		}
	})
	var memCkpts sync.Map
	goRun("checkpoint", func(s *slot) {
		for !stopped() {
			if !exec("CHECKPOINT") {
				return
			}
			ids, ok := values("SELECT id FROM system.checkpoints WHERE reason = 'memory'")
			if !ok {
				return
			}
			for _, r := range ids {
				memCkpts.Store(r[0], true)
			}
			tick(s)
			time.Sleep(30 * time.Millisecond)
		}
	})
	var churns atomic.Int64
	goRun("ddl", func(s *slot) {
		for i := 0; !stopped(); i++ {
			q := "SELECT k, COUNT(*) AS n, SUM(v) AS s FROM up GROUP BY k"
			if i%4 == 3 {
				q = "SELECT w, COUNT(*) AS n FROM ev GROUP BY w"
			}
			if !exec("CREATE MATERIALIZED VIEW churn AS " + q) {
				return
			}
			tick(s)
			ctx, cancel := context.WithTimeout(subCtx, 10*time.Millisecond)
			if rs, err := db.Subscribe(ctx, "churn"); err == nil {
				for rs.Next() {
				}
				rs.Close()
			} else if !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
				fail("SUBSCRIBE churn: %v", err)
			}
			cancel()
			if !exec("DROP MATERIALIZED VIEW churn") {
				return
			}
			churns.Add(1)
			tick(s)
		}
	})

	// Subscribers that check the order changes come in. A view's rows are keyed by w: each
	// change must retract the row last inserted for its w, and next judges each row inserted
	// after the one before it (prev nil: the first seen).
	inOrder := func(view string, next func(prev, row []any) error) {
		goRun("subscribe in order to "+view, func(s *slot) {
			for subCtx.Err() == nil {
				rs, err := db.Subscribe(subCtx, view)
				if err != nil {
					if subCtx.Err() == nil {
						fail("SUBSCRIBE %s: %v", view, err)
					}
					return
				}
				last, present := map[int64][]any{}, map[int64]bool{}
				for rs.Next() {
					v := append([]any(nil), rs.Values()...)
					op, w, row := v[0].(string), v[1].(int64), v[1:]
					var err error
					switch {
					case (op == "+I" || op == "+U") && present[w]:
						err = fmt.Errorf("%s %v while %v is held", op, row, last[w])
					case op == "+I" || op == "+U":
						err = next(last[w], row)
						last[w], present[w] = row, true
					case !present[w] || fmt.Sprint(row) != fmt.Sprint(last[w]):
						err = fmt.Errorf("%s %v, but %v is held (%v)", op, row, last[w], present[w])
					default:
						present[w] = false
					}
					if err != nil {
						fail("SUBSCRIBE %s: %v", view, err)
						rs.Close()
						return
					}
					tick(s)
				}
				err = rs.Err()
				rs.Close()
				if subCtx.Err() == nil && (err == nil || !strings.Contains(err.Error(), "dropped")) {
					fail("SUBSCRIBE %s ended: %v", view, err)
					return
				}
			}
		})
	}
	// seqt's counters go up by one per UPDATE.
	inOrder("seq_v", func(prev, row []any) error {
		if prev != nil && row[1].(int64) != prev[1].(int64)+1 {
			return fmt.Errorf("counter %d went from %d to %d", row[0], prev[1], row[1])
		}
		return nil
	})
	// A writer's seq numbers its rows from 0, so in commit order its MAX(seq) is its
	// COUNT(*) - 1 after every change; a change delivered before an earlier one breaks it.
	inOrder("ev_w", func(prev, row []any) error {
		n, mx := row[1].(int64), row[2].(int64)
		if mx != n-1 || prev != nil && n <= prev[1].(int64) {
			return fmt.Errorf("writer %d: %d rows, the last numbered %d, after %v", row[0], n, mx, prev)
		}
		return nil
	})
	var drops atomic.Int64
	goRun("subscribe slowly", func(s *slot) {
		for subCtx.Err() == nil {
			rs, err := db.Subscribe(subCtx, "ev_agg")
			if err != nil {
				if subCtx.Err() == nil {
					fail("SUBSCRIBE ev_agg: %v", err)
				}
				return
			}
			for i := 0; rs.Next(); i++ {
				if i%100 == 0 {
					time.Sleep(50 * time.Millisecond)
				}
				tick(s)
			}
			if err := rs.Err(); err != nil && strings.Contains(err.Error(), "dropped") {
				drops.Add(1)
			} else if subCtx.Err() == nil {
				fail("ev_agg subscription ended: %v", err)
			}
			rs.Close()
			tick(s)
		}
	})
	for g := range 2 {
		goRun(fmt.Sprintf("subscribe and cancel %d", g), func(s *slot) {
			rng := rand.New(rand.NewSource(int64(10 + g)))
			for subCtx.Err() == nil {
				ctx, cancel := context.WithTimeout(subCtx, time.Duration(1+rng.Intn(30))*time.Millisecond)
				view := []string{"up_agg", "jn", "up_rows"}[rng.Intn(3)]
				rs, err := db.Subscribe(ctx, view)
				if err == nil {
					for i := 0; rs.Next(); i++ {
						if i == 1000 && rng.Intn(2) == 0 {
							break // closed while changes still come
						}
					}
					rs.Close()
				} else if ctx.Err() == nil {
					fail("SUBSCRIBE %s: %v", view, err)
				}
				cancel()
				tick(s)
			}
		})
	}

	time.Sleep(run)
	close(stop)
	cancelSubs()
	wg.Wait()
	if t.Failed() {
		return
	}

	final := register("final checks")
	mustExec(t, db, "FLUSH")
	tick(final)
	for w := range 3 {
		if got := queryInt(t, db, "SELECT n FROM ev_w WHERE w = ?", int64(w)); got != accepted[w].Load() {
			t.Errorf("ev_w: writer %d has %d rows, %d were accepted", w, got, accepted[w].Load())
		}
	}
	for w := range 2 {
		if got := queryInt(t, db, "SELECT n FROM seq_v WHERE w = ?", int64(w)); got != bumped[w].Load() {
			t.Errorf("seq_v: counter %d is %d after %d UPDATEs", w, got, bumped[w].Load())
		}
	}
	if got := queryInt(t, db, "SELECT SUM(n) FROM gen_agg"); got != genRows {
		t.Errorf("gen_agg counts %d rows, the generator makes %d", got, genRows)
	}
	for name, q := range views {
		diffRows(t, name, sortedCopy(queryStrings(t, db, "SELECT * FROM "+name)), sortedCopy(queryStrings(t, db, q)))
		tick(final)
	}
	spilled := queryStrings(t, db, "SELECT name FROM system.views WHERE spilled")
	if len(spilled) == 0 {
		t.Errorf("no view spilled under a %d MiB limit", memLimit>>20)
	}
	n := 0
	memCkpts.Range(func(any, any) bool { n++; return true })
	if n == 0 {
		t.Errorf("no checkpoint was asked for by spilled state (system.checkpoints reason 'memory')")
	}
	t.Logf("rows appended %d+%d, inserted %d; counters %d, %d; views created and dropped %d; slow subscriber dropped %d times; appends timed out %d; spilled views %v; memory checkpoints seen %d",
		accepted[0].Load(), accepted[1].Load(), accepted[2].Load(), bumped[0].Load(), bumped[1].Load(), churns.Load(), drops.Load(), timedOut.Load(), spilled, n)
	final.last.Store(0)
}
