package oracle

// A differential test of streaming views against DuckDB batch SQL (SPEC.md §3).
//
// For each fixed seed, random events go into
//
//	ev(k BIGINT, v BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL 'd' SECOND)
//
// through the Go API, in INSERTs of random sizes, with windowed views (TUMBLE, HOP, CUMULATE,
// SESSION, TUMBLE with EMIT ON WINDOW CLOSE) and a non-windowed aggregate created up front.
// After FLUSH every view is compared, as a multiset of rows, with DuckDB's batch answer over
// the rows that view took; the late rows are read from system.late_rows and checked against an
// independent model of SPEC's lateness rule written here in Go (modelLateness), which also
// models SESSION merging, because whether a session is final depends on arrival order. A
// coverage tally over all seeds fails the test if late rows, SESSION finality splits,
// interleaved sessions, or complete and open TUMBLE windows stop occurring.
//
// The SPEC.md §3 rules this test relies on:
//
//   - W1 The table's watermark W is the largest value of its WATERMARK expression (ts - d) over
//     the rows taken so far, in acceptance order (the order of an INSERT's VALUES); it never goes
//     back. A row's lateness is judged against the watermark *before* that row (no watermark
//     before the first row).
//   - W2 Windows are epoch-aligned (UTC), half-open [window_start, window_end), and
//     window_time = window_end - 1 ms. TUMBLE assigns one window, HOP size/slide windows,
//     CUMULATE (as in Flink) the windows [s, s+step), [s, s+2*step), ... [s, s+size) with
//     s = floor(ts/size)*size that contain ts.
//   - W3 A window is complete when W >= window_time. A windowed operator applies a row to each of
//     its windows that is not complete; the row is late when all of them are complete. (So a HOP
//     or CUMULATE row that is not late may still miss some of its windows: the DuckDB queries
//     below drop (row, window) pairs whose window was complete when the row arrived.)
//   - W4 SESSION gives each row of a key the window [ts, ts+gap) and merges windows that overlap
//     or touch (rows exactly gap apart are one session); window_start = first row's ts,
//     window_end = last row's ts + gap. A complete session is final: a later row touching it
//     starts a new session. A row is late when the session it forms after merging (with the
//     sessions that are not complete) is complete.
//   - W5 A late row is never applied and is kept, one row per (late row, view), in
//     system.late_rows(view_name, table_name, event_time, watermark, row_json), where watermark
//     is the operator's watermark at arrival and row_json maps column names to values.
//   - W6 Non-windowed aggregates take every row, late or not.
//   - W7 Default emit: a view is current (a window's row appears with its first row and is
//     updated). EMIT ON WINDOW CLOSE: a window's row appears once it is complete, so after the
//     last insert only windows with window_time <= the final W are in the view.
//   - W8 FLUSH returns when every accepted row has reached every view, watermarks included, so a
//     SELECT on a view after FLUSH is exact.
//
// A failure names the seed (the subtest is seed=N): replay one seed with
//
//	go test -run 'TestStreamingViewsMatchDuckDB/seed=N$' -v

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"math/rand"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql"
)

// Window parameters of the views, in milliseconds.
const (
	tumbleSize = 5000
	hopSlide   = 2000
	hopSize    = 6000
	cumStep    = 2000
	cumSize    = 6000
	sessionGap = 3000

	noWatermark = math.MinInt64 // W before the first row
)

// streamViews are the views under test; name -> CREATE statement.
var streamViews = []struct{ name, sql string }{
	{"tum", `CREATE MATERIALIZED VIEW tum AS
SELECT k, window_start, window_end, window_time, COUNT(*) AS n, SUM(v) AS s, MIN(v) AS mn, MAX(v) AS mx
FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '5' SECOND))
GROUP BY k, window_start, window_end, window_time`},
	{"tum_close", `CREATE MATERIALIZED VIEW tum_close AS
SELECT k, window_start, window_end, window_time, COUNT(*) AS n, SUM(v) AS s, MIN(v) AS mn, MAX(v) AS mx
FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '5' SECOND))
GROUP BY k, window_start, window_end, window_time
EMIT ON WINDOW CLOSE`},
	{"hop", `CREATE MATERIALIZED VIEW hop AS
SELECT k, window_start, window_end, COUNT(*) AS n, SUM(v) AS s, MIN(v) AS mn, MAX(v) AS mx
FROM TABLE(HOP(TABLE ev, DESCRIPTOR(ts), INTERVAL '2' SECOND, INTERVAL '6' SECOND))
GROUP BY k, window_start, window_end`},
	{"cum", `CREATE MATERIALIZED VIEW cum AS
SELECT k, window_start, window_end, COUNT(*) AS n, SUM(v) AS s, MIN(v) AS mn, MAX(v) AS mx
FROM TABLE(CUMULATE(TABLE ev, DESCRIPTOR(ts), INTERVAL '2' SECOND, INTERVAL '6' SECOND))
GROUP BY k, window_start, window_end`},
	{"ses", `CREATE MATERIALIZED VIEW ses AS
SELECT k, window_start, window_end, COUNT(*) AS n, SUM(v) AS s, MIN(v) AS mn, MAX(v) AS mx
FROM TABLE(SESSION(TABLE ev PARTITION BY k, DESCRIPTOR(ts), INTERVAL '3' SECOND))
GROUP BY k, window_start, window_end`},
	{"agg", `CREATE MATERIALIZED VIEW agg AS
SELECT k, COUNT(*) AS n, SUM(v) AS s, MIN(v) AS mn, MAX(v) AS mx
FROM ev GROUP BY k`},
}

// streamParams is one seed's workload shape; every field derives from the seed.
type streamParams struct {
	seed      int64
	n         int   // events
	keys      int   // distinct k
	wmDelay   int64 // d, whole seconds (the WATERMARK's interval)
	disorder  int64 // D, ms: ts = base + i*step - rand(0..D)
	step      int64 // ms between consecutive events' base times
	gran      int64 // ts is rounded down to a multiple of gran ms; -1000: to a whole second or 1 ms before one
	sentinel  bool  // the last event puts the final W exactly on the window_time of the latest window
	jumpPct   int   // chance (%) that the base jumps 4-9 s ahead (session breaks)
	baseStart int64 // epoch ms of the first base time
}

func (p streamParams) String() string {
	return fmt.Sprintf("seed=%d n=%d keys=%d d=%ds D=%dms step=%dms gran=%dms jump=%d%% base=%d sentinel=%t",
		p.seed, p.n, p.keys, p.wmDelay, p.disorder, p.step, p.gran, p.jumpPct, p.baseStart, p.sentinel)
}

func paramsFor(seed int64) streamParams {
	r := rand.New(rand.NewSource(seed * 7919))
	p := streamParams{seed: seed}
	p.n = 300 + r.Intn(400)
	p.keys = 1 + r.Intn(4)
	p.wmDelay = 1 + r.Int63n(2)
	d := p.wmDelay * 1000
	// D below, exactly at, and above d: above d some rows are late.
	p.disorder = []int64{0, d / 2, d, d + 1, 2 * d, 3 * d, 5 * d, d + 5000, d + 8000}[r.Intn(9)]
	p.step = []int64{100, 250, 400, 700, 1000}[r.Intn(5)]
	// -1000 puts rows, watermarks and window_times on the same millisecond grid, so that
	// W == window_time (complete: W3) and rows exactly gap apart (W4) happen often.
	p.gran = []int64{1, 1, 250, 1000, -1000, -1000}[r.Intn(6)]
	p.sentinel = r.Intn(2) == 0
	p.jumpPct = []int{0, 3, 8}[r.Intn(3)]
	p.baseStart = 1704067200000 + r.Int63n(12000) // 2024-01-01 plus an offset, to vary alignment
	return p
}

// streamSeeds are fixed so that failures replay; each seed also fixes the workload's shape.
var streamSeeds = func() []int64 {
	var s []int64
	for i := int64(1); i <= 40; i++ {
		s = append(s, i)
	}
	return s
}()

type event struct {
	seq     int   // acceptance order
	k, v    int64 //
	ts      int64 // epoch ms
	wm      int64 // watermark before this row (noWatermark for the first)
	late    map[string]bool
	session int // SESSION model: session id, or -1 if late
	// SESSION model: the row starts a session though it is within gap of the previous row of
	// its key in (ts, seq) order, because that row's session was complete (final) on arrival.
	finalBreak bool
}

func genEvents(p streamParams) ([]*event, [][]*event) {
	r := rand.New(rand.NewSource(p.seed))
	var evs []*event
	base := p.baseStart
	maxTs := int64(noWatermark)
	for i := 0; i < p.n; i++ {
		if p.jumpPct > 0 && r.Intn(100) < p.jumpPct {
			base += 4000 + r.Int63n(5000)
		}
		base += p.step
		ts := base - r.Int63n(p.disorder+1)
		if p.gran > 0 {
			ts -= ts % p.gran
		} else {
			ts -= ts%-p.gran + r.Int63n(2)
		}
		if p.sentinel && i == p.n-1 {
			// Final W = window_time of the TUMBLE window holding the largest ts so far: that
			// window is complete exactly at the boundary (W3, W7).
			ts = floorDiv(maxTs, tumbleSize)*tumbleSize + tumbleSize - 1 + p.wmDelay*1000
		}
		e := &event{seq: i, k: int64(r.Intn(p.keys)), v: int64(r.Intn(21) - 5), ts: ts, wm: noWatermark}
		if maxTs != noWatermark {
			e.wm = maxTs - p.wmDelay*1000 // W1
		}
		maxTs = max(maxTs, ts)
		evs = append(evs, e)
	}
	// Random INSERT sizes, 1..50 rows.
	var batches [][]*event
	for i := 0; i < len(evs); {
		n := min(1+r.Intn(50), len(evs)-i)
		batches = append(batches, evs[i:i+n])
		i += n
	}
	return evs, batches
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// complete reports W3: a window ending at end (exclusive) is complete under watermark wm.
func complete(end, wm int64) bool { return wm != noWatermark && end-1 <= wm }

// modelLateness marks each event late or not for each windowed view, from W1-W4.
func modelLateness(evs []*event) (sessions, finalBreaks int) {
	type sess struct {
		id         int
		start, end int64 // [start, end)
	}
	open := map[int64][]*sess{} // per key; complete sessions are final and dropped here
	nextID := 0
	for _, e := range evs {
		e.late = map[string]bool{}
		// TUMBLE: one window. HOP: the latest window containing ts ends at
		// floor(ts/slide)*slide + size. CUMULATE: the largest window ends at s + size.
		// A row is late when its latest-ending window is complete (then all are).
		tumEnd := floorDiv(e.ts, tumbleSize)*tumbleSize + tumbleSize
		e.late["tum"] = complete(tumEnd, e.wm)
		e.late["tum_close"] = e.late["tum"]
		e.late["hop"] = complete(floorDiv(e.ts, hopSlide)*hopSlide+hopSize, e.wm)
		e.late["cum"] = complete(floorDiv(e.ts, cumSize)*cumSize+cumSize, e.wm)

		// SESSION (W4): merge [ts, ts+gap) with every session of the key that is not complete
		// and overlaps or touches it; the row is late if the result is complete.
		var keep, touching []*sess
		for _, s := range open[e.k] {
			switch {
			case complete(s.end, e.wm):
				// final; never merged again
			case s.start <= e.ts+sessionGap && e.ts <= s.end:
				touching = append(touching, s)
			default:
				keep = append(keep, s)
			}
		}
		m := &sess{start: e.ts, end: e.ts + sessionGap}
		for _, s := range touching {
			m.start, m.end = min(m.start, s.start), max(m.end, s.end)
		}
		if complete(m.end, e.wm) {
			e.late["ses"] = true
			e.session = -1
			open[e.k] = append(keep, touching...)
			continue
		}
		m.id = nextID
		nextID++
		for _, s := range touching {
			for _, o := range evs[:e.seq] {
				if o.session == s.id && !o.late["ses"] {
					o.session = m.id
				}
			}
		}
		e.session = m.id
		open[e.k] = append(keep, m)
	}
	ids := map[int]bool{}
	byKey := map[int64][]*event{}
	for _, e := range evs {
		if !e.late["ses"] {
			ids[e.session] = true
			byKey[e.k] = append(byKey[e.k], e)
		}
	}
	for _, rows := range byKey {
		sort.SliceStable(rows, func(i, j int) bool { return rows[i].ts < rows[j].ts }) // ties: by seq
		for i := 1; i < len(rows); i++ {
			p, q := rows[i-1], rows[i]
			if q.ts-p.ts <= sessionGap && q.session != p.session {
				q.finalBreak = true
				finalBreaks++
			}
		}
	}
	return len(ids), finalBreaks
}

// streamCoverage sums, over all seeds, the situations the test is meant to reach, so that a
// change of generator cannot quietly make it vacuous.
type streamCoverage struct {
	rows, late    map[string]int // view -> expected rows in the view / late rows
	finalBreaks   int            // sessions split because the previous one was final
	interleaved   int            // seeds whose sessions overlap in ts order
	closedWindows int            // rows expected in the EMIT ON WINDOW CLOSE view
	openWindows   int            // TUMBLE windows not yet complete at the end
	seeds         int            // seeds run (coverage is judged only when all ran)
}

func TestStreamingViewsMatchDuckDB(t *testing.T) {
	start := time.Now()
	cov := &streamCoverage{rows: map[string]int{}, late: map[string]int{}}
	for _, seed := range streamSeeds {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			cov.seeds++
			runStreamSeed(t, paramsFor(seed), cov)
		})
	}
	t.Logf("%d seeds in %v; coverage: %+v", cov.seeds, time.Since(start).Round(time.Millisecond), *cov)
	if cov.seeds < len(streamSeeds) {
		return
	}
	for _, v := range []string{"tum", "tum_close", "hop", "cum", "ses"} {
		if cov.late[v] == 0 {
			t.Errorf("coverage: no seed produced a late row for view %s", v)
		}
	}
	for _, v := range streamViews {
		if cov.rows[v.name] == 0 {
			t.Errorf("coverage: view %s was always empty", v.name)
		}
	}
	if cov.finalBreaks == 0 || cov.interleaved == 0 || cov.closedWindows == 0 || cov.openWindows == 0 {
		t.Errorf("coverage: a SESSION finality break, interleaved sessions, and both complete and open TUMBLE windows should each occur: %+v", *cov)
	}
}

func tsLit(ms int64) string {
	return "TIMESTAMP '" + time.UnixMilli(ms).UTC().Format("2006-01-02 15:04:05.000") + "'"
}

func runStreamSeed(t *testing.T, p streamParams, cov *streamCoverage) {
	evs, batches := genEvents(p)
	nSessions, nFinalBreaks := modelLateness(evs)
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
	mustExec(fmt.Sprintf(`CREATE TABLE ev (k BIGINT, v BIGINT, ts TIMESTAMP(3),
		WATERMARK FOR ts AS ts - INTERVAL '%d' SECOND)`, p.wmDelay))
	for _, v := range streamViews {
		mustExec(v.sql)
	}
	for _, b := range batches {
		var sb strings.Builder
		sb.WriteString("INSERT INTO ev VALUES ")
		for i, e := range b {
			if i > 0 {
				sb.WriteString(", ")
			}
			fmt.Fprintf(&sb, "(%d, %d, %s)", e.k, e.v, tsLit(e.ts))
		}
		mustExec(sb.String())
	}
	mustExec("FLUSH") // W8
	query := func(q string) [][]any { t.Helper(); return engineRows(t, db, fmt.Sprint(p), q) }

	// The table's watermark (W1).
	var finalWM int64
	{
		maxTs := int64(math.MinInt64)
		for _, e := range evs {
			maxTs = max(maxTs, e.ts)
		}
		finalWM = maxTs - p.wmDelay*1000
		got := query(`SELECT watermark FROM system.watermarks WHERE name = 'ev'`)
		if len(got) != 1 || renderValue(got[0][0]) != fmt.Sprint(finalWM) {
			fail("system.watermarks for ev = %v, want %d (%s)", got, finalWM, tsLit(finalWM))
		}
	}

	// --- late rows: streamsql's system.late_rows against the Go model (W5).
	lateKey := func(view string, k, v, ts, wm int64) string {
		return fmt.Sprintf("%s k=%d v=%d ts=%d(%s) wm=%d", view, k, v, ts, tsLit(ts), wm)
	}
	gotLate := map[string]int{}
	perView := map[string]int{}
	for _, r := range query(`SELECT view_name, table_name, event_time, watermark, row_json FROM system.late_rows`) {
		view, table := r[0].(string), r[1].(string)
		et := r[2].(time.Time).UnixMilli()
		wm := r[3].(time.Time).UnixMilli()
		var js struct {
			K, V int64
			Ts   string
		}
		if err := json.Unmarshal([]byte(r[4].(string)), &js); err != nil {
			fail("late row %v: row_json: %v", r, err)
			continue
		}
		if table != "ev" {
			fail("late row %v: table_name %q, want ev", r, table)
		}
		if jts, err := time.Parse("2006-01-02 15:04:05.999", js.Ts); err != nil || jts.UnixMilli() != et {
			fail("late row %v: row_json ts %q does not match event_time", r, js.Ts)
		}
		gotLate[lateKey(view, js.K, js.V, et, wm)]++
		perView[view]++
	}
	wantLate := map[string]int{}
	nLate := map[string]int{}
	for _, e := range evs {
		for _, v := range []string{"tum", "tum_close", "hop", "cum", "ses"} {
			if e.late[v] {
				wantLate[lateKey(v, e.k, e.v, e.ts, e.wm)]++
				nLate[v]++
			}
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
	t.Logf("%v: %d inserts, late per view (model) %v, engine %v, sessions %d (%d finality breaks), final W %s",
		p, len(batches), nLate, perView, nSessions, nFinalBreaks, tsLit(finalWM))
	// W1/W3: when a row is at most d behind every earlier row's base time (disorder plus
	// rounding), it is > W, so its window (window_time >= ts) is open: no view has late rows.
	slack := p.gran - 1
	if p.gran < 0 {
		slack = -p.gran
	}
	if p.disorder+slack <= p.wmDelay*1000 {
		for v, n := range perView {
			if n > 0 {
				fail("view %s has %d late rows though rows lag by at most %dms <= watermark delay %ds", v, n, p.disorder+slack, p.wmDelay)
			}
		}
	}

	// --- DuckDB: every event with its acceptance order, the watermark before it, and the model's
	// lateness per view. The model's late set was just checked to equal system.late_rows as a
	// multiset (view, k, v, ts, watermark), so "not late" here is also streamsql's; the model's
	// flags are used because they say *which* of two identical (k, v, ts) rows was late.
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
	duckExec(`CREATE TABLE ev (seq BIGINT, k BIGINT, v BIGINT, ts BIGINT, wm BIGINT,
		late_tum BOOLEAN, late_hop BOOLEAN, late_cum BOOLEAN, late_ses BOOLEAN, model_session BIGINT, final_break BOOLEAN)`)
	{
		var sb strings.Builder
		sb.WriteString("INSERT INTO ev VALUES ")
		for i, e := range evs {
			if i > 0 {
				sb.WriteString(", ")
			}
			wm := "NULL"
			if e.wm != noWatermark {
				wm = fmt.Sprint(e.wm)
			}
			fmt.Fprintf(&sb, "(%d, %d, %d, %d, %s, %t, %t, %t, %t, %d, %t)", e.seq, e.k, e.v, e.ts, wm,
				e.late["tum"], e.late["hop"], e.late["cum"], e.late["ses"], e.session, e.finalBreak)
		}
		duckExec(sb.String())
	}
	duckRows := func(q string) map[string]int { t.Helper(); return duckRowCounts(t, duck, q) }

	// W2/W3: the windows of each row that were not complete when it arrived (a late row has none,
	// so `NOT late_x` is implied; it is written out to make the intent plain).
	notComplete := `(e.wm IS NULL OR w.we - 1 > e.wm)`
	aggs := `COUNT(*)::BIGINT, SUM(e.v)::BIGINT, MIN(e.v)::BIGINT, MAX(e.v)::BIGINT`
	tumbleQ := `SELECT e.k, w.ws, w.we, w.we - 1, ` + aggs + `
		FROM ev e, LATERAL (SELECT (e.ts // 5000) * 5000 AS ws, (e.ts // 5000) * 5000 + 5000 AS we) w
		WHERE NOT e.late_tum AND ` + notComplete + `
		GROUP BY e.k, w.ws, w.we`
	// HOP: windows [ws, ws + size) with ws a multiple of slide, from a generated series.
	hopQ := `WITH wins AS (
		  SELECT ws, ws + 6000 AS we FROM range(
		    (SELECT (MIN(ts) // 2000) * 2000 - 6000 FROM ev), (SELECT MAX(ts) + 2000 FROM ev), 2000) r(ws))
		SELECT e.k, w.ws, w.we, ` + aggs + `
		FROM ev e JOIN wins w ON e.ts >= w.ws AND e.ts < w.we
		WHERE NOT e.late_hop AND ` + notComplete + `
		GROUP BY e.k, w.ws, w.we`
	// CUMULATE: for each s a multiple of size, windows [s, s + j*step), j = 1..size/step.
	cumQ := `WITH wins AS (
		  SELECT s.ws, s.ws + j.j * 2000 AS we
		  FROM range((SELECT (MIN(ts) // 6000) * 6000 FROM ev), (SELECT MAX(ts) + 6000 FROM ev), 6000) s(ws),
		       range(1, 4) j(j))
		SELECT e.k, w.ws, w.we, ` + aggs + `
		FROM ev e JOIN wins w ON e.ts >= w.ws AND e.ts < w.we
		WHERE NOT e.late_cum AND ` + notComplete + `
		GROUP BY e.k, w.ws, w.we`
	// SESSION (W4) over the rows that were not late, per key in (ts, acceptance) order: a row
	// starts a new session when it is more than gap after the previous row (rows exactly gap
	// apart join), or when the model marks a finality break (the previous row's session was
	// already complete when this row arrived; that depends on arrival order and the watermark,
	// which plain SQL cannot follow, so it comes from modelLateness).
	sessionQ := `WITH o AS (
		  SELECT *, LAG(ts) OVER w AS pts
		  FROM ev WHERE NOT late_ses WINDOW w AS (PARTITION BY k ORDER BY ts, seq)),
		b AS (SELECT *, CASE WHEN pts IS NULL OR ts - pts > 3000 OR final_break THEN 1 ELSE 0 END AS brk FROM o),
		s AS (SELECT *, SUM(brk) OVER (PARTITION BY k ORDER BY ts, seq ROWS UNBOUNDED PRECEDING) AS sid FROM b)
		SELECT e.k, MIN(e.ts), MAX(e.ts) + 3000, ` + aggs + ` FROM s e GROUP BY e.k, e.sid`
	// The Go model's sessions, to check the SQL above (which assumes each session is a run of
	// consecutive rows in (ts, acceptance) order).
	sessionModelQ := `SELECT e.k, MIN(e.ts), MAX(e.ts) + 3000, ` + aggs + `
		FROM ev e WHERE NOT late_ses GROUP BY e.k, e.model_session`
	aggQ := `SELECT e.k, ` + aggs + ` FROM ev e GROUP BY e.k` // W6: every row

	// The SQL above assumes each session is a run of consecutive rows in (ts, acceptance) order.
	// With disorder well beyond d that need not hold under SPEC: a row whose own window is
	// complete, next to a final session, may join an open session that began after that one
	// was complete, so two sessions of a key overlap. Then the model's grouping is the answer.
	var wantSes map[string]int
	cov.finalBreaks += nFinalBreaks
	for v, n := range nLate {
		cov.late[v] += n
	}
	if !sessionsContiguous(evs) {
		cov.interleaved++
		t.Logf("sessions of the model interleave in ts order; SESSION expected from the model's grouping")
		wantSes = duckRows(sessionModelQ)
	} else {
		wantSes = duckRows(sessionQ)
		if d := diffMultisets(duckRows(sessionModelQ), wantSes); d != "" {
			t.Fatalf("[%v] oracle self-check: DuckDB sessions (got) differ from the Go model's sessions (want):\n%s", p, d)
		}
	}

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
	wantTum := duckRows(tumbleQ)
	check("tum", wantTum)
	// W7: EMIT ON WINDOW CLOSE holds exactly the complete windows.
	wantClose := duckRows(`SELECT * FROM (` + tumbleQ + `) x WHERE x.we - 1 <= ` + fmt.Sprint(finalWM))
	check("tum_close", wantClose)
	check("hop", duckRows(hopQ))
	check("cum", duckRows(cumQ))
	check("ses", wantSes)
	check("agg", duckRows(aggQ))
	cov.closedWindows += len(wantClose)
	cov.openWindows += len(wantTum) - len(wantClose)
}

// sessionsContiguous reports whether every model session is a run of consecutive non-late
// rows of its key in (ts, seq) order.
func sessionsContiguous(evs []*event) bool {
	byKey := map[int64][]*event{}
	for _, e := range evs {
		if !e.late["ses"] {
			byKey[e.k] = append(byKey[e.k], e)
		}
	}
	for _, rows := range byKey {
		sort.SliceStable(rows, func(i, j int) bool { return rows[i].ts < rows[j].ts })
		seen := map[int]bool{}
		for i, e := range rows {
			if i > 0 && rows[i-1].session != e.session {
				if seen[e.session] {
					return false
				}
			}
			seen[e.session] = true
		}
	}
	return true
}

// renderValue renders a cell the same way for both engines: integers in decimal and
// timestamps as epoch milliseconds.
func renderValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case time.Time:
		return fmt.Sprint(x.UnixMilli())
	case *big.Int:
		return x.String()
	case []byte:
		return string(x)
	}
	return fmt.Sprint(v)
}

// duckRowCounts runs q on DuckDB and counts its rows by their rendering (a multiset).
func duckRowCounts(t *testing.T, duck *sql.DB, q string) map[string]int {
	t.Helper()
	rows, err := duck.Query(q)
	if err != nil {
		t.Fatalf("duckdb: %s: %v", q, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	out := map[string]int{}
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		out[renderRow(vals)]++
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("duckdb: %s: %v", q, err)
	}
	return out
}

// engineRows runs q on streamsql and returns its rows; label names the run in failures.
func engineRows(t *testing.T, db *streamsql.DB, label, q string) [][]any {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatalf("[%s] %s: %v", label, q, err)
	}
	defer rows.Close()
	var out [][]any
	for rows.Next() {
		out = append(out, append([]any(nil), rows.Values()...))
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("[%s] %s: %v", label, q, err)
	}
	return out
}

func renderRow(r []any) string {
	s := make([]string, len(r))
	for i, v := range r {
		s[i] = renderValue(v)
	}
	return strings.Join(s, " | ")
}

// diffMultisets lists the rows missing from got and the extra rows in got; "" when equal.
func diffMultisets(want, got map[string]int) string {
	var lines []string
	keys := map[string]bool{}
	for k := range want {
		keys[k] = true
	}
	for k := range got {
		keys[k] = true
	}
	for k := range keys {
		if d := want[k] - got[k]; d > 0 {
			lines = append(lines, fmt.Sprintf("  missing x%d: %s", d, k))
		} else if d < 0 {
			lines = append(lines, fmt.Sprintf("  extra   x%d: %s", -d, k))
		}
	}
	if len(lines) == 0 {
		return ""
	}
	sort.Strings(lines)
	if len(lines) > 30 {
		lines = append(lines[:30], fmt.Sprintf("  ... and %d more", len(lines)-30))
	}
	return strings.Join(lines, "\n")
}
