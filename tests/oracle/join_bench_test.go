package oracle

// DuckDB's figures for ../../bench/join_test.go: the same data (the same generators, seeds and
// sizes, loaded with DuckDB's Appender, load not timed), joined in one batch query on one
// thread. DuckDB sees both finished tables at once: no watermarks, no pending probes, no
// per-batch emission. rows/s counts the input rows of both tables per second of query.

import (
	"database/sql/driver"
	"fmt"
	"testing"
	"time"
)

// The generator parameters of ../../bench/join_test.go.
const (
	q13Keys   = 10_000
	sideEvery = 10
	sideLead  = 2_000
	bidDelay  = 1_000
	ivKeys    = 10_000
)

// BenchmarkDuckDBAsofJoin is ../../bench's BenchmarkTemporalJoin (Nexmark q13-like) as a
// DuckDB ASOF JOIN: each bid with the latest side version of its key at or before its time,
// over the bids the engine has emitted at the end (ts <= the final join watermark, the last
// bid's time - 1 s; the side table leads), so out_rows equals the engine benchmark's.
func BenchmarkDuckDBAsofJoin(b *testing.B) {
	bids := benchScaled(4_000_000)
	db, conn := openBenchDuckDB(b)
	defer db.Close()
	defer conn.Close()
	g, gs := splitmix(11), splitmix(12)
	appendRows(b, conn, "CREATE TABLE bids (auction BIGINT, bidder BIGINT, price BIGINT, ts TIMESTAMP)", "bids", bids,
		func(i int) []driver.Value {
			a, br, p := g.intn(q13Keys), g.intn(100_000), g.intn(10_000)
			return []driver.Value{a, br, p, time.UnixMilli(baseMillis + int64(i)).UTC()}
		})
	nside := q13Keys + (bids+sideEvery-1)/sideEvery
	appendRows(b, conn, "CREATE TABLE side (k BIGINT, value BIGINT, ts TIMESTAMP)", "side", nside,
		func(i int) []driver.Value {
			if i < q13Keys { // every key's first version, 1 ms before the first bid
				return []driver.Value{int64(i), gs.intn(1000), time.UnixMilli(baseMillis - 1).UTC()}
			}
			k, v := gs.intn(q13Keys), gs.intn(1000)
			return []driver.Value{k, v, time.UnixMilli(baseMillis + int64(i-q13Keys)*sideEvery + sideLead).UTC()}
		})
	finalW := time.UnixMilli(baseMillis + int64(bids-1) - bidDelay).UTC().Format("2006-01-02 15:04:05.000")
	b.Run(fmt.Sprintf("keys=%s/bids=%s/threads=1", benchHuman(q13Keys), benchHuman(bids)), func(b *testing.B) {
		q := `SELECT COUNT(*), SUM(b.price), SUM(s.value)
			FROM bids b ASOF JOIN side s ON b.auction = s.k AND b.ts >= s.ts
			WHERE b.ts <= TIMESTAMP '` + finalW + `'`
		el, _, totals := timeQuery(b, conn, q, 3)
		if want := int64(bids - bidDelay); totals[0] != want {
			b.Fatalf("ASOF JOIN gave %d rows, want %d (every bid up to the final watermark)", totals[0], want)
		}
		b.ReportMetric(float64(totals[0]), "out_rows")
		b.ReportMetric(float64(totals[2]), "sum_value") // to compare with the engine benchmark's
		b.ReportMetric(float64((bids+nside)*b.N)/el.Seconds(), "rows/s")
	})
}

// BenchmarkDuckDBIntervalJoin is ../../bench's BenchmarkIntervalJoin as a DuckDB range join:
// b.ts BETWEEN a.ts AND a.ts + 10 s on an equal key.
func BenchmarkDuckDBIntervalJoin(b *testing.B) {
	rows := benchScaled(2_000_000)
	db, conn := openBenchDuckDB(b)
	defer db.Close()
	defer conn.Close()
	for _, side := range []struct {
		name string
		seed splitmix
	}{{"a", 21}, {"b", 22}} {
		g := side.seed
		appendRows(b, conn, "CREATE TABLE "+side.name+" (k BIGINT, v BIGINT, ts TIMESTAMP)", side.name, rows,
			func(i int) []driver.Value {
				k, v := g.intn(ivKeys), g.intn(1000)
				return []driver.Value{k, v, time.UnixMilli(baseMillis + int64(i)).UTC()}
			})
	}
	b.Run(fmt.Sprintf("keys=%s/rows=%s+%s/threads=1", benchHuman(ivKeys), benchHuman(rows), benchHuman(rows)), func(b *testing.B) {
		q := `SELECT COUNT(*), SUM(a.v), SUM(b.v)
			FROM a JOIN b ON b.k = a.k AND b.ts BETWEEN a.ts AND a.ts + INTERVAL 10 SECOND`
		el, _, totals := timeQuery(b, conn, q, 3)
		if totals[0] < int64(rows)/2 {
			b.Fatalf("%d matches for %d rows a side: the data is not what the engine benchmark joins", totals[0], rows)
		}
		b.ReportMetric(float64(totals[0]), "out_rows")
		b.ReportMetric(float64(totals[2]), "sum_bv") // to compare with the engine benchmark's
		b.ReportMetric(float64(2*rows*b.N)/el.Seconds(), "rows/s")
	})
}
