package streamsql_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamsql/streamsql"
)

// These tests run the Kafka connectors against kfake: an in-process cluster that speaks the
// real Kafka protocol, so the franz-go client is exercised as against a broker.

// newKafka starts a cluster with the given topics of parts partitions each.
func newKafka(t *testing.T, parts int32, topics ...string) (addr string, cl *kgo.Client) {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(parts, topics...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	addr = strings.Join(c.ListenAddrs(), ",")
	cl, err = kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return addr, cl
}

// produce writes JSON values to one partition of a topic and waits for the acks.
func produce(t *testing.T, cl *kgo.Client, topic string, part int32, values ...string) {
	t.Helper()
	var rs []*kgo.Record
	for _, v := range values {
		rs = append(rs, &kgo.Record{Topic: topic, Partition: part, Value: []byte(v)})
	}
	if err := cl.ProduceSync(context.Background(), rs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// waitPosition waits until table's source has taken n records (position in system.sources).
func waitPosition(t *testing.T, db *streamsql.DB, table string, n int64) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var pos int64
	var status string
	for time.Now().Before(deadline) {
		rows := queryRows(t, db, "SELECT position, status FROM system.sources WHERE table_name = ?", table)
		if len(rows) == 1 {
			pos, _ = rows[0][0].(int64)
			status, _ = rows[0][1].(string)
			if pos >= n {
				return
			}
			if strings.HasPrefix(status, "failed") {
				t.Fatalf("source of %s: %s", table, status)
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("source of %s took %d records, want %d (status %q)", table, pos, n, status)
}

func bid(ts string, auction, price int) string {
	return fmt.Sprintf(`{"auction": %d, "price": %d, "ts": "%s"}`, auction, price, ts)
}

func kafkaTable(addr, extra string) string {
	return fmt.Sprintf(`CREATE TABLE bids (auction BIGINT, price BIGINT, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
  WITH (connector = 'kafka', topic = 'bids', 'properties.bootstrap.servers' = '%s'%s)`, addr, extra)
}

const bidsPerWindow = `CREATE MATERIALIZED VIEW per_window AS
  SELECT window_start, COUNT(*) AS n, SUM(price) AS total
  FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '10' SECOND))
  GROUP BY window_start, window_end`

// TestKafkaSourcePerPartitionWatermark: the table's watermark is the minimum over the
// partitions, so a row behind the fast partition but not behind the slow one is on time;
// rows behind the minimum are late (system.late_rows); malformed records go to
// system.bad_records; and the consumed position survives a restart exactly once.
func TestKafkaSourcePerPartitionWatermark(t *testing.T) {
	addr, cl := newKafka(t, 2, "bids")
	path := filepath.Join(t.TempDir(), "db")
	db := openT(t, path)
	mustExec(t, db, kafkaTable(addr, ""))
	mustExec(t, db, bidsPerWindow)

	// Partition 0 runs ahead to 00:00:30; partition 1 has said nothing, so W stays unset.
	produce(t, cl, "bids", 0, bid("2024-01-01 00:00:01", 1, 10), bid("2024-01-01 00:00:30", 1, 20))
	waitPosition(t, db, "bids", 2)
	if got := queryRows(t, db, "SELECT watermark FROM system.watermarks WHERE name = 'bids'"); got[0][0] != nil {
		t.Fatalf("watermark with a silent partition = %v, want NULL", got[0][0])
	}
	// Partition 1 at 00:00:05: W = min(29 s, 4 s) = 00:00:04, and the row is on time.
	produce(t, cl, "bids", 1, bid("2024-01-01 00:00:05", 2, 1), `{"auction": "x"}`, `not json`, `{"auction": 1, "ts": 253402300800000}`)
	waitPosition(t, db, "bids", 6)
	mustExec(t, db, "FLUSH")
	if got := queryStrings(t, db, "SELECT watermark FROM system.watermarks WHERE name = 'bids'"); got[0] != "2024-01-01 00:00:04.000" {
		t.Fatalf("watermark = %v, want 2024-01-01 00:00:04", got)
	}
	// A row at 00:00:02 is behind W = 00:00:04 but its window [0, 10) is still open.
	// Partition 1 then reaches 00:00:31: W = min(29 s, 30 s), window [0, 10) closes.
	produce(t, cl, "bids", 1, bid("2024-01-01 00:00:02", 3, 100), bid("2024-01-01 00:00:31", 4, 1000))
	waitPosition(t, db, "bids", 8)
	// Partition 0 at 00:00:32 (W = 00:00:30), then a row at 00:00:03: late.
	produce(t, cl, "bids", 0, bid("2024-01-01 00:00:32", 5, 1), bid("2024-01-01 00:00:03", 6, 7))
	waitPosition(t, db, "bids", 10)
	mustExec(t, db, "FLUSH")
	want := []string{"2024-01-01 00:00:00.000|3|111", "2024-01-01 00:00:30.000|3|1021"}
	if got := sortedCopy(queryStrings(t, db, "SELECT * FROM per_window")); strings.Join(got, ";") != strings.Join(want, ";") {
		t.Fatalf("per_window = %v, want %v", got, want)
	}
	if got := queryStrings(t, db, "SELECT table_name, event_time, watermark FROM system.late_rows"); len(got) != 1 || got[0] != "bids|2024-01-01 00:00:03.000|2024-01-01 00:00:30.000" {
		t.Fatalf("late rows = %v", got)
	}
	bad := queryStrings(t, db, "SELECT table_name, source_partition, source_offset, record FROM system.bad_records ORDER BY source_offset")
	if len(bad) != 3 || bad[0] != `bids|1|1|{"auction": "x"}` || bad[1] != "bids|1|2|not json" || !strings.HasPrefix(bad[2], "bids|1|3|") {
		t.Fatalf("bad records = %v", bad)
	}
	if n := queryInt(t, db, "SELECT COUNT(*) FROM bids"); n != 7 {
		t.Fatalf("bids has %d rows, want 7", n)
	}

	// Restart: nothing is read twice, and new records continue the stream.
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = openT(t, path)
	produce(t, cl, "bids", 0, bid("2024-01-01 00:00:33", 7, 2))
	waitPosition(t, db, "bids", 11)
	mustExec(t, db, "FLUSH")
	if n := queryInt(t, db, "SELECT COUNT(*) FROM bids"); n != 8 {
		t.Fatalf("after restart bids has %d rows, want 8", n)
	}
	if got := sortedCopy(queryStrings(t, db, "SELECT * FROM per_window")); got[1] != "2024-01-01 00:00:30.000|4|1023" {
		t.Fatalf("per_window after restart = %v", got)
	}
	if n := queryInt(t, db, "SELECT COUNT(*) FROM system.bad_records"); n != 3 {
		t.Fatalf("bad records after restart: %d, want 3", n)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestKafkaSourceIdlePartition: with 'watermark.idle_timeout', a silent partition stops
// holding the watermark back, and rows that come to it afterwards behind the watermark are
// late, never lost. (With every partition idle the watermark holds: watermark unit tests.)
func TestKafkaSourceIdlePartition(t *testing.T) {
	addr, cl := newKafka(t, 2, "bids")
	db := openT(t, "")
	mustExec(t, db, kafkaTable(addr, ", 'watermark.idle_timeout' = '300ms'"))
	mustExec(t, db, bidsPerWindow)
	produce(t, cl, "bids", 0, bid("2024-01-01 00:00:01", 1, 10))
	// Partition 0 keeps producing (one record at 00:00:30 every 50 ms) while partition 1
	// stays silent: once it has been so for the idle timeout, the watermark follows partition 0.
	n := int64(1)
	deadline := time.Now().Add(20 * time.Second)
	for {
		produce(t, cl, "bids", 0, bid("2024-01-01 00:00:30", 1, 20))
		n++
		time.Sleep(50 * time.Millisecond)
		w := queryRows(t, db, "SELECT watermark FROM system.watermarks WHERE name = 'bids'")[0][0]
		if w != nil && rowString([]any{w}) == "2024-01-01 00:00:29.000" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("watermark with partition 1 idle = %v, want 2024-01-01 00:00:29", w)
		}
	}
	waitPosition(t, db, "bids", n)
	produce(t, cl, "bids", 1, bid("2024-01-01 00:00:05", 2, 1))
	waitPosition(t, db, "bids", n+1)
	mustExec(t, db, "FLUSH")
	want := fmt.Sprintf("2024-01-01 00:00:00.000|1|10;2024-01-01 00:00:30.000|%d|%d", n-1, 20*(n-1))
	if got := sortedCopy(queryStrings(t, db, "SELECT * FROM per_window")); strings.Join(got, ";") != want {
		t.Fatalf("per_window = %v, want %s", got, want)
	}
	if n := queryInt(t, db, "SELECT COUNT(*) FROM system.late_rows WHERE table_name = 'bids'"); n != 1 {
		t.Fatalf("late rows = %d, want 1", n)
	}
}

// TestKafkaSourceAlignment: with 'watermark.max_drift', a partition whose watermark runs
// further ahead of the table's is paused, not read (nor buffered), until the others catch up.
func TestKafkaSourceAlignment(t *testing.T) {
	db, cl := runAhead(t, "")
	time.Sleep(500 * time.Millisecond)
	if n := queryInt(t, db, "SELECT position FROM system.sources"); n != 3 {
		t.Fatalf("position with partition 0 paused = %d, want 3", n)
	}
	// Partition 1 catches up to 00:00:18 (W = 17 s): partition 0 resumes.
	produce(t, cl, "bids", 1, bid("2024-01-01 00:00:18", 2, 1))
	waitPosition(t, db, "bids", 6)
	if n := queryInt(t, db, "SELECT COUNT(*) FROM bids"); n != 6 {
		t.Fatalf("bids has %d rows, want 6", n)
	}
}

// runAhead makes partition 0 of a two-partition table with a 5 s max drift (and the extra
// options) run ahead: both partitions take a row at 00:00:01, then partition 0 one at
// 00:00:20 (its watermark 19 s > W 0 s + 5 s: it is paused) and two more it must not take.
func runAhead(t *testing.T, extra string) (*streamsql.DB, *kgo.Client) {
	addr, cl := newKafka(t, 2, "bids")
	db := openT(t, "")
	mustExec(t, db, kafkaTable(addr, ", 'watermark.max_drift' = '5 seconds'"+extra))
	produce(t, cl, "bids", 0, bid("2024-01-01 00:00:01", 1, 1))
	produce(t, cl, "bids", 1, bid("2024-01-01 00:00:01", 2, 1))
	waitPosition(t, db, "bids", 2)
	produce(t, cl, "bids", 0, bid("2024-01-01 00:00:20", 1, 1))
	waitPosition(t, db, "bids", 3)
	produce(t, cl, "bids", 0, bid("2024-01-01 00:00:21", 1, 1), bid("2024-01-01 00:00:22", 1, 1))
	return db, cl
}

// TestKafkaSourceAlignmentWithIdleness: a partition paused for running ahead is not idle (it
// has rows; they are just not taken), so when the partition that held it back goes quiet
// for the idle timeout, the watermark moves on and the paused one is read again.
func TestKafkaSourceAlignmentWithIdleness(t *testing.T) {
	db, _ := runAhead(t, ", 'watermark.idle_timeout' = '300ms'")
	// Partition 1 stays quiet: after 300 ms it is idle, partition 0 alone sets W and resumes.
	waitPosition(t, db, "bids", 5)
}

// TestKafkaSinkDuplicateRows: keyed by all columns (the default), a view with two equal rows
// has one record; deleting one of them keeps it, deleting both writes the tombstone.
func TestKafkaSinkDuplicateRows(t *testing.T) {
	addr, cl := newKafka(t, 1, "out")
	db := openT(t, "")
	mustExec(t, db, "CREATE TABLE o (id BIGINT PRIMARY KEY, c VARCHAR)")
	mustExec(t, db, "INSERT INTO o VALUES (1, 'ann'), (2, 'ann'), (3, 'bob')")
	mustExec(t, db, "CREATE MATERIALIZED VIEW v AS SELECT c FROM o")
	mustExec(t, db, "CREATE SINK s FROM v WITH (connector = 'kafka', topic = 'out', 'properties.bootstrap.servers' = '"+addr+"')")
	mustExec(t, db, "DELETE FROM o WHERE id = 2")
	mustExec(t, db, "FLUSH")
	if got := consumeUpserts(t, addr, "out", topicRecords(t, cl, "out", 1)); fmt.Sprint(got) != `map[{"c":"ann"}:{"c":"ann"} {"c":"bob"}:{"c":"bob"}]` {
		t.Fatalf("after deleting one of two equal rows the topic is %v", got)
	}
	mustExec(t, db, "DELETE FROM o WHERE id = 1")
	mustExec(t, db, "FLUSH")
	if got := consumeUpserts(t, addr, "out", topicRecords(t, cl, "out", 1)); fmt.Sprint(got) != `map[{"c":"bob"}:{"c":"bob"}]` {
		t.Fatalf("after deleting both the topic is %v", got)
	}
}

// consumeUpserts reads a topic from the start until it holds n records and returns each
// key's last value ("" for a tombstone's key, which is dropped).
func consumeUpserts(t *testing.T, addr, topic string, n int) map[string]string {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(addr, ",")...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out := map[string]string{}
	for seen := 0; seen < n; {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("topic %s: %d records, want %d", topic, seen, n)
		}
		fs.EachRecord(func(r *kgo.Record) {
			seen++
			if r.Value == nil {
				delete(out, string(r.Key))
			} else {
				out[string(r.Key)] = string(r.Value)
			}
		})
	}
	return out
}

// topicRecords counts the records of a topic of parts partitions.
func topicRecords(t *testing.T, cl *kgo.Client, topic string, parts int32) int {
	t.Helper()
	req := kmsg.NewPtrListOffsetsRequest()
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	for p := int32(0); p < parts; p++ {
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Partition, rp.Timestamp = p, -1
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(context.Background(), cl)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, tp := range resp.Topics {
		for _, p := range tp.Partitions {
			if p.ErrorCode == 0 {
				n += int(p.Offset)
			}
		}
	}
	return n
}

// TestKafkaSink: a sink writes a view's changelog as upserts by key; read back and
// compacted by key, the topic equals the view, through updates, deletes and a restart that
// replays the changes after the last checkpoint.
func TestKafkaSink(t *testing.T) {
	addr, cl := newKafka(t, 4, "totals", "big")
	path := filepath.Join(t.TempDir(), "db")
	db := openT(t, path, streamsql.WithCheckpointInterval(-1))
	mustExec(t, db, "CREATE TABLE orders (id BIGINT PRIMARY KEY, customer VARCHAR, amount DECIMAL(10,2))")
	mustExec(t, db, "INSERT INTO orders VALUES (1, 'ann', 10.50), (2, 'bob', 3.25)")
	mustExec(t, db, "CREATE MATERIALIZED VIEW totals AS SELECT customer, SUM(amount) AS total, COUNT(*) AS n FROM orders GROUP BY customer")
	if _, err := db.Exec("CREATE SINK s FROM totals WITH (connector = 'kafka', topic = 'nope', 'properties.bootstrap.servers' = '" + addr + "')"); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Fatalf("sink to a missing topic: %v", err)
	}
	if _, err := db.Exec("CREATE SINK s FROM totals WITH (connector = 'kafka', topic = 'totals', 'properties.bootstrap.servers' = '" + addr + "', key = 'nope')"); err == nil || !strings.Contains(err.Error(), "no column 'nope'") {
		t.Fatalf("sink with a bad key: %v", err)
	}
	mustExec(t, db, "CREATE SINK s FROM totals WITH (connector = 'kafka', topic = 'totals', 'properties.bootstrap.servers' = '"+addr+"', key = 'customer')")
	// Keyed by all columns (the default), every update moves the row to another key.
	mustExec(t, db, "CREATE MATERIALIZED VIEW big AS SELECT id, customer FROM orders WHERE amount > 5")
	mustExec(t, db, "CREATE SINK s2 FROM big WITH (connector = 'kafka', topic = 'big', 'properties.bootstrap.servers' = '"+addr+"')")
	mustExec(t, db, "INSERT INTO orders VALUES (3, 'ann', 1.00), (4, 'cat', 7.00)")
	mustExec(t, db, "CHECKPOINT")
	mustExec(t, db, "INSERT INTO orders VALUES (1, 'ann', 20.50)")
	mustExec(t, db, "DELETE FROM orders WHERE customer = 'bob'")
	mustExec(t, db, "FLUSH")
	want := map[string]string{
		`{"customer":"ann"}`: `{"customer":"ann","n":2,"total":"21.50"}`,
		`{"customer":"cat"}`: `{"customer":"cat","n":1,"total":"7.00"}`,
	}
	check := func(stage string) {
		t.Helper()
		got := consumeUpserts(t, addr, "totals", topicRecords(t, cl, "totals", 4))
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%s: topic = %v, want %v", stage, got, want)
		}
	}
	check("live")
	mustExec(t, db, "UPDATE orders SET customer = 'eve' WHERE id = 4")
	mustExec(t, db, "FLUSH")
	want[`{"customer":"cat"}`] = `{"customer":"eve","n":1,"total":"7.00"}`
	want[`{"customer":"eve"}`] = want[`{"customer":"cat"}`]
	delete(want, `{"customer":"cat"}`)
	check("after a key-changing update")
	big := consumeUpserts(t, addr, "big", topicRecords(t, cl, "big", 4))
	if fmt.Sprint(big) != `map[{"customer":"ann","id":1}:{"customer":"ann","id":1} {"customer":"eve","id":4}:{"customer":"eve","id":4}]` {
		t.Fatalf("topic big = %v", big)
	}
	before := topicRecords(t, cl, "totals", 4)
	// A crash after the checkpoint: the changes after it are replayed into the sink.
	mustExec(t, db, "INSERT INTO orders VALUES (5, 'dan', 1.00)")
	db.Close() // leaves a checkpoint; reopen, then compare again after more changes
	db = openT(t, path)
	mustExec(t, db, "DELETE FROM orders WHERE id = 5")
	mustExec(t, db, "INSERT INTO orders VALUES (6, 'cat', 1.00)")
	mustExec(t, db, "FLUSH")
	want[`{"customer":"cat"}`] = `{"customer":"cat","n":1,"total":"1.00"}`
	check("after restart")
	if after := topicRecords(t, cl, "totals", 4); after <= before {
		t.Fatalf("no records after the restart: %d then %d", before, after)
	}
	if got := queryStrings(t, db, "SHOW SINKS"); strings.Join(got, ",") != "s,s2" {
		t.Fatalf("SHOW SINKS = %v", got)
	}
	if _, err := db.Exec("DROP MATERIALIZED VIEW totals"); err == nil || !strings.Contains(err.Error(), "sink s reads it") {
		t.Fatalf("dropping a view a sink reads: %v", err)
	}
	mustExec(t, db, "DROP SINK s")
	mustExec(t, db, "DROP MATERIALIZED VIEW totals")
}

// TestKafkaSourceLatestOffset: 'latest-offset' skips what the topic held at CREATE TABLE,
// and that position is committed with the table: records produced while the database is
// closed, before it took any, are still read after a restart.
func TestKafkaSourceLatestOffset(t *testing.T) {
	addr, cl := newKafka(t, 2, "bids")
	produce(t, cl, "bids", 0, bid("2024-01-01 00:00:01", 1, 10))
	path := filepath.Join(t.TempDir(), "db")
	db := openT(t, path)
	mustExec(t, db, kafkaTable(addr, ", 'scan.startup.mode' = 'latest-offset'"))
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	produce(t, cl, "bids", 1, bid("2024-01-01 00:00:02", 2, 20))
	db = openT(t, path)
	produce(t, cl, "bids", 0, bid("2024-01-01 00:00:03", 3, 30))
	waitPosition(t, db, "bids", 3) // offsets: partition 0 at 2, partition 1 at 1
	if got := queryStrings(t, db, "SELECT auction FROM bids ORDER BY auction"); strings.Join(got, ",") != "2,3" {
		t.Fatalf("bids = %v, want auctions 2 and 3", got)
	}
}

// TestKafkaSourceWatermarkErrorIsBadRecord: a record on which the table's WATERMARK
// expression fails becomes a bad record; the other records of its poll are inserted and
// the source goes on.
func TestKafkaSourceWatermarkErrorIsBadRecord(t *testing.T) {
	addr, cl := newKafka(t, 1, "w")
	db := openT(t, "")
	mustExec(t, db, fmt.Sprintf(`CREATE TABLE w (v BIGINT, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND * (10 / v))
  WITH (connector = 'kafka', topic = 'w', 'properties.bootstrap.servers' = '%s')`, addr))
	produce(t, cl, "w", 0, `{"v": 1, "ts": "2024-01-01 00:00:10"}`, `{"v": 0, "ts": "2024-01-01 00:00:11"}`, `{"v": 2, "ts": "2024-01-01 00:00:12"}`)
	waitPosition(t, db, "w", 3)
	produce(t, cl, "w", 0, `{"v": 5, "ts": "2024-01-01 00:00:13"}`)
	waitPosition(t, db, "w", 4)
	if got := queryStrings(t, db, "SELECT v FROM w ORDER BY v"); strings.Join(got, ",") != "1,2,5" {
		t.Fatalf("w = %v, want 1,2,5", got)
	}
	bad := queryStrings(t, db, "SELECT source_offset, error FROM system.bad_records")
	if len(bad) != 1 || !strings.HasPrefix(bad[0], "1|WATERMARK expression: division by zero") {
		t.Fatalf("bad records = %v", bad)
	}
}

// TestKafkaSinkOuterJoinUpdate: a LEFT JOIN view has no unique key, so an update of the
// joined side is -D then +I; keyed by id, the sink writes it as one record (no tombstone
// first), and the compacted topic equals the view.
func TestKafkaSinkOuterJoinUpdate(t *testing.T) {
	addr, cl := newKafka(t, 1, "out")
	db := openT(t, "")
	outerJoinTables(t, db)
	mustExec(t, db, "CREATE MATERIALIZED VIEW j AS SELECT a.id, b.label FROM a LEFT JOIN b ON a.g = b.g")
	mustExec(t, db, "CREATE SINK s FROM j WITH (connector = 'kafka', topic = 'out', 'properties.bootstrap.servers' = '"+addr+"', key = 'id')")
	mustExec(t, db, "UPDATE b SET label = 'L2' WHERE g = 'd'")
	mustExec(t, db, "INSERT INTO b VALUES ('d', 'L3')")
	mustExec(t, db, "FLUSH")
	if n := topicRecords(t, cl, "out", 1); n != 4 { // the two rows, then one record per update
		t.Errorf("the topic holds %d records, want 4", n)
	}
	want := `map[{"id":0}:{"id":0,"label":"L3"} {"id":4}:{"id":4,"label":null}]`
	if got := consumeUpserts(t, addr, "out", topicRecords(t, cl, "out", 1)); fmt.Sprint(got) != want {
		t.Errorf("topic = %v, want %v", got, want)
	}
}

// TestKafkaSinkRowMoves: a row whose new version reaches the sink before its old version's
// retraction, from another operator (an outer join's row going from padded to matched, a row
// moving between UNION ALL branches), still ends as the view's row in the topic: the sink
// writes a delivery's changes together, one record per key.
func TestKafkaSinkRowMoves(t *testing.T) {
	addr, cl := newKafka(t, 1, "j", "u")
	db := openT(t, "")
	mustExec(t, db, "CREATE TABLE o (id BIGINT PRIMARY KEY, cust BIGINT, amt BIGINT)")
	mustExec(t, db, "CREATE TABLE cu (cust BIGINT PRIMARY KEY, name VARCHAR)")
	mustExec(t, db, "INSERT INTO cu VALUES (2, 'n1')")
	mustExec(t, db, "CREATE MATERIALIZED VIEW j AS SELECT o.id, o.amt, cu.name FROM o LEFT JOIN cu ON o.cust = cu.cust")
	mustExec(t, db, "CREATE MATERIALIZED VIEW u AS SELECT id, 'big' AS kind FROM o WHERE amt > 50 UNION ALL SELECT id, 'small' AS kind FROM o WHERE amt <= 50")
	for _, v := range []string{"j", "u"} {
		mustExec(t, db, "CREATE SINK s"+v+" FROM "+v+" WITH (connector = 'kafka', topic = '"+v+"', 'properties.bootstrap.servers' = '"+addr+"', key = 'id')")
	}
	mustExec(t, db, "INSERT INTO o VALUES (41, 1, 45)")
	mustExec(t, db, "INSERT INTO o VALUES (41, 2, 86)") // matched now, and big
	mustExec(t, db, "FLUSH")
	for v, want := range map[string]string{
		"j": `map[{"id":41}:{"amt":86,"id":41,"name":"n1"}]`,
		"u": `map[{"id":41}:{"id":41,"kind":"big"}]`,
	} {
		if got := consumeUpserts(t, addr, v, topicRecords(t, cl, v, 1)); fmt.Sprint(got) != want {
			t.Errorf("topic %s = %v, want %v", v, got, want)
		}
	}
}
