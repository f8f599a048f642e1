package streamsql_test

// Crash tests: the test binary re-executes itself as a child process (TestCrashChild) that
// writes to a database and is killed with SIGKILL at a random instant; the parent then checks
// that every acknowledged statement survived, that no statement was applied in part, and that
// every view equals a clean run over the same rows (SPEC.md §4).
//
// Reproduce a run with STREAMSQL_CRASH_SEED=<seed printed by the test>.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql"
)

const (
	envCrashDir  = "STREAMSQL_CRASH_CHILD_DIR"  // the child's database directory
	envCrashSeed = "STREAMSQL_CRASH_CHILD_SEED" // the child's seed (statement sizes)
	envCrashAck  = "STREAMSQL_CRASH_CHILD_ACK"  // the ack file the child appends to
	envCrashMode = "STREAMSQL_CRASH_CHILD_MODE" // "" (write), "nosync" (sync off), "spill" (4 MiB memory limit), "lockprobe", "kafka" or "script"
	envCrashSQL  = "STREAMSQL_CRASH_CHILD_SQL"  // mode script: statements to run before exiting without Close
	envSeed      = "STREAMSQL_CRASH_SEED"       // parent: fixed seed to reproduce a run
)

// crashLargeMin is the fewest rows of the child's large Appends: enough for a segment of
// 64 KiB (state.logMin), which goes to the segment log.
const crashLargeMin = 30000

// crashBase is the event time of row 0.
var crashBase = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()

// crashRow is row i of the deterministic stream: k = i % 7, v = i, event times 200 ms apart
// with up to 4.8 s of disorder (so some rows near window ends fall behind the 2 s
// watermark delay and are late), and every 23rd row 25 s
// late (behind the watermark: late for the windowed views).
func crashRow(i int64) (k, v, tsMs int64) {
	ts := crashBase + i*200 - (i*7919%49)*100
	if i%5 == 0 {
		ts-- // event times ending in 99 ms put the watermark exactly on window_time sometimes
	}
	if i%23 == 22 {
		ts -= 25_000
	}
	return i % 7, i, ts
}

var crashSetup = []string{
	`CREATE TABLE IF NOT EXISTS ev (i BIGINT, k BIGINT, v BIGINT, ts TIMESTAMP(3), st BIGINT, sn BIGINT,
		WATERMARK FOR ts AS ts - INTERVAL '2' SECOND)`,
	`CREATE TABLE IF NOT EXISTS dim (k BIGINT, name VARCHAR)`,
	// dim rows are inserted here (see crashPrepare) when the table is empty.
	`CREATE MATERIALIZED VIEW IF NOT EXISTS tw AS
		SELECT window_start, window_end, k, COUNT(*) AS n, SUM(v) AS s
		FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '10' SECOND))
		GROUP BY window_start, window_end, k`,
	`CREATE MATERIALIZED VIEW IF NOT EXISTS twc AS
		SELECT window_start, window_end, k, COUNT(*) AS n, SUM(v) AS s
		FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '10' SECOND))
		GROUP BY window_start, window_end, k
		EMIT ON WINDOW CLOSE`,
	`CREATE MATERIALIZED VIEW IF NOT EXISTS agg AS SELECT k, COUNT(*) AS n, SUM(v) AS s FROM ev GROUP BY k`,
	`CREATE MATERIALIZED VIEW IF NOT EXISTS j AS SELECT e.i, e.k, d.name FROM ev AS e JOIN dim AS d ON e.k = d.k`,
	// Each of 97 keys gets a row every 19.4 s of event time: idle past the 10 s TTL, forgotten.
	`CREATE MATERIALIZED VIEW IF NOT EXISTS ttl WITH ('state.ttl' = '10 seconds') AS
		SELECT i % 97 AS g, COUNT(*) AS n, MAX(v) AS mx FROM ev GROUP BY i % 97`,
}

// dim has no row for k = 6 (inner join drops it) and two for k = 0.
const crashDimInsert = `INSERT INTO dim VALUES (0, 'zero'), (0, 'nil'), (1, 'one'), (2, 'two'), (3, 'three'), (4, 'four'), (5, 'five')`

var crashDim = map[int64][]string{0: {"zero", "nil"}, 1: {"one"}, 2: {"two"}, 3: {"three"}, 4: {"four"}, 5: {"five"}}

// crashPrepare brings a database (new, or left by a killed child) to the schema of the test.
// Every step is idempotent, so a crash between two of them is harmless.
func crashPrepare(db *streamsql.DB) error {
	if _, err := db.Exec(crashSetup[0]); err != nil {
		return err
	}
	if _, err := db.Exec(crashSetup[1]); err != nil {
		return err
	}
	rows, err := db.Query("SELECT COUNT(*) FROM dim")
	if err != nil {
		return err
	}
	var n int64
	for rows.Next() {
		n = rows.Values()[0].(int64)
	}
	rows.Close()
	if n == 0 {
		if _, err := db.Exec(crashDimInsert); err != nil {
			return err
		}
	}
	for _, q := range crashSetup[2:] {
		if _, err := db.Exec(q); err != nil {
			return err
		}
	}
	return nil
}

// crashInsertSQL is the INSERT of rows [from, from+n) as one statement.
func crashInsertSQL(from, n int64) string {
	var sb strings.Builder
	sb.WriteString("INSERT INTO ev VALUES ")
	for i := from; i < from+n; i++ {
		k, v, tsMs := crashRow(i)
		if i > from {
			sb.WriteString(", ")
		}
		fmt.Fprintf(&sb, "(%d, %d, %d, TIMESTAMP '%s', %d, %d)", i, k, v,
			time.UnixMilli(tsMs).UTC().Format("2006-01-02 15:04:05.000"), from, n)
	}
	return sb.String()
}

// crashRecord is crashInsertSQL's rows as an Arrow batch, for Append.
func crashRecord(from, n int64) arrow.RecordBatch {
	cols := make([][]int64, 6)
	for i := from; i < from+n; i++ {
		k, v, tsMs := crashRow(i)
		for c, x := range []int64{i, k, v, tsMs, from, n} {
			cols[c] = append(cols[c], x)
		}
	}
	names := []string{"i", "k", "v", "ts", "st", "sn"}
	fields := make([]arrow.Field, len(cols))
	arrs := make([]arrow.Array, len(cols))
	for c, vals := range cols {
		typ := arrow.DataType(arrow.PrimitiveTypes.Int64)
		if names[c] == "ts" {
			typ = arrow.FixedWidthTypes.Timestamp_ms
		}
		fields[c] = arrow.Field{Name: names[c], Type: typ, Nullable: true}
		b := array.NewBuilder(memory.DefaultAllocator, typ)
		for _, x := range vals {
			switch b := b.(type) {
			case *array.Int64Builder:
				b.Append(x)
			case *array.TimestampBuilder:
				b.Append(arrow.Timestamp(x))
			}
		}
		arrs[c] = b.NewArray()
	}
	return array.NewRecordBatch(arrow.NewSchema(fields, nil), arrs, n)
}

// maxStored is MAX(i) of ev, or -1 when it is empty.
func maxStored(db *streamsql.DB) (int64, error) {
	rows, err := db.Query("SELECT MAX(i) FROM ev")
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	m := int64(-1)
	for rows.Next() {
		if v, ok := rows.Values()[0].(int64); ok {
			m = v
		}
	}
	return m, rows.Err()
}

// TestCrashChild is the child process of the crash tests; run on its own it skips.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv(envCrashDir)
	if dir == "" {
		t.Skip("helper process of TestCrashRecovery (needs " + envCrashDir + ")")
	}
	if os.Getenv(envCrashMode) == "kafka" {
		kafkaCrashChild(t, dir)
		return
	}
	if os.Getenv(envCrashMode) == "script" {
		db, err := streamsql.Open(dir, streamsql.WithCheckpointInterval(-1))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(os.Getenv(envCrashSQL)); err != nil {
			t.Fatal(err)
		}
		os.Exit(0) // as a kill -9 right after the statements: no Close, no checkpoint
	}
	if os.Getenv(envCrashMode) == "lockprobe" {
		db, err := streamsql.Open(dir)
		if err != nil {
			fmt.Printf("OPEN-ERR %s\n", strings.ReplaceAll(err.Error(), "\n", " "))
			return
		}
		db.Close()
		fmt.Println("OPEN-OK")
		return
	}
	seed, err := strconv.ParseUint(os.Getenv(envCrashSeed), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, 0xc0ffee))
	ack, err := os.OpenFile(os.Getenv(envCrashAck), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer ack.Close()
	opts := []streamsql.Option{streamsql.WithSync(os.Getenv(envCrashMode) != "nosync")}
	if os.Getenv(envCrashMode) == "spill" {
		opts = append(opts, crashSpillOpts...)
	}
	db, err := streamsql.Open(dir, opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := crashPrepare(db); err != nil {
		t.Fatal(err)
	}
	// Continue after the last stored row, acknowledged or not: that keeps the stream free of
	// duplicates whatever instant the previous child died at.
	last, err := maxStored(db)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("READY %d\n", last+1)
	for i := last + 1; i < 1_000_000; {
		n := int64(1 + rng.IntN(4))
		if rng.IntN(400) == 0 {
			// A large Append: its segment (about 2.4 bytes a row, so 64 KiB from some 28000
			// rows) goes to the segment log, not into Pebble.
			n = int64(crashLargeMin + rng.IntN(8000))
			if err := db.Append(context.Background(), "ev", crashRecord(i, n)); err != nil {
				t.Fatalf("append of rows %d..%d: %v", i, i+n-1, err)
			}
		} else if _, err := db.Exec(crashInsertSQL(i, n)); err != nil {
			t.Fatalf("insert of rows %d..%d: %v", i, i+n-1, err)
		}
		i += n
		if _, err := fmt.Fprintf(ack, "%d\n", i-1); err != nil {
			t.Fatal(err)
		}
		if err := ack.Sync(); err != nil {
			t.Fatal(err)
		}
	}
}

// lastAck reads the highest acknowledged row index (-1 if none); a torn last line is ignored.
func lastAck(t *testing.T, path string, strict bool) int64 {
	t.Helper()
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return -1
	}
	if err != nil {
		t.Fatal(err)
	}
	last := int64(-1)
	for _, line := range strings.SplitAfter(string(data), "\n") {
		if !strings.HasSuffix(line, "\n") {
			break
		}
		v, err := strconv.ParseInt(strings.TrimSpace(line), 10, 64)
		if err != nil {
			t.Fatalf("ack file line %q: %v", line, err)
		}
		// With sync on a later child continues after the last acknowledged row, so the acks
		// only grow; with sync off a child may redo rows a crash lost.
		if v <= last && strict {
			t.Fatalf("ack file goes back: %d after %d", v, last)
		}
		last = v
	}
	return last
}

// checkStored verifies the rows of ev: exactly 0..M once each, every statement whole, and
// M >= ack. It returns M.
func checkStored(t *testing.T, db *streamsql.DB, ack int64) int64 {
	t.Helper()
	r := queryRows(t, db, "SELECT COUNT(*), COUNT(DISTINCT i), MIN(i), MAX(i) FROM ev")[0]
	n, distinct := r[0].(int64), r[1].(int64)
	if n == 0 {
		if ack >= 0 {
			t.Fatalf("rows lost: table is empty but rows up to %d were acknowledged", ack)
		}
		return -1
	}
	lo, hi := r[2].(int64), r[3].(int64)
	if lo != 0 || n != hi+1 || distinct != n {
		t.Fatalf("ev holds %d rows, %d distinct i, i in [%d, %d]: want each of 0..%d exactly once", n, distinct, lo, hi, hi)
	}
	if hi < ack {
		t.Fatalf("rows lost: rows up to %d acknowledged, only up to %d stored", ack, hi)
	}
	if partial := queryStrings(t, db, "SELECT st, sn, COUNT(*) AS c FROM ev GROUP BY st, sn HAVING COUNT(*) <> sn"); len(partial) > 0 {
		t.Fatalf("statements applied in part (st|sn|rows stored): %v", partial)
	}
	// Every stored row is exactly the generated one.
	rows := queryRows(t, db, "SELECT i, k, v, ts FROM ev ORDER BY i")
	for _, row := range rows {
		i := row[0].(int64)
		k, v, tsMs := crashRow(i)
		if row[1].(int64) != k || row[2].(int64) != v || row[3].(time.Time).UnixMilli() != tsMs {
			t.Fatalf("row %d stored as %v, want k=%d v=%d ts=%d", i, row, k, v, tsMs)
		}
	}
	return hi
}

var crashViewQueries = map[string]string{
	"tw":   "SELECT window_start, window_end, k, n, s FROM tw ORDER BY window_start, k",
	"twc":  "SELECT window_start, window_end, k, n, s FROM twc ORDER BY window_start, k",
	"agg":  "SELECT k, n, s FROM agg ORDER BY k",
	"j":    "SELECT i, k, name FROM j ORDER BY i, name",
	"ttl":  "SELECT g, n, mx FROM ttl ORDER BY g",
	"late": "SELECT view_name, event_time, row_json FROM system.late_rows ORDER BY view_name, event_time, row_json",
	"ev":   "SELECT i, k, v, ts FROM ev ORDER BY i",
	"dim":  "SELECT k, name FROM dim ORDER BY k, name",
}

func crashSnapshot(t *testing.T, db *streamsql.DB) map[string][]string {
	t.Helper()
	if _, err := db.Exec("FLUSH"); err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for name, q := range crashViewQueries {
		out[name] = queryStrings(t, db, q)
	}
	return out
}

// crashModel computes the views of rows 0..last directly from SPEC.md §3: a row's lateness is
// judged against the watermark (max of ts - 2 s) before it; a 10 s window is complete when
// W >= window_end - 1 ms.
func crashModel(last int64) map[string][]string {
	type wkey struct{ start, k int64 }
	type acc struct{ n, s int64 }
	win := map[wkey]*acc{}
	aggs := map[int64]*acc{}
	var late int64
	w := int64(-1 << 62)
	var j []string
	for i := int64(0); i <= last; i++ {
		k, v, tsMs := crashRow(i)
		start := tsMs - ((tsMs%10_000)+10_000)%10_000
		if w >= start+10_000-1 {
			late++
		} else {
			a := win[wkey{start, k}]
			if a == nil {
				a = &acc{}
				win[wkey{start, k}] = a
			}
			a.n++
			a.s += v
		}
		w = max(w, tsMs-2000)
		a := aggs[k]
		if a == nil {
			a = &acc{}
			aggs[k] = a
		}
		a.n++
		a.s += v
		names := append([]string(nil), crashDim[k]...)
		sort.Strings(names)
		for _, nm := range names {
			j = append(j, fmt.Sprintf("%d|%d|%s", i, k, nm))
		}
	}
	fmtT := func(ms int64) string { return time.UnixMilli(ms).UTC().Format("2006-01-02 15:04:05.000") }
	keys := make([]wkey, 0, len(win))
	for key := range win {
		keys = append(keys, key)
	}
	sort.Slice(keys, func(a, b int) bool {
		if keys[a].start != keys[b].start {
			return keys[a].start < keys[b].start
		}
		return keys[a].k < keys[b].k
	})
	var tw, twc []string
	for _, key := range keys {
		a := win[key]
		s := fmt.Sprintf("%s|%s|%d|%d|%d", fmtT(key.start), fmtT(key.start+10_000), key.k, a.n, a.s)
		tw = append(tw, s)
		if w >= key.start+10_000-1 {
			twc = append(twc, s)
		}
	}
	var agg []string
	for k := int64(0); k < 7; k++ {
		if a := aggs[k]; a != nil {
			agg = append(agg, fmt.Sprintf("%d|%d|%d", k, a.n, a.s))
		}
	}
	return map[string][]string{"tw": tw, "twc": twc, "agg": agg, "j": j, "lateCount": {strconv.FormatInt(late, 10)}}
}

func diffRows(t *testing.T, what string, got, want []string) {
	t.Helper()
	if reflect.DeepEqual(got, want) {
		return
	}
	gs, ws := map[string]int{}, map[string]int{}
	for _, g := range got {
		gs[g]++
	}
	for _, w := range want {
		ws[w]++
	}
	var extra, missing []string
	for g, n := range gs {
		if ws[g] < n {
			extra = append(extra, fmt.Sprintf("%s (x%d)", g, n-ws[g]))
		}
	}
	for w, n := range ws {
		if gs[w] < n {
			missing = append(missing, fmt.Sprintf("%s (x%d)", w, n-gs[w]))
		}
	}
	sort.Strings(extra)
	sort.Strings(missing)
	if len(extra) > 10 {
		extra = append(extra[:10], "...")
	}
	if len(missing) > 10 {
		missing = append(missing[:10], "...")
	}
	t.Errorf("%s: %d rows, want %d; extra %v; missing %v", what, len(got), len(want), extra, missing)
}

// startChild runs TestCrashChild with env and returns the command and a channel that gets
// each line the child prints.
func startChild(t *testing.T, env ...string) (*exec.Cmd, <-chan string, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), env...)
	stderr := &bytes.Buffer{}
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 100)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default: // nobody listening: drop, keep draining the pipe
			}
		}
		io.Copy(io.Discard, out)
	}()
	return cmd, lines, stderr
}

// waitReady waits for the child's READY line (60 s at most), killing it on failure.
func waitReady(t *testing.T, run int, cmd *exec.Cmd, lines <-chan string, stderr *bytes.Buffer) {
	t.Helper()
	select {
	case l, ok := <-lines:
		if !ok || !strings.HasPrefix(l, "READY ") {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("run %d: child did not get ready (line %q): %s", run, l, stderr)
		}
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("run %d: child not ready within 60 s: %s", run, stderr)
	}
}

func TestCrashRecovery(t *testing.T) {
	runs := 20
	if testing.Short() {
		runs = 3
	}
	crashLoop(t, runs, "")
}

// TestCrashRecoverySpilled is TestCrashRecovery with a 4 MiB memory limit: the views keep
// their rows and groups on disk (state staged between checkpoints), and still equal a clean
// run after every kill.
func TestCrashRecoverySpilled(t *testing.T) {
	runs := 8
	if testing.Short() {
		runs = 2
	}
	crashLoop(t, runs, "spill")
}

// With sync off a crash may lose acknowledged statements (documented), but never applies
// part of one, never duplicates, and the views still equal a clean run over what is stored.
// (SIGKILL keeps the OS page cache, so in practice little or nothing is lost.)
func TestCrashRecoverySyncOff(t *testing.T) {
	runs := 8
	if testing.Short() {
		runs = 2
	}
	crashLoop(t, runs, "nosync")
}

// crashSpillOpts are the options of mode "spill": views spill under a 4 MiB limit and
// checkpoint every 50 ms, so kills land between checkpoints of spilled state.
var crashSpillOpts = []streamsql.Option{streamsql.WithMemoryLimit(4 << 20), streamsql.WithCheckpointInterval(50 * time.Millisecond)}

// crashLoop runs the children in mode ("": sync on; "nosync"; "spill": sync on and a tiny
// memory limit).
func crashLoop(t *testing.T, runs int, mode string) {
	syncOn := mode != "nosync"
	var openOpts []streamsql.Option
	if mode == "spill" {
		openOpts = crashSpillOpts
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv(envSeed); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: %v", envSeed, s, err)
		}
		seed = v
	}
	t.Logf("seed %d (reproduce with %s=%d)", seed, envSeed, seed)
	rng := rand.New(rand.NewPCG(seed, 42))
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "db")
	ackPath := filepath.Join(tmp, "ack")

	kills, exits, prevStored := 0, 0, int64(-1)
	for run := 0; run < runs; run++ {
		cmd, lines, stderr := startChild(t,
			envCrashDir+"="+dir, envCrashAck+"="+ackPath,
			envCrashSeed+"="+strconv.FormatUint(rng.Uint64(), 10), envCrashMode+"="+mode)
		// One run in five dies at a random instant from process start (maybe while opening
		// and replaying); the others at a random instant after the child starts inserting.
		// The first run always gets to insert for a while, so there is data to check.
		early := run > 0 && rng.IntN(5) == 0
		delay := time.Duration(5+rng.IntN(250)) * time.Millisecond
		if run == 0 {
			delay += 50 * time.Millisecond
		}
		if !early {
			waitReady(t, run, cmd, lines, stderr)
		}
		// The crash instant (not a synchronisation: any instant must be survivable).
		time.Sleep(delay)
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Logf("run %d: kill: %v", run, err)
		}
		err := cmd.Wait()
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ProcessState.Sys().(syscall.WaitStatus).Signaled() {
			kills++
		} else {
			exits++
			if err != nil {
				t.Fatalf("run %d: child failed before the kill: %v\n%s", run, err, stderr)
			}
		}
		ack := lastAck(t, ackPath, syncOn)
		if !syncOn {
			t.Logf("run %d: sync off: acked up to %d", run, ack)
			ack = -1 // acknowledged statements may be lost with sync off
		}
		// Reopen after the crash and check the table: nothing acknowledged lost, nothing
		// duplicated, no statement in part.
		db, err := streamsql.Open(dir, openOpts...)
		if err != nil {
			t.Fatalf("run %d: reopen after kill -9: %v", run, err)
		}
		stored := int64(-1)
		for _, name := range queryStrings(t, db, "SHOW TABLES") {
			if name == "ev" {
				stored = checkStored(t, db, ack)
			}
		}
		if stored < 0 && ack >= 0 {
			t.Fatalf("run %d: table ev lost after rows up to %d were acknowledged", run, ack)
		}
		if stored < prevStored && syncOn {
			t.Fatalf("run %d: stored rows went back from %d to %d", run, prevStored, stored)
		}
		prevStored = stored
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		t.Logf("run %d: early=%v delay=%v acked up to %d, stored up to %d", run, early, delay, ack, stored)
	}
	t.Logf("survived %d kills (%d children ended before the kill) over %d rows", kills, exits, prevStored+1)
	if kills == 0 {
		t.Fatal("no child was killed: the test did not test anything")
	}

	if prevStored < 0 && !syncOn {
		// With sync off a process crash can lose everything not yet flushed by Pebble,
		// the CREATE TABLE included; then there is nothing to compare.
		t.Logf("sync off: nothing survived the kills; no views to compare")
		return
	}
	// Compare the crashed database with a clean run and with the model.
	db, err := streamsql.Open(dir, openOpts...)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	finalAck := lastAck(t, ackPath, syncOn)
	if !syncOn {
		finalAck = -1
	}
	last := checkStored(t, db, finalAck)
	if last < 0 {
		t.Fatal("no rows were written by any child; raise the delays")
	}
	got := crashSnapshot(t, db)
	if mode == "spill" {
		if spilled := queryStrings(t, db, "SELECT name FROM system.views WHERE spilled ORDER BY name"); !reflect.DeepEqual(spilled, []string{"agg", "j", "ttl", "tw", "twc"}) {
			t.Errorf("views spilled under the 4 MiB limit: %v, want all five", spilled)
		}
	}
	// The clean run: the same statements (same boundaries, from st/sn) in one process.
	stmts := queryRows(t, db, "SELECT st, sn FROM ev GROUP BY st, sn ORDER BY st")
	clean := openT(t, "")
	if err := crashPrepare(clean); err != nil {
		t.Fatal(err)
	}
	for _, s := range stmts {
		if from, n := s[0].(int64), s[1].(int64); n >= crashLargeMin {
			if err := clean.Append(context.Background(), "ev", crashRecord(from, n)); err != nil {
				t.Fatal(err)
			}
		} else {
			mustExec(t, clean, crashInsertSQL(from, n))
		}
	}
	want := crashSnapshot(t, clean)
	for _, name := range []string{"ev", "dim", "tw", "twc", "agg", "j", "late"} {
		diffRows(t, "crashed vs clean: "+name, got[name], want[name])
	}
	model := crashModel(last)
	for _, name := range []string{"tw", "twc", "agg", "j"} {
		diffRows(t, "crashed vs model: "+name, got[name], model[name])
	}
	var lateTW int64
	for _, l := range got["late"] {
		if strings.HasPrefix(l, "tw|") {
			lateTW++
		}
	}
	if strconv.FormatInt(lateTW, 10) != model["lateCount"][0] {
		t.Errorf("system.late_rows has %d rows for tw, model says %s", lateTW, model["lateCount"][0])
	}
	if n, _ := strconv.Atoi(model["lateCount"][0]); n == 0 && last > 100 {
		t.Error("the stream had no late rows; the test data is wrong")
	}
	// The recovered database keeps working: one more statement reaches every view.
	mustExec(t, db, crashInsertSQL(last+1, 3))
	mustExec(t, clean, crashInsertSQL(last+1, 3))
	got, want = crashSnapshot(t, db), crashSnapshot(t, clean)
	for _, name := range []string{"tw", "twc", "agg", "j", "late"} {
		diffRows(t, "after one more insert, crashed vs clean: "+name, got[name], want[name])
	}
}

// TestCrashAfterRebuildKeepsViews: a reopen that rebuilds the views (the checkpoint lacks one)
// drops the checkpoint too, so after the view it lacked is dropped and the process dies before
// the next checkpoint, the other views are not restored from it (their stored rows are gone).
func TestCrashAfterRebuildKeepsViews(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	var rows strings.Builder
	for i := 0; i < 2000; i++ {
		fmt.Fprintf(&rows, "%s(%d, %d)", map[bool]string{true: "", false: ", "}[i == 0], i, i%7)
	}
	runScripts(t, dir,
		"CREATE TABLE t (id BIGINT, g BIGINT); CREATE MATERIALIZED VIEW a AS SELECT id, g FROM t; "+
			"INSERT INTO t VALUES "+rows.String()+"; CHECKPOINT; "+
			"CREATE MATERIALIZED VIEW b AS SELECT g, COUNT(*) AS n FROM t GROUP BY g",
		"DROP MATERIALIZED VIEW b", // after the reopen that rebuilt a and b
	)
	db, err := streamsql.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if n := queryInt(t, db, "SELECT COUNT(*) FROM a"); n != 2000 {
		t.Errorf("view a holds %d rows after a rebuild, a DROP of another view and a crash, want 2000", n)
	}
}

// runScripts runs each script in a child process that exits without Close right after it
// (as a kill -9 would), one after the other on the database at dir.
func runScripts(t *testing.T, dir string, scripts ...string) {
	t.Helper()
	for _, script := range scripts {
		cmd, lines, stderr := startChild(t, envCrashDir+"="+dir, envCrashMode+"=script", envCrashSQL+"="+script)
		for range lines {
		}
		if err := cmd.Wait(); err != nil {
			t.Fatalf("child: %v\n%s", err, stderr)
		}
	}
}

// TestCrashKeepsLargeWrites: large writes (their segments go to the segment log, synced
// before the Pebble batch holding their pointers commits) survive a process that dies right
// after they return, on a new database and after a reopen.
func TestCrashKeepsLargeWrites(t *testing.T) {
	var rows strings.Builder
	for i := 0; i < 200; i++ {
		fmt.Fprintf(&rows, "%s(%d, 'row %d, long enough that the segments are large')", map[bool]string{true: "", false: ", "}[i == 0], i, i)
	}
	dir := filepath.Join(t.TempDir(), "db")
	runScripts(t, dir,
		// 200 rows (a small write), then 40000 (a large one).
		"CREATE TABLE t (id BIGINT, s VARCHAR); INSERT INTO t VALUES "+rows.String()+"; "+
			"INSERT INTO t SELECT a.id * 1000 + b.id + 1000, a.s FROM t AS a, t AS b",
		"INSERT INTO t SELECT id + 1000000000, s FROM t",
	)
	db, err := streamsql.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if n := queryInt(t, db, "SELECT COUNT(*) FROM t"); n != 80400 {
		t.Errorf("t holds %d rows after acknowledged INSERTs of 200, 40000 and 40200 rows and two crashes, want 80400", n)
	}
}

// TestCrashKeepsLargeWritesAfterDrop: a large write survives a process that dies right after
// it returns also when the log file of the last large write before it was deleted (its
// table dropped in an earlier process): the new write's log file must not take the deleted
// one's number, where Open looks for the statements Pebble may have lost.
func TestCrashKeepsLargeWritesAfterDrop(t *testing.T) {
	var rows strings.Builder
	for i := 0; i < 200; i++ {
		fmt.Fprintf(&rows, "%s(%d, 'row %d, long enough that the segments are large')", map[bool]string{true: "", false: ", "}[i == 0], i, i)
	}
	dir := filepath.Join(t.TempDir(), "db")
	runScripts(t, dir,
		"CREATE TABLE t (id BIGINT, s VARCHAR); CREATE TABLE u (id BIGINT, s VARCHAR); "+
			"INSERT INTO t VALUES "+rows.String()+"; INSERT INTO u VALUES "+rows.String()+"; "+
			"INSERT INTO t SELECT a.id * 1000 + b.id + 1000, a.s FROM t AS a, t AS b",
		"DROP TABLE t", // deletes the log file: this process writes no other
		"INSERT INTO u SELECT a.id * 1000 + b.id + 1000, a.s FROM u AS a, u AS b",
	)
	db, err := streamsql.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if n := queryInt(t, db, "SELECT COUNT(*) FROM u"); n != 40200 {
		t.Errorf("u holds %d rows after acknowledged INSERTs of 200 and 40000 rows and a crash, want 40200", n)
	}
}

// TestCrashLockAcrossProcesses: a database one process holds cannot be opened by another, and
// a SIGKILLed holder does not leave it locked.
func TestCrashLockAcrossProcesses(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	db, err := streamsql.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, db, "CREATE TABLE t (a BIGINT)")
	cmd, lines, stderr := startChild(t, envCrashDir+"="+dir, envCrashMode+"=lockprobe")
	var line string
	for l := range lines {
		if strings.HasPrefix(l, "OPEN-") {
			line = l
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child: %v\n%s", err, stderr)
	}
	if !strings.HasPrefix(line, "OPEN-ERR ") {
		t.Fatalf("another process opened a database in use: %q", line)
	}
	if msg := strings.ToLower(line); !strings.Contains(msg, "in use by another process") {
		t.Errorf("the error does not say the database is in use: %s", line)
	}
	mustExec(t, db, "INSERT INTO t VALUES (1)")
	db.Close()

	// A child holding the database dies with SIGKILL: the lock goes with it.
	ackPath := filepath.Join(t.TempDir(), "ack")
	cmd, lines, stderr = startChild(t, envCrashDir+"="+dir, envCrashAck+"="+ackPath, envCrashSeed+"=1")
	select {
	case l := <-lines:
		if !strings.HasPrefix(l, "READY") {
			t.Fatalf("child: %q %s", l, stderr)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("child not ready")
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	db2, err := streamsql.Open(dir)
	if err != nil {
		t.Fatalf("open after the holder was killed: %v", err)
	}
	defer db2.Close()
	if n := queryInt(t, db2, "SELECT COUNT(*) FROM t"); n != 1 {
		t.Fatalf("t has %d rows, want 1", n)
	}
}

// copyDir copies the regular files of src into dst.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !e.Type().IsRegular() {
			if e.IsDir() {
				copyDir(t, filepath.Join(src, e.Name()), filepath.Join(dst, e.Name()))
			}
			continue
		}
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCrashTornWAL truncates the newest WAL file after a clean close: the database must open
// with exactly the statements of some prefix (never part of one), or refuse with an error.
func TestCrashTornWAL(t *testing.T) {
	const nStmts, perStmt = 40, 5
	src := filepath.Join(t.TempDir(), "db")
	db, err := streamsql.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, db, `CREATE TABLE t (st BIGINT, j BIGINT, pad VARCHAR, ts TIMESTAMP(3), WATERMARK FOR ts AS ts)`)
	mustExec(t, db, `CREATE MATERIALIZED VIEW tot AS SELECT COUNT(*) AS n, SUM(j) AS s FROM t`)
	mustExec(t, db, `CREATE MATERIALIZED VIEW per AS SELECT st, COUNT(*) AS n FROM t GROUP BY st`)
	for s := 0; s < nStmts; s++ {
		var vals []string
		for j := 0; j < perStmt; j++ {
			vals = append(vals, fmt.Sprintf("(%d, %d, '%s', TIMESTAMP '2024-01-01 00:00:%02d')", s, j, strings.Repeat("x", 10*j), s))
		}
		mustExec(t, db, "INSERT INTO t VALUES "+strings.Join(vals, ", "))
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	logs, _ := filepath.Glob(filepath.Join(src, "*.log"))
	if len(logs) == 0 {
		t.Fatalf("no *.log files under %s", src)
	}
	sort.Strings(logs) // Pebble's file numbers are zero-padded: the last one is the newest
	newest := filepath.Base(logs[len(logs)-1])
	fi, err := os.Stat(logs[len(logs)-1])
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("newest WAL %s, %d bytes", newest, fi.Size())
	if fi.Size() == 0 {
		t.Skip("the newest WAL is empty after a clean close; nothing to tear")
	}

	opened := 0
	for _, cut := range []int64{1, 2, 3, 7, 16, 33, 100, 257, 1000, 4000} {
		if cut >= fi.Size() {
			continue
		}
		t.Run(fmt.Sprintf("cut%d", cut), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "db")
			copyDir(t, src, dir)
			if err := os.Truncate(filepath.Join(dir, newest), fi.Size()-cut); err != nil {
				t.Fatal(err)
			}
			db, err := streamsql.Open(dir)
			if err != nil {
				if !strings.Contains(err.Error(), "write-ahead log is damaged") {
					t.Fatalf("Open refused a torn WAL without saying so: %v", err)
				}
				t.Logf("refused: %v", err)
				return
			}
			opened++
			defer db.Close()
			check := func(when string) int {
				t.Helper()
				per := queryStrings(t, db, "SELECT st, COUNT(*) FROM t GROUP BY st ORDER BY st")
				p := len(per)
				for s, row := range per {
					if row != fmt.Sprintf("%d|%d", s, perStmt) {
						t.Fatalf("%s: statements stored are not a whole prefix: %v", when, per)
					}
				}
				mustExec(t, db, "FLUSH")
				wantTot := fmt.Sprintf("%d|%d", p*perStmt, p*perStmt*(perStmt-1)/2)
				if p == 0 {
					wantTot = "0|NULL"
				}
				if got := queryStrings(t, db, "SELECT n, s FROM tot"); !reflect.DeepEqual(got, []string{wantTot}) {
					t.Errorf("%s: view tot = %v, want [%s]", when, got, wantTot)
				}
				if got := queryStrings(t, db, "SELECT st, n FROM per ORDER BY st"); !reflect.DeepEqual(got, per) {
					t.Errorf("%s: view per = %v, want %v", when, got, per)
				}
				return p
			}
			p := check("after reopen")
			t.Logf("opened with %d of %d statements", p, nStmts)
			if cut <= 3 && p < nStmts-1 {
				t.Errorf("a %d-byte tear lost %d statements", cut, nStmts-p)
			}
			// The recovered database takes writes and keeps them across another reopen.
			mustExec(t, db, fmt.Sprintf("INSERT INTO t VALUES (%d, 0, '', TIMESTAMP '2024-01-01 00:01:00')", p))
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			db, err = streamsql.Open(dir)
			if err != nil {
				t.Fatalf("reopen after recovery: %v", err)
			}
			per := queryStrings(t, db, "SELECT st, COUNT(*) FROM t GROUP BY st ORDER BY st")
			if len(per) != p+1 || per[p] != fmt.Sprintf("%d|1", p) {
				t.Fatalf("after a write and a reopen: %v", per)
			}
		})
	}
	t.Logf("%d truncations opened, the rest refused", opened)
}

// TestCrashKeepsLateRowsOfViewsOverViews: a late change judged after the last checkpoint by a
// window over a view (TUMBLE and SESSION over a temporal join, TUMBLE over a ranking, an
// interval join and a filter) is in system.late_rows, counted once, after a crash and a
// reopen from that checkpoint — as in an uninterrupted run, and as after a full replay (no
// checkpoint). A temporal join's or a ranking's rows carry no watermark: the window judges
// them against the last one it received, which the checkpoint must keep.
func TestCrashKeepsLateRowsOfViewsOverViews(t *testing.T) {
	setup := []string{
		`CREATE TABLE r (k BIGINT, rate BIGINT, ts TIMESTAMP(3), PRIMARY KEY (k) NOT ENFORCED, WATERMARK FOR ts AS ts)`,
		`CREATE TABLE o (id BIGINT PRIMARY KEY, k BIGINT, v BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts)`,
		`CREATE TABLE p (k BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts)`,
		`CREATE MATERIALIZED VIEW tj AS SELECT o.id, o.v * r.rate AS x, o.ts FROM o JOIN r FOR SYSTEM_TIME AS OF o.ts AS r ON o.k = r.k`,
		`CREATE MATERIALIZED VIEW tjw AS SELECT window_start, COUNT(*) AS n, SUM(x) AS s FROM TABLE(TUMBLE(TABLE tj, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) GROUP BY window_start, window_end`,
		`CREATE MATERIALIZED VIEW tjs AS SELECT window_start, window_end, COUNT(*) AS n FROM TABLE(SESSION(TABLE tj, DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY window_start, window_end`,
		`CREATE MATERIALIZED VIEW top AS SELECT * FROM (SELECT id, v, ts, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC) AS rn FROM o) x WHERE rn <= 2`,
		`CREATE MATERIALIZED VIEW topw AS SELECT window_start, COUNT(*) AS n, SUM(v) AS s FROM TABLE(TUMBLE(TABLE top, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) GROUP BY window_start, window_end`,
		`CREATE MATERIALIZED VIEW ij AS SELECT o.id, o.v, o.ts FROM o JOIN p ON o.k = p.k AND p.ts BETWEEN o.ts - INTERVAL '10' MINUTE AND o.ts + INTERVAL '10' MINUTE`,
		`CREATE MATERIALIZED VIEW ijw AS SELECT window_start, COUNT(*) AS n, SUM(v) AS s FROM TABLE(TUMBLE(TABLE ij, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) GROUP BY window_start, window_end`,
		`CREATE MATERIALIZED VIEW pv AS SELECT id, v, ts FROM o WHERE v > 0`,
		`CREATE MATERIALIZED VIEW pvw AS SELECT window_start, COUNT(*) AS n, SUM(v) AS s FROM TABLE(TUMBLE(TABLE pv, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) GROUP BY window_start, window_end`,
		`INSERT INTO r VALUES (1, 2, TIMESTAMP '2024-01-01 10:00:00'), (2, 3, TIMESTAMP '2024-01-01 10:00:00')`,
		`INSERT INTO p VALUES (1, TIMESTAMP '2024-01-01 10:00:10'), (2, TIMESTAMP '2024-01-01 10:00:20')`,
		`INSERT INTO o VALUES (1, 1, 10, TIMESTAMP '2024-01-01 10:00:10'), (2, 2, 20, TIMESTAMP '2024-01-01 10:00:20'), (3, 1, 30, TIMESTAMP '2024-01-01 10:00:30')`,
		`FLUSH`,
		// Watermarks past 10:00:59.999 on every input: the first minute's windows are complete.
		`INSERT INTO r VALUES (3, 4, TIMESTAMP '2024-01-01 10:05:00')`, // key 2's version stays: not late for tj
		`INSERT INTO p VALUES (3, TIMESTAMP '2024-01-01 10:05:00')`,
		`INSERT INTO o VALUES (4, 1, 40, TIMESTAMP '2024-01-01 10:05:00')`,
		`FLUSH`,
	}
	after := []string{
		`DELETE FROM o WHERE id = 2`, // a late retraction into a complete window of each view
		`FLUSH`,
	}
	views := func(db *streamsql.DB) []string {
		var out []string
		for _, q := range []string{
			"SELECT * FROM tjw ORDER BY window_start",
			"SELECT * FROM tjs ORDER BY window_start",
			"SELECT * FROM topw ORDER BY window_start",
			"SELECT * FROM ijw ORDER BY window_start",
			"SELECT * FROM pvw ORDER BY window_start",
			"SELECT name, late_rows FROM system.views ORDER BY name",
			"SELECT view_name, table_name, event_time, watermark, row_json FROM system.late_rows ORDER BY view_name, event_time, row_json",
		} {
			out = append(out, queryStrings(t, db, q)...)
		}
		return out
	}
	live := openT(t, "")
	for _, q := range append(append([]string{}, setup...), after...) {
		mustExec(t, live, q)
	}
	want := views(live)
	// The DELETE is late for each window over a view and for the interval join itself (a
	// window over it gets no retraction to judge).
	if got := queryStrings(t, live, "SELECT view_name FROM system.late_rows ORDER BY view_name"); fmt.Sprint(got) != "[ij pvw tjs tjw topw]" {
		t.Fatalf("uninterrupted run: late rows of %v", got)
	}
	for _, ckpt := range []bool{true, false} {
		t.Run(fmt.Sprint("checkpoint=", ckpt), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "db")
			script := append([]string{}, setup...)
			if ckpt {
				script = append(script, "CHECKPOINT")
			}
			script = append(script, after...)
			cmd, lines, stderr := startChild(t, envCrashDir+"="+dir, envCrashMode+"=script", envCrashSQL+"="+strings.Join(script, ";\n"))
			for range lines {
			}
			if err := cmd.Wait(); err != nil {
				t.Fatalf("child: %v\n%s", err, stderr)
			}
			db := openT(t, dir)
			restored := queryInt(t, db, "SELECT COUNT(*) FROM system.checkpoints WHERE reason = 'restored'")
			if want := map[bool]int64{true: 1, false: 0}[ckpt]; restored != want {
				t.Errorf("%d checkpoints restored, want %d", restored, want)
			}
			if got := views(db); strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("after a crash and a reopen:\n%s\nuninterrupted:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}
