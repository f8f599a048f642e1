package oracle

// A differential test of streaming join views against DuckDB batch SQL (SPEC.md §3).
//
// For each fixed seed, random rows go through the Go API into
//
//	orders(id BIGINT, cur VARCHAR, amount BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL 'd' SECOND)
//	rates(cur VARCHAR, rate DOUBLE, ts TIMESTAMP(3), PRIMARY KEY (cur) NOT ENFORCED, WATERMARK FOR ts AS ts)
//	shipments(order_id BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL 'ds' SECOND)
//
// as interleaved single-table INSERTs of random sizes (the three streams merged by a simulated
// arrival clock, each with bounded disorder), with four views created up front: temporal INNER
// and LEFT joins of orders with rates (FOR SYSTEM_TIME AS OF o.ts), and interval INNER and LEFT
// joins of orders with shipments (s.ts BETWEEN o.ts AND o.ts + INTERVAL '5' SECOND). After
// FLUSH each view is compared, as a multiset of rows, with DuckDB's batch answer over the rows
// that were not late, and system.late_rows with a Go model of SPEC's lateness rule.
//
// The SPEC.md §3 rules this test relies on:
//
//   - J1 A table's watermark advances row by row in acceptance order (the order of the INSERT
//     statements, then of their VALUES) and never goes back; a join's watermark is the minimum
//     of its inputs' watermarks (none until both tables have one).
//   - J2 Temporal join: a probe (orders) row is late when its time <= min(the orders watermark
//     before the row, the rates watermark) at arrival; late probes are never applied and go to
//     system.late_rows (table_name orders, watermark = that minimum). Versions are never late.
//   - J3 A non-late probe joins the version of its key with the largest version time <= its
//     time, and is emitted once the join's watermark is >= its time: so after the last insert the
//     views hold exactly the non-late probes with ts <= min(final orders W, final rates W). INNER
//     drops unmatched probes (no version yet, unknown or NULL cur); LEFT pads them with NULL.
//     That is DuckDB's `ASOF [LEFT] JOIN rates r ON o.cur = r.cur AND o.ts >= r.ts`.
//   - J4 A version that arrives after a probe it would have matched was emitted does not change
//     that probe (as in Flink). DuckDB cannot see arrival order, so the generator keeps this case
//     out: a rates row is inserted only if its time is > the temporal join's watermark when it
//     arrives (then no probe at or after its time has been emitted yet, nor can one have been
//     late-dropped in its favour); rows that would break this are dropped from the stream before
//     anything is inserted (counted as rates_dropped). Rates still arrive out of time order
//     (below the rates watermark) and overtake the orders stream, so the versioned side leads.
//     Each (cur, ts) occurs at most once, so "the later accepted wins" never decides a result.
//   - J5 Interval join: a row of either side is late when its time <= min(its own table's
//     watermark before the row, the other table's watermark) at arrival; matches are emitted as
//     soon as both rows exist, so the INNER view is the range join of the non-late rows (bounds
//     inclusive); LEFT pads a non-late order with no match once the join's watermark reaches
//     o.ts + 5 s (after the last insert: o.ts + 5000 <= min(final orders W, final shipments W)).
//   - J6 late_rows: one row per (late row, view), event_time = the row's time, watermark = the
//     join's watermark at arrival, row_json a JSON object of the row's columns.
//   - J7 FLUSH returns when every accepted row has reached every view, watermarks included.
//   - J8 A query run ad hoc (a bounded query) judges no row late: a temporal join's probes are
//     all the stored orders, each joining the version of its key with the largest time <= its
//     own among every version stored (DuckDB's ASOF join of all the rows).
//
// A failure names the seed (the subtest is seed=N): replay one seed with
//
//	go test -run 'TestJoinViewsMatchDuckDB/seed=N$' -v

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql"
)

const (
	ivHi     = 5000 // interval join upper bound: s.ts <= o.ts + 5 s (lower bound 0)
	noCur    = ""   // a NULL cur
	joinBase = 1704067200000
)

var joinViews = []struct{ name, sql string }{
	{"tj", `CREATE MATERIALIZED VIEW tj AS
SELECT o.id, o.cur, o.amount, o.ts, r.rate, r.ts AS rts, o.amount * r.rate AS total
FROM orders AS o JOIN rates FOR SYSTEM_TIME AS OF o.ts AS r ON o.cur = r.cur`},
	{"tj_left", `CREATE MATERIALIZED VIEW tj_left AS
SELECT o.id, o.cur, o.amount, o.ts, r.rate, r.ts AS rts, o.amount * r.rate AS total
FROM orders AS o LEFT JOIN rates FOR SYSTEM_TIME AS OF o.ts AS r ON o.cur = r.cur`},
	{"ij", `CREATE MATERIALIZED VIEW ij AS
SELECT o.id, o.ts, s.order_id, s.ts AS sts
FROM orders AS o JOIN shipments AS s ON s.order_id = o.id AND s.ts BETWEEN o.ts AND o.ts + INTERVAL '5' SECOND`},
	{"ij_left", `CREATE MATERIALIZED VIEW ij_left AS
SELECT o.id, o.ts, s.order_id, s.ts AS sts
FROM orders AS o LEFT JOIN shipments AS s ON s.order_id = o.id AND s.ts BETWEEN o.ts AND o.ts + INTERVAL '5' SECOND`},
}

// joinParams is one seed's workload shape; every field derives from the seed.
type joinParams struct {
	seed        int64
	orders      int   // order rows
	curs        int   // currencies C0..C{curs-1}; orders also use an unknown one and NULL
	d, ds       int64 // orders / shipments watermark delay, whole seconds
	disorder    int64 // D, ms: order ts = clock - rand(0..D)
	step        int64 // ms of clock between orders
	gran        int64 // times are rounded down to a multiple of gran ms
	rateEvery   int   // one rates row per rateEvery orders (on average)
	rateLead    int64 // rates ts = clock + rand(0..rateLead) - rand(0..rateDisorder)
	rateDis     int64
	shipPct     int   // % of orders that get shipments
	shipDelay   int64 // shipment arrival = its ts + rand(0..shipDelay)
	maxInsert   int   // INSERT sizes 1..maxInsert
	sentinel    bool  // end with rows that put the final join watermarks exactly on boundaries
	baseOffsetM int64
}

func (p joinParams) String() string {
	return fmt.Sprintf("seed=%d orders=%d curs=%d d=%ds ds=%ds D=%dms step=%dms gran=%dms rateEvery=%d lead=%dms rateD=%dms ship=%d%% shipDelay=%dms maxInsert=%d sentinel=%t",
		p.seed, p.orders, p.curs, p.d, p.ds, p.disorder, p.step, p.gran, p.rateEvery, p.rateLead, p.rateDis, p.shipPct, p.shipDelay, p.maxInsert, p.sentinel)
}

func joinParamsFor(seed int64) joinParams {
	r := rand.New(rand.NewSource(seed*104729 + 7))
	p := joinParams{seed: seed}
	p.orders = 150 + r.Intn(350)
	p.curs = 1 + r.Intn(5)
	p.d = 1 + r.Int63n(2)
	p.ds = r.Int63n(3)
	dm := p.d * 1000
	// Disorder below, at and above d: above d some probes are late.
	p.disorder = []int64{0, dm / 2, dm, dm + 1, 2 * dm, 4 * dm}[r.Intn(6)]
	p.step = []int64{50, 100, 250, 500}[r.Intn(4)]
	p.gran = []int64{1, 1, 250, 1000}[r.Intn(4)]
	p.rateEvery = 1 + r.Intn(6)
	p.rateLead = []int64{0, 1000, 3000, 8000}[r.Intn(4)]
	p.rateDis = []int64{0, 500, 2000, 6000}[r.Intn(4)]
	p.shipPct = []int{30, 60, 90}[r.Intn(3)]
	p.shipDelay = []int64{0, 1000, 4000, 9000}[r.Intn(4)]
	p.maxInsert = []int{1, 5, 20, 40}[r.Intn(4)]
	p.baseOffsetM = r.Int63n(10000)
	p.sentinel = r.Intn(2) == 0
	return p
}

var joinSeeds = func() []int64 {
	var s []int64
	for i := int64(1); i <= 30; i++ {
		s = append(s, i)
	}
	return s
}()

// jrow is one generated row of any of the three tables.
type jrow struct {
	table   string // orders, rates, shipments
	clock   int64  // simulated arrival time (merge key)
	seq     int    // generation order, a tie-break
	id      int64  // orders: id; shipments: order_id
	cur     string // orders, rates ("" = NULL for orders)
	amount  int64
	rate    float64
	ts      int64
	dropped bool // rates: left out (J4)
	// Model results (orders: t = temporal, i = interval; shipments use i).
	lateT, lateI bool
	wmT, wmI     int64 // the join's watermark at arrival
}

func roundDown(t, g int64) int64 { return floorDiv(t, g) * g }

func genJoinRows(p joinParams) []*jrow {
	r := rand.New(rand.NewSource(p.seed))
	var rows []*jrow
	add := func(x *jrow) { x.seq = len(rows); rows = append(rows, x) }
	clock := int64(joinBase) + p.baseOffsetM
	cur := func() string { return fmt.Sprintf("C%d", r.Intn(p.curs)) }
	shipped := map[int64]bool{}
	var lastUnshipped *jrow
	maxTs := int64(noWatermark)
	// A few versions before the first order, so that early probes find one (or, for the
	// currencies without, do not).
	for i := 0; i < p.curs; i++ {
		if r.Intn(2) == 0 {
			add(&jrow{table: "rates", clock: clock - 5000, cur: fmt.Sprintf("C%d", i), rate: float64(1+r.Intn(40)) / 4,
				ts: roundDown(clock-5000+r.Int63n(4000), p.gran)})
		}
	}
	for i := 0; i < p.orders; i++ {
		clock += p.step
		o := &jrow{table: "orders", clock: clock, id: int64(i + 1), amount: int64(1 + r.Intn(100)),
			ts: roundDown(clock-r.Int63n(p.disorder+1), p.gran)}
		switch x := r.Intn(100); {
		case x < 3:
			o.cur = noCur
		case x < 7:
			o.cur = "XX" // no rates ever
		default:
			o.cur = cur()
		}
		add(o)
		if r.Intn(p.rateEvery) == 0 {
			add(&jrow{table: "rates", clock: clock, cur: cur(), rate: float64(1+r.Intn(40)) / 4,
				ts: roundDown(clock+r.Int63n(p.rateLead+1)-r.Int63n(p.rateDis+1), p.gran)})
		}
		if r.Intn(100) < p.shipPct {
			for n := 1 + r.Intn(2); n > 0; n-- {
				// Mostly inside [o.ts, o.ts + 5 s], on its bounds often, sometimes 1 ms or more outside.
				var ts int64
				switch x := r.Intn(10); {
				case x == 0:
					ts = o.ts
				case x == 1:
					ts = o.ts + ivHi
				case x == 2:
					ts = o.ts + ivHi + 1
				case x == 3:
					ts = o.ts - 1 - r.Int63n(2000)
				case x == 4:
					ts = o.ts + ivHi + r.Int63n(3000)
				default:
					ts = roundDown(o.ts+r.Int63n(ivHi+1), p.gran)
				}
				ts = max(ts, o.ts-3000)
				shipped[o.id] = true
				add(&jrow{table: "shipments", clock: max(ts, clock) + r.Int63n(p.shipDelay+1), id: o.id, ts: ts})
			}
		}
		if r.Intn(50) == 0 { // a shipment of no order
			add(&jrow{table: "shipments", clock: clock, id: int64(p.orders + 1000 + i), ts: clock})
		}
		if !shipped[o.id] {
			lastUnshipped = o
		}
		maxTs = max(maxTs, o.ts)
	}
	if p.sentinel && lastUnshipped != nil {
		// Put both joins' final watermark exactly on a boundary: the last order without
		// shipments is padded with W == o.ts + 5 s exactly (J5), and a probe at exactly W is
		// emitted (J3). Order A at ts = target (before W reaches it), then order B moves the
		// orders W to target; rates and shipments rows far ahead keep the other watermarks above.
		target := max(lastUnshipped.ts+ivHi, maxTs-p.d*1000+1)
		clock += p.step
		add(&jrow{table: "orders", clock: clock, id: int64(p.orders + 1), cur: cur(), amount: 1, ts: target})
		add(&jrow{table: "orders", clock: clock, id: int64(p.orders + 2), cur: cur(), amount: 2, ts: target + p.d*1000})
		add(&jrow{table: "rates", clock: clock + 1, cur: cur(), rate: 1, ts: target + 60000})
		add(&jrow{table: "shipments", clock: clock + 1, id: -1, ts: target + 60000})
	}
	sort.SliceStable(rows, func(a, b int) bool {
		if rows[a].clock != rows[b].clock {
			return rows[a].clock < rows[b].clock
		}
		return rows[a].seq < rows[b].seq
	})
	return rows
}

// joinModel applies J1, J2, J4, J5 to rows in arrival order; it marks late rows, drops the rates
// rows that J4 keeps out, and returns the final watermarks.
type joinModel struct {
	wo, wr, ws       int64
	ratesDropped     int
	ratesOutOfOrder  int // accepted versions with ts below the rates watermark before them
	versionsAccepted int
}

func minWM(a, b int64) int64 {
	if a == noWatermark || b == noWatermark {
		return noWatermark
	}
	return min(a, b)
}

func runJoinModel(p joinParams, rows []*jrow) *joinModel {
	m := &joinModel{wo: noWatermark, wr: noWatermark, ws: noWatermark}
	seen := map[string]bool{}
	for _, x := range rows {
		switch x.table {
		case "orders":
			x.wmT, x.wmI = minWM(m.wo, m.wr), minWM(m.wo, m.ws)
			x.lateT = x.wmT != noWatermark && x.ts <= x.wmT
			x.lateI = x.wmI != noWatermark && x.ts <= x.wmI
			m.wo = max(m.wo, x.ts-p.d*1000)
		case "rates":
			k := fmt.Sprintf("%s@%d", x.cur, x.ts)
			if w := minWM(m.wo, m.wr); seen[k] || (w != noWatermark && x.ts <= w) {
				x.dropped = true
				m.ratesDropped++
				continue
			}
			seen[k] = true
			m.versionsAccepted++
			if m.wr != noWatermark && x.ts < m.wr {
				m.ratesOutOfOrder++
			}
			m.wr = max(m.wr, x.ts)
		case "shipments":
			x.wmI = minWM(m.ws, m.wo)
			x.lateI = x.wmI != noWatermark && x.ts <= x.wmI
			m.ws = max(m.ws, x.ts-p.ds*1000)
		}
	}
	return m
}

// joinInserts groups rows (in arrival order, dropped rates left out) into single-table INSERTs
// of 1..maxInsert rows.
func joinInserts(p joinParams, rows []*jrow) []string {
	r := rand.New(rand.NewSource(p.seed + 99))
	var live []*jrow
	for _, x := range rows {
		if !x.dropped {
			live = append(live, x)
		}
	}
	var stmts []string
	for i := 0; i < len(live); {
		n := 1 + r.Intn(p.maxInsert)
		var sb strings.Builder
		fmt.Fprintf(&sb, "INSERT INTO %s VALUES ", live[i].table)
		j := i
		for ; j < len(live) && j-i < n && live[j].table == live[i].table; j++ {
			if j > i {
				sb.WriteString(", ")
			}
			x := live[j]
			switch x.table {
			case "orders":
				c := "NULL"
				if x.cur != noCur {
					c = "'" + x.cur + "'"
				}
				fmt.Fprintf(&sb, "(%d, %s, %d, %s)", x.id, c, x.amount, tsLit(x.ts))
			case "rates":
				fmt.Fprintf(&sb, "('%s', %v, %s)", x.cur, x.rate, tsLit(x.ts))
			case "shipments":
				fmt.Fprintf(&sb, "(%d, %s)", x.id, tsLit(x.ts))
			}
		}
		stmts = append(stmts, sb.String())
		i = j
	}
	return stmts
}

// joinCoverage sums, over all seeds, the situations the test means to reach.
type joinCoverage struct {
	seeds                              int
	rows                               map[string]int // view -> expected rows
	late                               map[string]int // view -> expected late rows
	lateShipments                      int
	pendingProbes                      int // non-late probes with ts > the final temporal join W
	leftPadded, ivPadded, ivUnresolved int // padded tj_left rows; padded ij_left rows; unmatched orders not yet padded
	exactVersion, boundaryMatches      int // probe ts == version ts; s.ts == o.ts or o.ts + 5 s
	ratesDropped, ratesOutOfOrder      int
	probeAtW, paddedAtW                int // emitted probe with ts == final W; padded order with ts + 5 s == final W
}

func TestJoinViewsMatchDuckDB(t *testing.T) {
	start := time.Now()
	cov := &joinCoverage{rows: map[string]int{}, late: map[string]int{}}
	for _, seed := range joinSeeds {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			cov.seeds++
			runJoinSeed(t, joinParamsFor(seed), cov)
		})
	}
	t.Logf("%d seeds in %v; coverage: %+v", cov.seeds, time.Since(start).Round(time.Millisecond), *cov)
	if cov.seeds < len(joinSeeds) {
		return
	}
	for _, v := range joinViews {
		if cov.rows[v.name] == 0 {
			t.Errorf("coverage: view %s was always empty", v.name)
		}
		if cov.late[v.name] == 0 {
			t.Errorf("coverage: no seed produced a late row for view %s", v.name)
		}
	}
	if cov.lateShipments == 0 || cov.pendingProbes == 0 || cov.leftPadded == 0 || cov.ivPadded == 0 ||
		cov.ivUnresolved == 0 || cov.exactVersion == 0 || cov.boundaryMatches == 0 || cov.ratesOutOfOrder == 0 || cov.probeAtW == 0 || cov.paddedAtW == 0 {
		t.Errorf("coverage: late shipments, pending probes, padded rows of both LEFT joins, unresolved interval rows, "+
			"exact version and interval-bound matches, out-of-order versions, and a probe and a padded order exactly at the final watermark should each occur: %+v", *cov)
	}
}

func runJoinSeed(t *testing.T, p joinParams, cov *joinCoverage) {
	rows := genJoinRows(p)
	m := runJoinModel(p, rows)
	stmts := joinInserts(p, rows)
	fail := func(format string, args ...any) {
		t.Helper()
		t.Errorf("[%v] "+format, append([]any{p}, args...)...)
	}

	// --- streamsql
	db, err := streamsql.Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	mustExec := func(q string) {
		t.Helper()
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("[%v] %s: %v", p, q, err)
		}
	}
	mustExec(fmt.Sprintf(`CREATE TABLE orders (id BIGINT, cur VARCHAR, amount BIGINT, ts TIMESTAMP(3),
		WATERMARK FOR ts AS ts - INTERVAL '%d' SECOND)`, p.d))
	mustExec(`CREATE TABLE rates (cur VARCHAR, rate DOUBLE, ts TIMESTAMP(3),
		PRIMARY KEY (cur) NOT ENFORCED, WATERMARK FOR ts AS ts)`)
	mustExec(fmt.Sprintf(`CREATE TABLE shipments (order_id BIGINT, ts TIMESTAMP(3),
		WATERMARK FOR ts AS ts - INTERVAL '%d' SECOND)`, p.ds))
	for _, v := range joinViews {
		mustExec(v.sql)
	}
	for _, s := range stmts {
		mustExec(s)
	}
	mustExec("FLUSH") // J7
	query := func(q string) [][]any { t.Helper(); return engineRows(t, db, fmt.Sprint(p), q) }

	// J1: the tables' final watermarks.
	for name, want := range map[string]int64{"orders": m.wo, "rates": m.wr, "shipments": m.ws} {
		got := query(`SELECT watermark FROM system.watermarks WHERE name = '` + name + `'`)
		if len(got) != 1 || renderValue(got[0][0]) != fmt.Sprint(want) {
			fail("system.watermarks for %s = %v, want %d (%s)", name, got, want, tsLit(want))
		}
	}
	finalT, finalI := minWM(m.wo, m.wr), minWM(m.wo, m.ws)

	// --- late rows (J2, J5, J6) against the model.
	lateKey := func(view, table string, id, ts, wm int64) string {
		return fmt.Sprintf("%s %s id=%d ts=%d(%s) wm=%d(%s)", view, table, id, ts, tsLit(ts), wm, tsLit(wm))
	}
	gotLate := map[string]int{}
	for _, r := range query(`SELECT view_name, table_name, event_time, watermark, row_json FROM system.late_rows`) {
		view, table := r[0].(string), r[1].(string)
		et, wm := r[2].(time.Time).UnixMilli(), r[3].(time.Time).UnixMilli()
		var js map[string]any
		dec := json.NewDecoder(bytes.NewReader([]byte(r[4].(string))))
		dec.UseNumber()
		if err := dec.Decode(&js); err != nil {
			fail("late row %v: row_json: %v", r, err)
			continue
		}
		idCol := "id"
		if table == "shipments" {
			idCol = "order_id"
		}
		id, err := js[idCol].(json.Number).Int64()
		if err != nil {
			fail("late row %v: row_json has no integer %s", r, idCol)
		}
		if jts, err := time.Parse("2006-01-02 15:04:05.999", fmt.Sprint(js["ts"])); err != nil || jts.UnixMilli() != et {
			fail("late row %v: row_json ts %v does not match event_time", r, js["ts"])
		}
		gotLate[lateKey(view, table, id, et, wm)]++
	}
	wantLate := map[string]int{}
	nLate := map[string]int{}
	for _, x := range rows {
		switch {
		case x.table == "orders":
			if x.lateT {
				for _, v := range []string{"tj", "tj_left"} {
					wantLate[lateKey(v, "orders", x.id, x.ts, x.wmT)]++
					nLate[v]++
				}
			}
			if x.lateI {
				for _, v := range []string{"ij", "ij_left"} {
					wantLate[lateKey(v, "orders", x.id, x.ts, x.wmI)]++
					nLate[v]++
				}
			}
		case x.table == "shipments" && x.lateI:
			for _, v := range []string{"ij", "ij_left"} {
				wantLate[lateKey(v, "shipments", x.id, x.ts, x.wmI)]++
				nLate[v]++
			}
			cov.lateShipments++
		}
	}
	if d := diffMultisets(wantLate, gotLate); d != "" {
		fail("system.late_rows differs from SPEC's lateness rule (want = Go model):\n%s", d)
	}
	for _, r := range query(`SELECT name, late_rows FROM system.views`) {
		if name := r[0].(string); r[1].(int64) != int64(nLate[name]) {
			fail("system.views.late_rows for %s = %d, want %d", name, r[1], nLate[name])
		}
	}
	for v, n := range nLate {
		cov.late[v] += n
	}
	cov.ratesDropped += m.ratesDropped
	cov.ratesOutOfOrder += m.ratesOutOfOrder
	t.Logf("%v: %d rows, %d inserts, %d versions (%d out of order, %d dropped by J4), late %v, final W orders %s rates %s shipments %s",
		p, len(rows), len(stmts), m.versionsAccepted, m.ratesOutOfOrder, m.ratesDropped, nLate, tsLit(m.wo), tsLit(m.wr), tsLit(m.ws))

	// --- DuckDB: the rows streamsql accepted, with the model's lateness flags (just checked to
	// match system.late_rows, and they say which of two like rows was late).
	duck, err := openDuckDB()
	if err != nil {
		t.Fatal(err)
	}
	defer duck.Close()
	duck.SetMaxOpenConns(1)
	duckExec := func(q string) {
		t.Helper()
		if _, err := duck.Exec(q); err != nil {
			t.Fatalf("duckdb: %s: %v", q, err)
		}
	}
	duckExec(`CREATE TABLE orders (id BIGINT, cur VARCHAR, amount BIGINT, ts BIGINT, late_t BOOLEAN, late_i BOOLEAN)`)
	duckExec(`CREATE TABLE rates (cur VARCHAR, rate DOUBLE, ts BIGINT)`)
	duckExec(`CREATE TABLE shipments (order_id BIGINT, ts BIGINT, late BOOLEAN)`)
	vals := map[string][]string{}
	for _, x := range rows {
		switch {
		case x.table == "orders":
			c := "NULL"
			if x.cur != noCur {
				c = "'" + x.cur + "'"
			}
			vals["orders"] = append(vals["orders"], fmt.Sprintf("(%d, %s, %d, %d, %t, %t)", x.id, c, x.amount, x.ts, x.lateT, x.lateI))
		case x.table == "rates" && !x.dropped:
			vals["rates"] = append(vals["rates"], fmt.Sprintf("('%s', %v, %d)", x.cur, x.rate, x.ts))
		case x.table == "shipments":
			vals["shipments"] = append(vals["shipments"], fmt.Sprintf("(%d, %d, %t)", x.id, x.ts, x.lateI))
		}
	}
	for tbl, v := range vals {
		duckExec("INSERT INTO " + tbl + " VALUES " + strings.Join(v, ", "))
	}
	duckRows := func(q string) map[string]int { t.Helper(); return duckRowCounts(t, duck, q) }
	duckInt := func(q string) int {
		t.Helper()
		var n int
		if err := duck.QueryRow(q).Scan(&n); err != nil {
			t.Fatalf("duckdb: %s: %v", q, err)
		}
		return n
	}

	// J3: the emitted probes are the non-late ones at or below the final join watermark.
	wT := "FALSE"
	if finalT != noWatermark {
		wT = fmt.Sprintf("ts <= %d", finalT)
	}
	probes := `(SELECT * FROM orders WHERE NOT late_t AND ` + wT + `)`
	temporalQ := func(kind string) string {
		return `SELECT o.id, o.cur, o.amount, o.ts, r.rate, r.ts, o.amount * r.rate
			FROM ` + probes + ` o ASOF ` + kind + ` JOIN rates r ON o.cur = r.cur AND o.ts >= r.ts`
	}
	// J5: the range join of the non-late rows; LEFT pads the unmatched orders whose window passed.
	ivInner := `SELECT o.id, o.ts, s.order_id, s.ts
		FROM orders o JOIN shipments s ON s.order_id = o.id AND s.ts BETWEEN o.ts AND o.ts + 5000
		WHERE NOT o.late_i AND NOT s.late`
	unmatched := `FROM orders o WHERE NOT o.late_i AND NOT EXISTS (
		  SELECT 1 FROM shipments s WHERE NOT s.late AND s.order_id = o.id AND s.ts BETWEEN o.ts AND o.ts + 5000)`
	wI := "FALSE"
	if finalI != noWatermark {
		wI = fmt.Sprintf("o.ts + 5000 <= %d", finalI)
	}
	ivLeft := ivInner + ` UNION ALL SELECT o.id, o.ts, NULL, NULL ` + unmatched + ` AND ` + wI

	check := func(view string, want map[string]int) {
		t.Helper()
		for _, n := range want {
			cov.rows[view] += n
		}
		got := map[string]int{}
		for _, r := range query("SELECT * FROM " + view) {
			got[renderRow(r)]++
		}
		if d := diffMultisets(want, got); d != "" {
			fail("view %s differs from DuckDB (want = DuckDB, got = streamsql):\n%s", view, d)
		}
	}
	check("tj", duckRows(temporalQ("")))
	check("tj_left", duckRows(temporalQ("LEFT")))
	// J8: the views' temporal queries run ad hoc see every stored row, late ones too, each
	// probe joining the version as of its time among all of them: DuckDB's ASOF join of
	// every order.
	for i, kind := range []string{"", "LEFT"} {
		want := duckRows(`SELECT o.id, o.cur, o.amount, o.ts, r.rate, r.ts, o.amount * r.rate
			FROM orders o ASOF ` + kind + ` JOIN rates r ON o.cur = r.cur AND o.ts >= r.ts`)
		got := map[string]int{}
		for _, r := range query(strings.SplitN(joinViews[i].sql, " AS\n", 2)[1]) {
			got[renderRow(r)]++
		}
		if d := diffMultisets(want, got); d != "" {
			fail("the query of view %s, run ad hoc, differs from DuckDB (want = DuckDB, got = streamsql):\n%s", joinViews[i].name, d)
		}
	}
	check("ij", duckRows(ivInner))
	check("ij_left", duckRows(ivLeft))

	cov.pendingProbes += duckInt(`SELECT COUNT(*) FROM orders WHERE NOT late_t AND NOT (` + wT + `)`)
	cov.leftPadded += duckInt(`SELECT COUNT(*) FROM (` + temporalQ("LEFT") + `) x(id, cur, amount, ots, rate, rts, total) WHERE rate IS NULL`)
	cov.exactVersion += duckInt(`SELECT COUNT(*) FROM (` + temporalQ("") + `) x(id, cur, amount, ots, rate, rts, total) WHERE ots = rts`)
	cov.ivPadded += duckInt(`SELECT COUNT(*) ` + unmatched + ` AND ` + wI)
	cov.ivUnresolved += duckInt(`SELECT COUNT(*) ` + unmatched + ` AND NOT (` + wI + `)`)
	if finalT != noWatermark {
		cov.probeAtW += duckInt(fmt.Sprintf(`SELECT COUNT(*) FROM orders WHERE NOT late_t AND ts = %d`, finalT))
	}
	if finalI != noWatermark {
		cov.paddedAtW += duckInt(fmt.Sprintf(`SELECT COUNT(*) `+unmatched+` AND o.ts + 5000 = %d`, finalI))
	}
	cov.boundaryMatches += duckInt(`SELECT COUNT(*) FROM (` + ivInner + `) x(oid, ots, sid, sts) WHERE sts = ots OR sts = ots + 5000`)
}
