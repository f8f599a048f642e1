package bench

import (
	"fmt"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql"
)

// Join benchmarks (SPEC.md §3): an event-time temporal join (Nexmark q13-like) and an interval
// join, each fed through DB.Append of 64k-row Arrow batches into tables on disk (default
// durability) and checked against, and timed next to, a hand-written Go loop doing the same
// join over the same data in the same run. DuckDB's batch ASOF and range joins over the same
// data are in tests/oracle/join_bench_test.go.

const (
	// q13Keys is the side table's key count (Nexmark q13 joins on mod(auction, 10000)).
	q13Keys = 10_000
	// sideEvery: the side table takes one version per sideEvery ms of event time (a random
	// key), so each key changes about every 100 s.
	sideEvery = 10
	// sideLead: the side table's versions run this far ahead of the bids (the versioned side
	// leads, so probes never wait for it).
	sideLead = 2_000
	// bidDelay is the bids' watermark delay (ms).
	bidDelay = 1_000
	// ivKeys and ivHi: the interval join's key count and bound (b.ts in [a.ts, a.ts + 10 s]).
	ivKeys = 10_000
	ivHi   = 10_000
)

var (
	q13Bids = `CREATE TABLE bids (auction BIGINT, bidder BIGINT, price BIGINT, ts TIMESTAMP(3),
		WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)`
	q13Side = `CREATE TABLE side (k BIGINT, value BIGINT, ts TIMESTAMP(3),
		PRIMARY KEY (k) NOT ENFORCED, WATERMARK FOR ts AS ts)`
	q13View = `CREATE MATERIALIZED VIEW q13 AS
		SELECT b.auction, b.bidder, b.price, b.ts, s.value
		FROM bids AS b JOIN side FOR SYSTEM_TIME AS OF b.ts AS s ON b.auction = s.k`
	ivA    = `CREATE TABLE a (k BIGINT, v BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)`
	ivB    = `CREATE TABLE b (k BIGINT, v BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)`
	ivView = `CREATE MATERIALIZED VIEW ij AS
		SELECT a.k, a.v AS av, b.v AS bv, a.ts AS ats, b.ts AS bts
		FROM a JOIN b ON b.k = a.k AND b.ts BETWEEN a.ts AND a.ts + INTERVAL '10' SECOND`
)

// q13Data is the temporal join's input: bids 1 per ms from baseMillis, and side versions,
// in matching batches: side batch i holds the versions up to sideLead past bids batch i's end
// (batch 0 also a first version of every key, 1 ms before the first bid).
// The same generators and seeds are in tests/oracle/join_bench_test.go.
type q13Data struct {
	auction, bidder, price, bts [][]int64
	key, value, sts             [][]int64
}

func newQ13Data(bids int) *q13Data {
	d := &q13Data{}
	g, gs := splitmix(11), splitmix(12)
	next := int64(0) // next side version's offset from baseMillis (before the lead)
	for off := 0; off < bids; off += batchRows {
		n := min(batchRows, bids-off)
		a, br, p, ts := make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
		for i := range a {
			a[i], br[i], p[i], ts[i] = g.intn(q13Keys), g.intn(100_000), g.intn(10_000), baseMillis+int64(off+i)
		}
		var k, v, st []int64
		if off == 0 { // every key's first version, before the first bid
			for key := int64(0); key < q13Keys; key++ {
				k, v, st = append(k, key), append(v, gs.intn(1000)), append(st, baseMillis-1)
			}
		}
		for ; next < int64(off+n); next += sideEvery {
			k, v, st = append(k, gs.intn(q13Keys)), append(v, gs.intn(1000)), append(st, baseMillis+next+sideLead)
		}
		d.auction, d.bidder, d.price, d.bts = append(d.auction, a), append(d.bidder, br), append(d.price, p), append(d.bts, ts)
		d.key, d.value, d.sts = append(d.key, k), append(d.value, v), append(d.sts, st)
	}
	return d
}

func (d *q13Data) records() (bids, side []arrow.RecordBatch) {
	for i := range d.bts {
		bids = append(bids, record([]string{"auction", "bidder", "price", "ts"},
			int64Array(d.auction[i]), int64Array(d.bidder[i]), int64Array(d.price[i]), tsArray(d.bts[i])))
		side = append(side, record([]string{"k", "value", "ts"},
			int64Array(d.key[i]), int64Array(d.value[i]), tsArray(d.sts[i])))
	}
	return bids, side
}

func (d *q13Data) events() int {
	n := 0
	for i := range d.bts {
		n += len(d.bts[i]) + len(d.sts[i])
	}
	return n
}

func release(recs ...[]arrow.RecordBatch) {
	for _, rs := range recs {
		for _, r := range rs {
			r.Release()
		}
	}
}

// BenchmarkTemporalJoin is Nexmark q13-like: bids joined with a versioned side table
// FOR SYSTEM_TIME AS OF b.ts (event time), the side table's batch appended before each bids
// batch. events/s counts both streams' rows (bids + side versions) per second of Append with
// the view maintained; loop_events/s is the hand-written loop over the same batches.
// runJoinView runs b.N times: a fresh database with the ddl, then the records appended to
// the two tables in turn (batch k of the first, then batch k of the second), timed until the
// view has caught up (FLUSH). It returns the time taken and the integers check reads.
func runJoinView(b *testing.B, ddl []string, t1 string, recs1 []arrow.RecordBatch, t2 string, recs2 []arrow.RecordBatch, check string) (time.Duration, []int64) {
	var el time.Duration
	var got []int64
	for i := 0; i < b.N; i++ {
		db := openDB(b)
		for _, q := range ddl {
			mustExec(b, db, q)
		}
		t0 := time.Now()
		for k := range recs1 {
			appendAll(b, db, t1, recs1[k:k+1])
			appendAll(b, db, t2, recs2[k:k+1])
		}
		mustExec(b, db, "FLUSH") // views are maintained asynchronously: time them caught up
		el += time.Since(t0)
		got = queryInts(b, db, check)
		if err := db.Close(); err != nil {
			b.Fatal(err)
		}
	}
	return el, got
}

func BenchmarkTemporalJoin(b *testing.B) {
	bids := scaled(4_000_000)
	b.Run(fmt.Sprintf("keys=%s/bids=%s", human(q13Keys), human(bids)), func(b *testing.B) {
		d := newQ13Data(bids)
		bidRecs, sideRecs := d.records()
		defer release(bidRecs, sideRecs)
		engEl, got := runJoinView(b, []string{q13Bids, q13Side, q13View}, "side", sideRecs, "bids", bidRecs,
			"SELECT COUNT(*), SUM(price), SUM(value) FROM q13")
		var loopEl time.Duration
		var l *q13Loop
		for i := 0; i < b.N; i++ {
			t0 := time.Now()
			l = runQ13Loop(d)
			loopEl += time.Since(t0)
		}
		if want := []int64{l.rows, l.sumPrice, l.sumValue}; fmt.Sprint(got) != fmt.Sprint(want) {
			b.Fatalf("view q13: COUNT(*), SUM(price), SUM(value) = %v, the loop's = %v", got, want)
		}
		if l.rows < int64(bids)*99/100 {
			b.Fatalf("only %d of %d bids joined: the data is not what the benchmark means", l.rows, bids)
		}
		n := d.events() * b.N
		b.ReportMetric(rate(n, engEl), "events/s")
		b.ReportMetric(rate(n, loopEl), "loop_events/s")
		b.ReportMetric(loopEl.Seconds()/engEl.Seconds(), "x_of_loop")
		b.ReportMetric(float64(l.rows), "out_rows")
		b.ReportMetric(float64(l.sumValue), "sum_value")
		b.ReportMetric(float64(l.peakPending), "peak_pending")
	})
}

// q13Loop is the hand-written event-time temporal join: versions per key in time order,
// probes pending until min(bids W, side W) reaches them, then joined with the latest version
// at or before their time; late probes (time <= that minimum at arrival) dropped; per key,
// versions older than the newest one at or below the watermark freed.
type q13Loop struct {
	versions    map[int64][]q13Ver
	pending     []q13Probe
	bidW, sideW int64
	out         []q13Out // the rows emitted for the current batch, handed to a consumer
	peakPending int
	// emitted totals, for the check against the view.
	rows, sumPrice, sumValue int64
}

type q13Ver struct{ t, value int64 }

type q13Probe struct{ auction, bidder, price, t int64 }

type q13Out struct{ auction, bidder, price, t, value int64 }

const noWM = -1 << 63

func runQ13Loop(d *q13Data) *q13Loop {
	l := &q13Loop{versions: map[int64][]q13Ver{}, bidW: noWM, sideW: noWM}
	for i := range d.bts {
		l.side(d.key[i], d.value[i], d.sts[i])
		l.bids(d.auction[i], d.bidder[i], d.price[i], d.bts[i])
	}
	return l
}

func (l *q13Loop) side(ks, vs, ts []int64) {
	for i, k := range ks {
		vv := l.versions[k]
		j := len(vv)
		for j > 0 && vv[j-1].t > ts[i] {
			j--
		}
		if j > 0 && vv[j-1].t == ts[i] {
			vv[j-1].value = vs[i] // the later accepted wins
		} else {
			vv = append(vv, q13Ver{})
			copy(vv[j+1:], vv[j:])
			vv[j] = q13Ver{ts[i], vs[i]}
		}
		l.versions[k] = vv
		l.sideW = max(l.sideW, ts[i])
	}
	l.fire()
}

func (l *q13Loop) bids(as, brs, ps, ts []int64) {
	for i, t := range ts {
		late := l.bidW != noWM && l.sideW != noWM && t <= min(l.bidW, l.sideW)
		l.bidW = max(l.bidW, t-bidDelay) // the table takes every row
		if late {
			continue
		}
		l.pending = append(l.pending, q13Probe{as[i], brs[i], ps[i], t})
	}
	l.peakPending = max(l.peakPending, len(l.pending))
	l.fire()
}

func (l *q13Loop) fire() {
	if l.bidW == noWM || l.sideW == noWM {
		return
	}
	w := min(l.bidW, l.sideW)
	l.out = l.out[:0]
	keep := l.pending[:0]
	for _, p := range l.pending {
		if p.t > w {
			keep = append(keep, p)
			continue
		}
		vv := l.versions[p.auction]
		j := len(vv)
		for j > 0 && vv[j-1].t > p.t {
			j--
		}
		if j == 0 {
			continue // INNER: no version yet
		}
		v := vv[j-1].value
		l.out = append(l.out, q13Out{p.auction, p.bidder, p.price, p.t, v})
		l.rows, l.sumPrice, l.sumValue = l.rows+1, l.sumPrice+p.price, l.sumValue+v
	}
	l.pending = keep
	for k, vv := range l.versions {
		j := 0
		for j+1 < len(vv) && vv[j+1].t <= w {
			j++
		}
		if j > 0 {
			l.versions[k] = append(vv[:0], vv[j:]...)
		}
	}
}

// ivData is the interval join's input: streams a and b, each 1 row per ms from baseMillis
// over ivKeys keys, in matching 64k batches (a's batch i appended before b's).
type ivData struct {
	ak, av, ats, bk, bv, bts [][]int64
}

func newIVData(rows int) *ivData {
	d := &ivData{}
	ga, gb := splitmix(21), splitmix(22)
	for off := 0; off < rows; off += batchRows {
		n := min(batchRows, rows-off)
		ak, av, at := make([]int64, n), make([]int64, n), make([]int64, n)
		bk, bv, bt := make([]int64, n), make([]int64, n), make([]int64, n)
		for i := 0; i < n; i++ {
			ak[i], av[i], at[i] = ga.intn(ivKeys), ga.intn(1000), baseMillis+int64(off+i)
			bk[i], bv[i], bt[i] = gb.intn(ivKeys), gb.intn(1000), baseMillis+int64(off+i)
		}
		d.ak, d.av, d.ats = append(d.ak, ak), append(d.av, av), append(d.ats, at)
		d.bk, d.bv, d.bts = append(d.bk, bk), append(d.bv, bv), append(d.bts, bt)
	}
	return d
}

// BenchmarkIntervalJoin joins two appended streams, b.ts BETWEEN a.ts AND a.ts + 10 s on an
// equal key (10k keys, about one match per row). events/s counts both streams' rows.
func BenchmarkIntervalJoin(b *testing.B) {
	rows := scaled(2_000_000)
	b.Run(fmt.Sprintf("keys=%s/rows=%s+%s", human(ivKeys), human(rows), human(rows)), func(b *testing.B) {
		d := newIVData(rows)
		var aRecs, bRecs []arrow.RecordBatch
		for i := range d.ats {
			aRecs = append(aRecs, record(ingestNames, int64Array(d.ak[i]), int64Array(d.av[i]), tsArray(d.ats[i])))
			bRecs = append(bRecs, record(ingestNames, int64Array(d.bk[i]), int64Array(d.bv[i]), tsArray(d.bts[i])))
		}
		defer release(aRecs, bRecs)
		engEl, got := runJoinView(b, []string{ivA, ivB, ivView}, "a", aRecs, "b", bRecs,
			"SELECT COUNT(*), SUM(av), SUM(bv) FROM ij")
		var loopEl time.Duration
		var l *ivLoop
		for i := 0; i < b.N; i++ {
			t0 := time.Now()
			l = runIVLoop(d)
			loopEl += time.Since(t0)
		}
		if want := []int64{l.rows, l.sumA, l.sumB}; fmt.Sprint(got) != fmt.Sprint(want) {
			b.Fatalf("view ij: COUNT(*), SUM(av), SUM(bv) = %v, the loop's = %v", got, want)
		}
		if l.rows < int64(rows)/2 {
			b.Fatalf("only %d matches for %d rows a side: the data is not what the benchmark means", l.rows, rows)
		}
		n := 2 * rows * b.N
		b.ReportMetric(rate(n, engEl), "events/s")
		b.ReportMetric(rate(n, loopEl), "loop_events/s")
		b.ReportMetric(loopEl.Seconds()/engEl.Seconds(), "x_of_loop")
		b.ReportMetric(float64(l.rows), "out_rows")
		b.ReportMetric(float64(l.sumB), "sum_bv")
		b.ReportMetric(float64(l.peakKept), "peak_kept_rows")
	})
}

// ivLoop is the hand-written interval join: per side, the kept rows by key; an arriving row
// joins the other side's kept rows of its key within the bounds and is kept itself unless late
// (time <= min(its side's W before it, the other side's W)); after each batch, rows no future
// row can match (a: W >= ts + 10 s; b: W >= ts) are freed.
type ivLoop struct {
	kept     [2]map[int64][]ivRow
	w        [2]int64
	n        [2]int
	out      []ivOut
	peakKept int
	// emitted totals, for the check against the view.
	rows, sumA, sumB int64
}

type ivRow struct{ t, v int64 }

type ivOut struct{ k, av, bv, at, bt int64 }

func runIVLoop(d *ivData) *ivLoop {
	l := &ivLoop{kept: [2]map[int64][]ivRow{{}, {}}, w: [2]int64{noWM, noWM}}
	for i := range d.ats {
		l.batch(0, d.ak[i], d.av[i], d.ats[i])
		l.batch(1, d.bk[i], d.bv[i], d.bts[i])
	}
	return l
}

func (l *ivLoop) batch(side int, ks, vs, ts []int64) {
	other := 1 - side
	l.out = l.out[:0]
	for i, k := range ks {
		t, v := ts[i], vs[i]
		late := l.w[side] != noWM && l.w[other] != noWM && t <= min(l.w[side], l.w[other])
		l.w[side] = max(l.w[side], t-bidDelay) // the table takes every row
		if late {
			continue
		}
		for _, o := range l.kept[other][k] {
			var d int64 // b.ts - a.ts
			if side == 0 {
				d = o.t - t
			} else {
				d = t - o.t
			}
			if d < 0 || d > ivHi {
				continue
			}
			r := ivOut{k: k, av: v, bv: o.v, at: t, bt: o.t}
			if side == 1 {
				r = ivOut{k: k, av: o.v, bv: v, at: o.t, bt: t}
			}
			l.out = append(l.out, r)
			l.rows, l.sumA, l.sumB = l.rows+1, l.sumA+r.av, l.sumB+r.bv
		}
		l.kept[side][k] = append(l.kept[side][k], ivRow{t, v})
		l.n[side]++
	}
	l.peakKept = max(l.peakKept, l.n[0]+l.n[1])
	if l.w[0] == noWM || l.w[1] == noWM {
		return
	}
	w := min(l.w[0], l.w[1])
	for s, hi := range [2]int64{ivHi, 0} {
		for k, rs := range l.kept[s] {
			keep := rs[:0]
			for _, r := range rs {
				if r.t+hi > w {
					keep = append(keep, r)
				}
			}
			l.n[s] -= len(rs) - len(keep)
			if len(keep) == 0 {
				delete(l.kept[s], k)
			} else {
				l.kept[s][k] = keep
			}
		}
	}
}

// BenchmarkBatchJoinAggregate joins a 2M-row fact table f(id, dk, v, s VARCHAR) with a
// 10k-row dimension d(dk, grp, name) and aggregates (`SELECT d.grp, SUM(f.v), COUNT(*) FROM f
// JOIN d ON f.dk = d.dk GROUP BY d.grp`), a bounded query: rows/s counts f's rows.
func BenchmarkBatchJoinAggregate(b *testing.B) {
	rows := scaled(2_000_000)
	db := openDB(b, streamsql.WithSync(false))
	defer db.Close()
	mustExec(b, db, "CREATE TABLE f (id BIGINT, dk BIGINT, v BIGINT, s VARCHAR)")
	mustExec(b, db, "CREATE TABLE d (dk BIGINT, grp BIGINT, name VARCHAR)")
	g := splitmix(9)
	for off := 0; off < rows; off += batchRows {
		n := min(batchRows, rows-off)
		id, dk, v := make([]int64, n), make([]int64, n), make([]int64, n)
		sb := array.NewStringBuilder(memory.DefaultAllocator)
		for i := range id {
			id[i], dk[i], v[i] = int64(off+i), g.intn(10000), g.intn(1000)
			sb.Append(fmt.Sprintf("s-%d", v[i]))
		}
		rec := record([]string{"id", "dk", "v", "s"}, int64Array(id), int64Array(dk), int64Array(v), sb.NewArray())
		appendAll(b, db, "f", []arrow.RecordBatch{rec})
	}
	var vals string
	for k := 0; k < 10000; k++ {
		if k > 0 {
			vals += ","
		}
		vals += fmt.Sprintf("(%d, %d, 'n%d')", k, k%100, k)
	}
	mustExec(b, db, "INSERT INTO d VALUES "+vals)
	var el time.Duration
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		res := queryInts(b, db, "SELECT COUNT(*), SUM(n) FROM (SELECT d.grp, SUM(f.v) AS s, COUNT(*) AS n FROM f JOIN d ON f.dk = d.dk GROUP BY d.grp)")
		el += time.Since(t0)
		if res[1] != int64(rows) {
			b.Fatal(res)
		}
	}
	b.ReportMetric(rate(rows*b.N, el), "rows/s")
}
