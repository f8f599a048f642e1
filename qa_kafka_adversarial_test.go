package streamsql_test

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/connector/kafka"
	"github.com/streamsql/streamsql/types"
)

// Adversarial QA of the Kafka connector: records and options a user can throw at it.

// TestQAKafkaAbortedTransaction: records of an aborted transaction are not the stream (a
// consumer reads committed, as Flink's Kafka source does); the committed ones are read.
func TestQAKafkaAbortedTransaction(t *testing.T) {
	addr, cl := newKafka(t, 1, "bids")
	db := openT(t, "")
	mustExec(t, db, kafkaTable(addr, ""))
	produceTransactions(t, addr, "bids", []int{666, 7}, []kgo.TransactionEndTry{kgo.TryAbort, kgo.TryCommit})
	produce(t, cl, "bids", 0, bid("2024-01-01 00:00:02", 8, 1)) // offsets: 666, abort, 7, commit, 8
	waitPosition(t, db, "bids", 5)
	if got := queryStrings(t, db, "SELECT auction FROM bids ORDER BY auction"); strings.Join(got, ",") != "7,8" {
		t.Fatalf("bids = %v, want 7,8 (the aborted transaction's record is not read)", got)
	}
}

// TestQAKafkaWatermarkOptionBounds: 'watermark.max_drift' and 'watermark.idle_timeout' are
// bounded (2^40 ms, as connectors' millisecond options): a drift near 2^63 ms overflowed
// W + drift and paused every partition for good (the source stalled, 'running'), and an
// idle timeout past 2^63 ns wrapped to a fraction of a millisecond.
func TestQAKafkaWatermarkOptionBounds(t *testing.T) {
	addr, _ := newKafka(t, 2, "bids")
	db := openT(t, "")
	for _, o := range []string{"'watermark.max_drift' = '9223372036854775807'", "'watermark.idle_timeout' = '18446744073710'", "'watermark.max_drift' = '106751991 days'"} {
		_, err := db.Exec(kafkaTable(addr, ", "+o))
		if err == nil || !strings.Contains(err.Error(), "more than 2^40 milliseconds") {
			t.Fatalf("%s: %v", o, err)
		}
	}
	mustExec(t, db, kafkaTable(addr, ", 'watermark.max_drift' = '1099511627776', 'watermark.idle_timeout' = '12725 days'"))
}

// TestQAKafkaEmptyRecordReasons: a tombstone (null value) and an empty or blank value are
// bad records whose error says so, not encoding/json's bare "EOF"; the source goes on.
func TestQAKafkaEmptyRecordReasons(t *testing.T) {
	addr, cl := newKafka(t, 1, "bids")
	db := openT(t, "")
	mustExec(t, db, kafkaTable(addr, ""))
	rs := []*kgo.Record{
		{Topic: "bids", Key: []byte(`{"auction":1}`)},
		{Topic: "bids", Value: []byte{}},
		{Topic: "bids", Value: []byte(" \n")},
		{Topic: "bids", Value: []byte(bid("2024-01-01 00:00:01", 2, 1))},
	}
	if err := cl.ProduceSync(context.Background(), rs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	waitPosition(t, db, "bids", 4)
	want := []string{
		"0|not a JSON object: a tombstone (a record with a null value)",
		"1|not a JSON object: the record is empty",
		"2|not a JSON object: the record is empty",
	}
	if got := queryStrings(t, db, "SELECT source_offset, error FROM system.bad_records ORDER BY source_offset"); strings.Join(got, ";") != strings.Join(want, ";") {
		t.Fatalf("bad records = %v, want %v", got, want)
	}
	if n := queryInt(t, db, "SELECT COUNT(*) FROM bids"); n != 1 {
		t.Fatalf("bids has %d rows, want 1", n)
	}
}

// TestQAKafkaNoBrokers: a broker list of separators alone is refused naming the option, not
// with franz-go's "config erroneously has no seed brokers"; the name stays free.
func TestQAKafkaNoBrokers(t *testing.T) {
	addr, _ := newKafka(t, 1, "bids")
	db := openT(t, "")
	for _, create := range []string{
		"CREATE TABLE bids (a BIGINT) WITH (connector = 'kafka', topic = 'bids', 'properties.bootstrap.servers' = ' , ')",
		"CREATE MATERIALIZED VIEW v AS SELECT 1 AS a; CREATE SINK s FROM v WITH (connector = 'kafka', topic = 'bids', 'properties.bootstrap.servers' = ',')",
	} {
		_, err := db.Exec(create)
		if err == nil || !strings.Contains(err.Error(), "option 'properties.bootstrap.servers' = ',' names no broker") {
			t.Fatalf("%s: %v", create, err)
		}
	}
	mustExec(t, db, kafkaTable(addr, ""))
	mustExec(t, db, "CREATE SINK s FROM v WITH (connector = 'kafka', topic = 'bids', 'properties.bootstrap.servers' = '"+addr+"')")
}

// slowProxy forwards TCP connections to upstream, delaying every chunk by d.
func slowProxy(t *testing.T, upstream string, d time.Duration) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	pipe := func(dst, src net.Conn) {
		defer dst.Close()
		buf := make([]byte, 64<<10)
		for {
			n, err := src.Read(buf)
			if n > 0 {
				time.Sleep(d)
				if _, err := dst.Write(buf[:n]); err != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			u, err := net.Dial("tcp", upstream)
			if err != nil {
				c.Close()
				continue
			}
			go pipe(u, c)
			go pipe(c, u)
		}
	}()
	return ln.Addr().String()
}

// TestQAKafkaSlowBrokerRestart: after a restart a Kafka source starts by looking its topic
// up; with a seed broker 120 ms away (a round trip) that took longer than the feeder's
// 100 ms poll, so every attempt was cut short and the source never read again, while
// system.sources said 'running'.
func TestQAKafkaSlowBrokerRestart(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "bids"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	real := c.ListenAddrs()[0]
	cl, err := kgo.NewClient(kgo.SeedBrokers(real), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	path := filepath.Join(t.TempDir(), "db")
	db := openT(t, path)
	mustExec(t, db, kafkaTable(slowProxy(t, real, 60*time.Millisecond), ""))
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = openT(t, path)
	produce(t, cl, "bids", 0, bid("2024-01-01 00:00:01", 1, 1))
	deadline := time.Now().Add(4 * time.Second)
	for queryInt(t, db, "SELECT position FROM system.sources") < 1 {
		if time.Now().After(deadline) {
			t.Fatalf("after a restart the source took nothing in 4 s: %v", queryStrings(t, db, "SELECT status FROM system.sources"))
		}
		time.Sleep(20 * time.Millisecond)
	}

}

// TestQAKafkaRestartKeepsPauses: the feeder restarts a source's fetching after a partition
// error (Restart) and then sets the pauses alignment wants. franz-go keeps a paused
// partition paused across removing and re-adding it, but Restart forgot its pauses, so a
// partition paused then and to resume now was never resumed: it stopped for good.
func TestQAKafkaRestartKeepsPauses(t *testing.T) {
	addr, cl := newKafka(t, 2, "bids")
	src, err := kafka.OpenSource(map[string]string{"connector": "kafka", "topic": "bids", "properties.bootstrap.servers": addr},
		[]catalog.Column{{Name: "auction", Type: types.T{Kind: types.BigInt}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := src.Check(ctx); err != nil {
		t.Fatal(err)
	}
	src.SetPaused(map[int32]bool{0: true})
	src.Restart()
	src.SetPaused(map[int32]bool{})
	produce(t, cl, "bids", 0, `{"auction": 1}`)
	got := 0
	for got < 1 && ctx.Err() == nil {
		pctx, c := context.WithTimeout(ctx, 100*time.Millisecond)
		ch, err := src.Poll(pctx, 10)
		c()
		if err != nil {
			t.Fatal(err)
		}
		if ch.Rows != nil {
			got += ch.Rows.N
		}
	}
	if got != 1 {
		t.Fatalf("partition 0, resumed after a Restart while paused, gave %d records in 5 s, want 1", got)
	}
}

// TestKafkaTransactionMarkersCounted: a partition that ends with a transaction's commit
// marker is read to its end — the position passes the marker and the lag is 0 (the marker
// holds an offset but no record; the position stopped before it, a lag of 1 for good).
func TestKafkaTransactionMarkersCounted(t *testing.T) {
	addr, _ := newKafka(t, 1, "bids")
	db := openT(t, "")
	mustExec(t, db, kafkaTable(addr, ""))
	produceTransactions(t, addr, "bids", []int{0, 1, 2}, []kgo.TransactionEndTry{kgo.TryCommit, kgo.TryAbort, kgo.TryCommit})
	waitPosition(t, db, "bids", 6) // offsets: 0, commit, 1 (aborted), abort, 2, commit
	if got := queryStrings(t, db, "SELECT auction FROM bids ORDER BY auction"); strings.Join(got, ",") != "0,2" {
		t.Fatalf("bids = %v, want 0,2", got)
	}
	if got := queryStrings(t, db, "SELECT lag FROM system.sources WHERE table_name = 'bids'"); strings.Join(got, ",") != "0" {
		t.Fatalf("lag = %v, want 0", got)
	}
}

// produceTransactions writes to topic one transaction per auction, a bid each, ended as ends
// says (committed or aborted).
func produceTransactions(t *testing.T, addr, topic string, auctions []int, ends []kgo.TransactionEndTry) {
	t.Helper()
	tx, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(addr, ",")...), kgo.TransactionalID("qa"), kgo.DefaultProduceTopic(topic))
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Close()
	ctx := context.Background()
	for i, auction := range auctions {
		if err := tx.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		if err := tx.ProduceSync(ctx, &kgo.Record{Value: []byte(bid("2024-01-01 00:00:01", auction, 1))}).FirstErr(); err != nil {
			t.Fatal(err)
		}
		if err := tx.EndTransaction(ctx, ends[i]); err != nil {
			t.Fatal(err)
		}
	}
}
