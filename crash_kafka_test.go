package streamsql_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/streamsql/streamsql"
)

// The Kafka crash test: the parent runs a kfake cluster and keeps producing a deterministic
// stream into three partitions; a child process (TestCrashChild in mode "kafka") opens the
// database, whose table reads the topic and whose sink writes a view back to Kafka, and is
// killed with SIGKILL at random instants. At the end every record must be in the table
// exactly once, every view must equal a clean run over the topic, and the sink's topic,
// compacted by key, must equal its view.

const envCrashKafka = "STREAMSQL_CRASH_CHILD_KAFKA" // the brokers, for mode "kafka"

// kafkaCrashParts is the partition count; record i goes to partition i % kafkaCrashParts.
const kafkaCrashParts = 3

// kafkaCrashRecord is record i: in event-time order within its partition, so no row is ever
// late whatever order the partitions interleave in, and the views do not depend on it. Every
// 6 s of event time a 3 s pause closes the sessions.
func kafkaCrashRecord(i int) string {
	m := int64(i / kafkaCrashParts)
	ts := crashBase + m*100 + m/60*3000
	return fmt.Sprintf(`{"i": %d, "k": %d, "v": %d, "ts": %d}`, i, i%5, i, ts)
}

func kafkaCrashSetup(addr string) []string {
	return []string{
		fmt.Sprintf(`CREATE TABLE IF NOT EXISTS ev (i BIGINT, k BIGINT, v BIGINT, ts TIMESTAMP(3),
			WATERMARK FOR ts AS ts - INTERVAL '500' MILLISECOND)
			WITH (connector = 'kafka', topic = 'ev', 'properties.bootstrap.servers' = '%s')`, addr),
		`CREATE MATERIALIZED VIEW IF NOT EXISTS tw AS
			SELECT window_start, k, COUNT(*) AS n, SUM(v) AS s
			FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '1' SECOND))
			GROUP BY window_start, window_end, k EMIT ON WINDOW CLOSE`,
		// Session ends fall on ...50 ms and rows on whole 100 ms, so no row ever merely
		// touches a closed session.
		`CREATE MATERIALIZED VIEW IF NOT EXISTS sess AS
			SELECT window_start, window_end, k, COUNT(*) AS n
			FROM TABLE(SESSION(TABLE ev PARTITION BY k, DESCRIPTOR(ts), INTERVAL '1050' MILLISECOND))
			GROUP BY window_start, window_end, k`,
		`CREATE MATERIALIZED VIEW IF NOT EXISTS agg AS SELECT k, COUNT(*) AS n, SUM(v) AS s FROM ev GROUP BY k`,
		fmt.Sprintf(`CREATE SINK IF NOT EXISTS agg_out FROM agg
			WITH (connector = 'kafka', topic = 'agg', 'properties.bootstrap.servers' = '%s', key = 'k')`, addr),
	}
}

// kafkaCrashChild is TestCrashChild in mode "kafka": it sets the database up and lets the
// connector and the sink run until it is killed.
func kafkaCrashChild(t *testing.T, dir string) {
	db, err := streamsql.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range kafkaCrashSetup(os.Getenv(envCrashKafka)) {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	fmt.Println("READY 0")
	time.Sleep(time.Hour)
}

var kafkaCrashQueries = map[string]string{
	"tw":   "SELECT window_start, k, n, s FROM tw ORDER BY window_start, k",
	"sess": "SELECT window_start, window_end, k, n FROM sess ORDER BY window_start, k",
	"agg":  "SELECT k, n, s FROM agg ORDER BY k",
	"late": "SELECT COUNT(*) FROM system.late_rows",
}

// kafkaCrashSnapshot waits until ev holds n rows, then flushes and snapshots the views.
func kafkaCrashSnapshot(t *testing.T, db *streamsql.DB, n int64) map[string][]string {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for queryInt(t, db, "SELECT COUNT(*) FROM ev") < n {
		if time.Now().After(deadline) {
			t.Fatalf("ev has %d rows after 60 s, want %d; sources: %v", queryInt(t, db, "SELECT COUNT(*) FROM ev"), n,
				queryStrings(t, db, "SELECT * FROM system.sources"))
		}
		time.Sleep(20 * time.Millisecond)
	}
	mustExec(t, db, "FLUSH")
	out := map[string][]string{}
	for name, q := range kafkaCrashQueries {
		out[name] = queryStrings(t, db, q)
	}
	return out
}

func TestCrashKafka(t *testing.T) {
	runs := 8
	if testing.Short() {
		runs = 3
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 7))
	addr, cl := newKafka(t, kafkaCrashParts, "ev", "agg")
	dir := filepath.Join(t.TempDir(), "db")
	produced := 0
	produceMore := func(n int) {
		var rs []*kgo.Record
		for i := produced; i < produced+n; i++ {
			rs = append(rs, &kgo.Record{Topic: "ev", Partition: int32(i % kafkaCrashParts), Value: []byte(kafkaCrashRecord(i))})
		}
		if err := cl.ProduceSync(context.Background(), rs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
		produced += n
	}
	kills := 0
	for run := 0; run < runs; run++ {
		produceMore(10_000 + rng.IntN(15_000))
		cmd, lines, stderr := startChild(t, envCrashDir+"="+dir, envCrashMode+"=kafka", envCrashKafka+"="+addr)
		waitReady(t, run, cmd, lines, stderr)
		time.Sleep(time.Duration(rng.IntN(400)) * time.Millisecond)
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatalf("run %d: kill: %v", run, err)
		}
		cmd.Wait()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			kills++
		} else {
			t.Fatalf("run %d: child ended before the kill: %s", run, stderr)
		}
	}
	t.Logf("survived %d kills over %d records", kills, produced)

	db := openT(t, dir)
	defer db.Close()
	got := kafkaCrashSnapshot(t, db, int64(produced))
	r := queryRows(t, db, "SELECT COUNT(*), COUNT(DISTINCT i), MIN(i), MAX(i) FROM ev")[0]
	if r[0].(int64) != int64(produced) || r[1].(int64) != int64(produced) || r[2].(int64) != 0 || r[3].(int64) != int64(produced-1) {
		t.Fatalf("ev: %v rows, distinct, min, max; want each record 0..%d exactly once", r, produced-1)
	}
	clean := openT(t, "")
	for _, q := range kafkaCrashSetup(addr)[:4] {
		mustExec(t, clean, q)
	}
	want := kafkaCrashSnapshot(t, clean, int64(produced))
	for _, name := range []string{"tw", "sess", "agg", "late"} {
		diffRows(t, "crashed vs clean: "+name, got[name], want[name])
	}
	if len(got["tw"]) < 100 || got["late"][0] != "0" {
		t.Fatalf("tw has %d rows and %s late rows: the test data is wrong", len(got["tw"]), got["late"][0])
	}
	// The sink: the topic compacted by key is the view (FLUSH waited for its acks).
	topic := consumeUpserts(t, addr, "agg", topicRecords(t, cl, "agg", kafkaCrashParts))
	var sunk []string
	for k := 0; k < 5; k++ {
		v, ok := topic[fmt.Sprintf(`{"k":%d}`, k)]
		if !ok {
			t.Fatalf("topic agg has no record for k = %d: %v", k, topic)
		}
		sunk = append(sunk, v)
	}
	var view []string
	for _, row := range queryRows(t, db, "SELECT k, n, s FROM agg ORDER BY k") {
		view = append(view, fmt.Sprintf(`{"k":%d,"n":%d,"s":%d}`, row[0], row[1], row[2]))
	}
	diffRows(t, "sink topic vs view agg", sunk, view)
	if len(topic) != 5 {
		t.Fatalf("topic agg holds %d keys, want 5", len(topic))
	}
}
