package streamsql_test

import (
	"fmt"
	"math/rand"
	"path/filepath"
	"strings"
	"testing"

	"github.com/streamsql/streamsql"
)

// viewQueries are maintained incrementally as views and must always equal the same query
// run as a batch: a batch query is a stream that ends.
var viewQueries = []string{
	`SELECT g, COUNT(*) AS n, SUM(v) AS s, MIN(v) AS lo, MAX(v) AS hi, AVG(v) AS av FROM a GROUP BY g`,
	`SELECT g, COUNT(DISTINCT v) AS d FROM a GROUP BY g HAVING COUNT(*) > 1`,
	`SELECT DISTINCT g FROM a WHERE v > 3`,
	`SELECT a.k, b.w FROM a JOIN b ON a.k = b.k`,
	`SELECT a.k, b.w FROM a LEFT JOIN b ON a.k = b.k`,
	`SELECT a.k AS ak, b.w FROM a RIGHT JOIN b ON a.k = b.k AND b.w > 2`,
	`SELECT a.k AS ak, b.k AS bk FROM a FULL JOIN b ON a.g = b.g`,
	`SELECT g FROM a UNION ALL SELECT g FROM b`,
	`SELECT COUNT(*) AS n, SUM(w) AS s FROM b`,
	`SELECT a.g, COUNT(*) AS n FROM a JOIN b ON a.g = b.g GROUP BY a.g`,
	`SELECT k, v * 2 + 1 AS x, UPPER(s) AS u FROM a WHERE s LIKE 'a%'`,
	`SELECT g, MAX(w) - MIN(w) AS spread FROM b GROUP BY g`,
	// BOOL_*, ANY_VALUE and the aggregates in arrival order. The latter are exact only where
	// the order is defined: over a, under upserts, updates and deletes, of values distinct in
	// a group (a retraction takes the oldest copy of its value, not its row's); over c, which
	// only ever gets insertions, of any values. Over a join the order of the join's output
	// differs between a batch and a view: only the others.
	`SELECT g, BOOL_AND(v > 2) AS ba, BOOL_OR(s LIKE 'a%') AS bo, STRING_AGG(CAST(k AS VARCHAR) || '=' || COALESCE(s, '?'), ',') AS sa,
		LISTAGG(DISTINCT CAST(k AS VARCHAR)) AS la, FIRST_VALUE(k) AS fv, LAST_VALUE(CASE WHEN v IS NOT NULL THEN k * 10 + v END) AS lv,
		ANY_VALUE(s) AS av FROM a GROUP BY g`,
	`SELECT g, STRING_AGG(s, ',') AS sa, LISTAGG(DISTINCT s) AS la, FIRST_VALUE(v) AS fv, LAST_VALUE(s) AS ls, COUNT(*) AS n FROM c GROUP BY g`,
	`SELECT b.g, EVERY(b.w > a.v) AS e, BOOL_OR(a.s = 'b') AS bo, ANY_VALUE(a.s) AS av FROM a JOIN b ON a.g = b.g GROUP BY b.g`,
	`SELECT * FROM (SELECT k, v, ROW_NUMBER() OVER (PARTITION BY g ORDER BY v DESC, k) AS rn FROM a) x WHERE rn <= 2`,
	// Top-N by WHERE over RANK, DENSE_RANK and ROW_NUMBER (the bound limits the Rank), with
	// ties and duplicate rows.
	`SELECT * FROM (SELECT k, g, v, RANK() OVER (PARTITION BY g ORDER BY v) AS r FROM a) x WHERE r < 3 AND v IS NOT NULL`,
	`SELECT k, w, d FROM (SELECT k, w, DENSE_RANK() OVER (PARTITION BY g ORDER BY w DESC) AS d FROM b) x WHERE d = 2`,
	`SELECT * FROM (SELECT k, g, ROW_NUMBER() OVER (PARTITION BY g ORDER BY k DESC) AS rn FROM a) x WHERE 1 >= rn`,
	`SELECT g, SUM(v) AS s FROM (SELECT * FROM a WHERE v IS NOT NULL) x GROUP BY g`,
	`SELECT b.g, COUNT(*) AS n FROM b LEFT JOIN a ON a.g = b.g AND a.v < b.w GROUP BY b.g`,
	// Window functions over an outer join whose other side (a) is updated and upserted.
	`SELECT b.k, a.v, COUNT(*) OVER (PARTITION BY b.g) AS c FROM b LEFT JOIN a ON a.k = b.k`,
	`SELECT * FROM (SELECT b.k, b.w, a.v, ROW_NUMBER() OVER (PARTITION BY b.g ORDER BY b.k, b.w, a.v) AS rn
		FROM b LEFT JOIN a ON a.k = b.k) x WHERE rn <= 2`,
	// IN and EXISTS subqueries, correlated or not (semi and anti joins).
	`SELECT k, v FROM a WHERE g IN (SELECT g FROM b WHERE w > 2)`,
	`SELECT k, v FROM a WHERE EXISTS (SELECT 1 FROM b WHERE b.k = a.k AND b.w > 1)`,
	`SELECT k, g FROM a WHERE NOT EXISTS (SELECT 1 FROM b WHERE b.g = a.g)`,
	`SELECT k FROM a WHERE v IN (SELECT w FROM b WHERE b.k = a.k)`,
	`SELECT k, v FROM a WHERE v NOT IN (SELECT w FROM b)`,
	`SELECT k FROM a WHERE g NOT IN (SELECT g FROM b WHERE b.k = a.k AND w > 0)`,
	`SELECT k, v FROM a WHERE v > (SELECT AVG(w) FROM b)`,
	`SELECT k, (SELECT COUNT(*) FROM b) AS nb FROM a`,
	// Grouping sets (the empty set's row is there over no rows) and window frames.
	`SELECT g, s, COUNT(*) AS n, SUM(v) AS sv FROM a GROUP BY ROLLUP (g, s)`,
	`SELECT g, w, COUNT(*) AS n FROM b GROUP BY CUBE (g, w)`,
	`SELECT k, v, SUM(v) OVER (PARTITION BY g ORDER BY k ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING) AS s,
		COUNT(*) OVER (PARTITION BY g ORDER BY v RANGE BETWEEN 2 PRECEDING AND CURRENT ROW) AS c FROM a`,
	// ORDER BY ... LIMIT (a Top-N), over rows and over groups: keys unique (a's primary key,
	// the group key last), so the view is exactly the batch query's rows.
	`SELECT k, s FROM a ORDER BY v DESC, k LIMIT 3 OFFSET 1`,
	`SELECT g, SUM(w) AS sw FROM b GROUP BY g ORDER BY sw, g DESC LIMIT 2`,
}

func rowsOf(t *testing.T, db *streamsql.DB, q string) string {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		out = append(out, fmt.Sprint(rows.Values()...))
	}
	sortStrings(out)
	return strings.Join(out, "\n")
}

// TestViewsEqualBatchQueries applies random inserts, upserts, updates and deletes and checks
// after each that every view equals its query run as a batch, and that a view over a view
// equals its batch query too.
func TestViewsEqualBatchQueries(t *testing.T) {
	for _, seed := range []int64{1, 2, 3} {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			r := rand.New(rand.NewSource(seed))
			dir := t.TempDir()
			db, err := streamsql.Open(filepath.Join(dir, "db"), streamsql.WithCheckpointInterval(-1))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			mustExec(t, db, `CREATE TABLE a (k BIGINT PRIMARY KEY, g BIGINT, v BIGINT, s VARCHAR)`)
			mustExec(t, db, `CREATE TABLE b (k BIGINT, g BIGINT, w BIGINT)`)
			mustExec(t, db, `CREATE TABLE c (g BIGINT, v BIGINT, s VARCHAR)`) // insertions only
			for i, q := range viewQueries {
				mustExec(t, db, fmt.Sprintf("CREATE MATERIALIZED VIEW v%d AS %s", i, q))
			}
			mustExec(t, db, `CREATE MATERIALIZED VIEW vv AS SELECT g, COUNT(*) AS n FROM v0 WHERE n > 1 GROUP BY g`)
			val := func(n int) string {
				if r.Intn(6) == 0 {
					return "NULL"
				}
				return fmt.Sprint(r.Intn(n))
			}
			str := func() string {
				if r.Intn(6) == 0 {
					return "NULL"
				}
				return fmt.Sprintf("'%s'", []string{"ax", "ab", "b", "a", "ca"}[r.Intn(5)])
			}
			insertC := func() string {
				var rows []string
				for i := 0; i < 1+r.Intn(4); i++ {
					rows = append(rows, fmt.Sprintf("(%s, %s, %s)", val(3), val(5), str()))
				}
				return "INSERT INTO c VALUES " + strings.Join(rows, ", ")
			}
			for step := 0; step < 60; step++ {
				var q string
				switch r.Intn(7) {
				case 0, 1:
					var rows []string
					for i := 0; i < 1+r.Intn(4); i++ {
						rows = append(rows, fmt.Sprintf("(%d, %s, %s, %s)", r.Intn(12), val(4), val(8), str()))
					}
					q = "INSERT INTO a VALUES " + strings.Join(rows, ", ")
				case 6:
					q = insertC()
				case 2:
					var rows []string
					for i := 0; i < 1+r.Intn(4); i++ {
						rows = append(rows, fmt.Sprintf("(%d, %s, %s)", r.Intn(12), val(4), val(6)))
					}
					q = "INSERT INTO b VALUES " + strings.Join(rows, ", ")
				case 3:
					q = fmt.Sprintf("UPDATE a SET v = %s, g = %s WHERE k = %d", val(8), val(4), r.Intn(12))
				case 4:
					q = fmt.Sprintf("DELETE FROM b WHERE w = %d", r.Intn(6))
				default:
					q = fmt.Sprintf("DELETE FROM a WHERE k = %d", r.Intn(12))
				}
				mustExec(t, db, q)
				if step == 30 {
					mustExec(t, db, "CHECKPOINT")
				}
				for i, vq := range viewQueries {
					if got, want := rowsOf(t, db, fmt.Sprintf("SELECT * FROM v%d", i)), rowsOf(t, db, vq); got != want {
						t.Fatalf("step %d (%s): view v%d = %s\ndiffers from its query:\n%s\nwhich gives:\n%s", step, q, i, got, vq, want)
					}
				}
				want := rowsOf(t, db, `SELECT g, COUNT(*) AS n FROM (`+viewQueries[0]+`) x WHERE n > 1 GROUP BY g`)
				if got := rowsOf(t, db, "SELECT * FROM vv"); got != want {
					t.Fatalf("step %d (%s): the view over a view = %s, want %s", step, q, got, want)
				}
			}
			// A copy restored from the checkpoint plus the changes after it agrees too.
			backup := filepath.Join(dir, "copy")
			mustExec(t, db, fmt.Sprintf("BACKUP TO '%s'", backup))
			cp, err := streamsql.Open(backup, streamsql.WithCheckpointInterval(-1))
			if err != nil {
				t.Fatal(err)
			}
			defer cp.Close()
			for i := range viewQueries {
				q := fmt.Sprintf("SELECT * FROM v%d", i)
				if got, want := rowsOf(t, cp, q), rowsOf(t, db, q); got != want {
					t.Errorf("restored view v%d = %s, live %s", i, got, want)
				}
			}
			if got, want := rowsOf(t, cp, "SELECT * FROM vv"), rowsOf(t, db, "SELECT * FROM vv"); got != want {
				t.Errorf("restored vv = %s, live %s", got, want)
			}
			// Values arriving after the restore come after those restored, in arrival order.
			for range 3 {
				mustExec(t, cp, insertC())
				mustExec(t, cp, fmt.Sprintf("UPDATE a SET g = %s WHERE k = %d", val(4), r.Intn(12)))
			}
			for i, vq := range viewQueries {
				if got, want := rowsOf(t, cp, fmt.Sprintf("SELECT * FROM v%d", i)), rowsOf(t, cp, vq); got != want {
					t.Errorf("restored view v%d after more changes = %s\ndiffers from its query:\n%s\nwhich gives:\n%s", i, got, vq, want)
				}
			}
		})
	}
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// TestWindowAggregateShapes: a TUMBLE or HOP aggregate whose window columns are read only as
// its window_start and window_end keys gets its windows as runs (HOP's in lanes over the
// rows passed once), never as columns (the int user key taken as it is, other keys from
// columns made of the runs); every shape equals the same query with a filter that keeps
// every row between the window and the aggregate, which takes the path with columns.
func TestWindowAggregateShapes(t *testing.T) {
	for _, fn := range []string{"TUMBLE(TABLE e, DESCRIPTOR(ts), INTERVAL '10' SECOND)", "HOP(TABLE e, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND)"} {
		t.Run(fn[:strings.Index(fn, "(")], func(t *testing.T) { windowAggregateShapes(t, "TABLE("+fn+")") })
	}
}

// windowAggregateShapes is TestWindowAggregateShapes over the window TVF tvf (of table e).
func windowAggregateShapes(t *testing.T, tvf string) {
	shapes := []struct{ sel, group string }{
		{"window_start, window_end, k, COUNT(*) AS n, SUM(v) AS s", "window_start, window_end, k"},        // an int key
		{"window_start, window_end, s, COUNT(*) AS n, MAX(v) AS m", "window_start, window_end, s"},        // a string key
		{"window_end, k, s, COUNT(*) AS n", "window_start, window_end, k, s"},                             // two keys
		{"window_start, COUNT(*) AS n, SUM(v) AS s", "window_start, window_end"},                          // no other key
		{"window_start, window_end, k, MAX(window_time) AS t", "window_start, window_end, k"},             // window_time read
		{"window_start, window_end, k, COUNT(*) AS n", "window_start, window_end, k HAVING COUNT(*) > 1"}, // after the aggregate
		{"window_start, window_end, k % 3 AS m, COUNT(*) AS n", "window_start, window_end, k % 3"},        // a computed key
	}
	// Each window's keys, the first aside, are found by the user key alone — in the directly
	// indexed range, or far from it (keys up to 40M): checked against an aggregate that is not
	// windowed (GROUP BY without window_end), whose keys take the table of whole keys.
	plain := "SELECT window_start, k, COUNT(*) AS n, SUM(v) AS s FROM " + tvf + " GROUP BY window_start, k"
	db := openT(t, "")
	mustExec(t, db, "CREATE TABLE e (k BIGINT, s VARCHAR, v BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' HOUR)")
	for i, sh := range shapes {
		mustExec(t, db, fmt.Sprintf("CREATE MATERIALIZED VIEW w%d AS SELECT %s FROM %s GROUP BY %s", i, sh.sel, tvf, sh.group))
	}
	mustExec(t, db, "CREATE MATERIALIZED VIEW wide AS SELECT window_start, k, COUNT(*) AS n, SUM(v) AS s FROM "+tvf+" GROUP BY window_start, window_end, k")
	r := rand.New(rand.NewSource(7))
	for step := 0; step < 20; step++ {
		var rows []string
		for i := 0; i < 1+r.Intn(300); i++ {
			k := fmt.Sprint(r.Intn(20))
			if r.Intn(3) == 0 {
				k = fmt.Sprint(r.Intn(40) * 1_000_003)
			}
			if r.Intn(15) == 0 {
				k = "NULL" // a NULL key: that batch takes the path with columns
			}
			rows = append(rows, fmt.Sprintf("(%s, '%c', %d, TIMESTAMP '2024-01-01 00:00:00' + INTERVAL '%d' MILLISECOND)",
				k, 'a'+rune(r.Intn(3)), r.Intn(100), step*20_000+r.Intn(60_000))) // out of order, never late
		}
		mustExec(t, db, "INSERT INTO e VALUES "+strings.Join(rows, ", "))
		for i, sh := range shapes {
			// The filter names window columns, so it stays between the window and the aggregate.
			want := rowsOf(t, db, fmt.Sprintf("SELECT %s FROM (SELECT * FROM %s WHERE window_end > window_start) x GROUP BY %s", sh.sel, tvf, sh.group))
			if got := rowsOf(t, db, fmt.Sprintf("SELECT * FROM w%d", i)); got != want {
				t.Fatalf("step %d: w%d (GROUP BY %s) =\n%s\nwant\n%s", step, i, sh.group, got, want)
			}
		}
		if got, want := rowsOf(t, db, "SELECT * FROM wide"), rowsOf(t, db, plain); got != want {
			t.Fatalf("step %d: wide keys =\n%s\nwant\n%s", step, got, want)
		}
	}
	// Views made now start from the stored rows (backfill) and equal those that followed them.
	for i, sh := range shapes {
		mustExec(t, db, fmt.Sprintf("CREATE MATERIALIZED VIEW b%d AS SELECT %s FROM %s GROUP BY %s", i, sh.sel, tvf, sh.group))
		if got, want := rowsOf(t, db, fmt.Sprintf("SELECT * FROM b%d", i)), rowsOf(t, db, fmt.Sprintf("SELECT * FROM w%d", i)); got != want {
			t.Fatalf("b%d, made after the rows (GROUP BY %s) =\n%s\nwant\n%s", i, sh.group, got, want)
		}
	}
}

// TestWindowRunsMatchColumnPath: window aggregates that take their windows as runs — over an
// upsert table with updates, deletes, late rows and NULL keys, over a view, through a
// renaming subquery, in both emit modes, across checkpoints and reopens — equal twins that a
// filter keeping every row puts on the path with columns. (From the session 8 review.)
func TestWindowRunsMatchColumnPath(t *testing.T) {
	for _, fn := range []string{"TUMBLE(TABLE %s, DESCRIPTOR(ts), INTERVAL '10' SECOND)", "HOP(TABLE %s, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND)"} {
		t.Run(fn[:strings.Index(fn, "(")], func(t *testing.T) {
			windowRunsMatchColumnPath(t, func(tbl string) string { return "TABLE(" + fmt.Sprintf(fn, tbl) + ")" })
		})
	}
}

// windowRunsMatchColumnPath is TestWindowRunsMatchColumnPath for the window TVF tvf makes.
func windowRunsMatchColumnPath(t *testing.T, tvf func(table string) string) {
	dir := t.TempDir()
	path := filepath.Join(dir, "db")
	db, err := streamsql.Open(path, streamsql.WithCheckpointInterval(-1))
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, db, "CREATE TABLE e (id BIGINT PRIMARY KEY, k BIGINT, s VARCHAR, v BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '5' SECOND)")
	mustExec(t, db, "CREATE MATERIALIZED VIEW ev AS SELECT id, k, s, v, ts FROM e")
	type vq struct{ name, sel, from, group string }
	views := []vq{
		{"r1", "window_start, window_end, k, COUNT(*) AS n, SUM(v) AS s", tvf("e"), "window_start, window_end, k"},
		{"r2", "window_start, window_end, k, COUNT(*) AS n, SUM(v) AS s", tvf("ev"), "window_start, window_end, k"},
		{"r3", "window_end, k, COUNT(*) AS n", tvf("e"), "window_start, window_end, k"},
		{"r4", "ws, we, kk, COUNT(*) AS n", "(SELECT window_start AS ws, window_end AS we, k AS kk FROM " + tvf("e") + ") x", "ws, we, kk"},
	}
	for _, v := range views {
		mustExec(t, db, fmt.Sprintf("CREATE MATERIALIZED VIEW %s AS SELECT %s FROM %s GROUP BY %s", v.name, v.sel, v.from, v.group))
		from := v.from
		if !strings.HasPrefix(from, "(") {
			from = "(SELECT * FROM " + from + " WHERE window_end > window_start) y"
		} else {
			from = strings.Replace(from, ") x", " WHERE window_end > window_start) x", 1)
		}
		mustExec(t, db, fmt.Sprintf("CREATE MATERIALIZED VIEW %s_c AS SELECT %s FROM %s GROUP BY %s", v.name, v.sel, from, v.group))
		mustExec(t, db, fmt.Sprintf("CREATE MATERIALIZED VIEW %s_e AS SELECT %s FROM %s GROUP BY %s EMIT ON WINDOW CLOSE", v.name, v.sel, v.from, v.group))
		mustExec(t, db, fmt.Sprintf("CREATE MATERIALIZED VIEW %s_ec AS SELECT %s FROM %s GROUP BY %s EMIT ON WINDOW CLOSE", v.name, v.sel, from, v.group))
	}
	mustExec(t, db, "CREATE MATERIALIZED VIEW rr AS SELECT k, SUM(n) AS n FROM r1 GROUP BY k")
	r := rand.New(rand.NewSource(3))
	base := 0
	for step := 0; step < 120; step++ {
		switch r.Intn(4) {
		case 0, 1:
			var rows []string
			ids := r.Perm(400)
			late := r.Intn(5) == 0
			for i := 0; i < 1+r.Intn(200); i++ {
				k := fmt.Sprint(r.Intn(10))
				if r.Intn(4) == 0 {
					k = fmt.Sprint(r.Intn(30) * 7_000_001)
				}
				if r.Intn(40) == 0 {
					k = "NULL"
				}
				off := base + r.Intn(3_000)
				if late {
					off -= 12_000
				}
				rows = append(rows, fmt.Sprintf("(%d, %s, 'a', %d, TIMESTAMP '2024-01-01 00:10:00' + INTERVAL '%d' MILLISECOND)", ids[i], k, r.Intn(100), off))
			}
			mustExec(t, db, "INSERT INTO e VALUES "+strings.Join(rows, ", "))
		case 2:
			mustExec(t, db, fmt.Sprintf("DELETE FROM e WHERE id %% 7 = %d", r.Intn(7)))
		case 3:
			mustExec(t, db, fmt.Sprintf("UPDATE e SET v = v + 1 WHERE id %% 5 = %d", r.Intn(5)))
		}
		base += 2000
		if step%10 == 5 {
			mustExec(t, db, "CHECKPOINT")
		}
		if step == 25 || step == 77 {
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			if db, err = streamsql.Open(path, streamsql.WithCheckpointInterval(-1)); err != nil {
				t.Fatal(err)
			}
		}
		for _, v := range views {
			for _, sfx := range []string{"", "_e"} {
				want := rowsOf(t, db, "SELECT * FROM "+v.name+map[string]string{"": "_c", "_e": "_ec"}[sfx])
				got := rowsOf(t, db, "SELECT * FROM "+v.name+sfx)
				if got != want {
					t.Fatalf("step %d: %s%s =\n%s\nwant\n%s", step, v.name, sfx, got, want)
				}
			}
		}
	}
	db.Close()
}

// TestTopNFilterLimitsRank checks which WHEREs over a ranking function bound its Rank (EXPLAIN
// shows limit=n): an upper bound of the number, through projections, and not a number that
// another window function above it reads.
func TestTopNFilterLimitsRank(t *testing.T) {
	db := openT(t, "")
	mustExec(t, db, `CREATE TABLE t (id BIGINT PRIMARY KEY, p BIGINT, v BIGINT)`)
	for q, want := range map[string]string{
		`SELECT * FROM (SELECT id, ROW_NUMBER() OVER (PARTITION BY p ORDER BY v DESC) AS rn FROM t) x WHERE rn <= 3`:             "limit=3",
		`SELECT id FROM (SELECT id, v, RANK() OVER (ORDER BY v) AS r FROM t) x WHERE v > 0 AND r < 3 AND r <= 5`:                 "limit=2",
		`SELECT * FROM (SELECT id, DENSE_RANK() OVER (ORDER BY v) AS d FROM t) x WHERE d = 4`:                                    "limit=4",
		`SELECT * FROM (SELECT id, ROW_NUMBER() OVER (ORDER BY v) AS rn FROM t) x WHERE rn >= 3`:                                 "",
		`SELECT * FROM (SELECT id, ROW_NUMBER() OVER (ORDER BY v) AS rn FROM t) x WHERE rn + 0 <= 3`:                             "",
		`SELECT * FROM (SELECT id, ROW_NUMBER() OVER (ORDER BY v) AS rn, LAG(v) OVER (ORDER BY id) AS l FROM t) x WHERE rn <= 3`: "",
		`SELECT * FROM (SELECT id, COUNT(*) OVER (ORDER BY v) AS c FROM t) x WHERE c <= 3`:                                       "",
	} {
		plan := strings.Join(queryStrings(t, db, "EXPLAIN CREATE MATERIALIZED VIEW x AS "+q), "\n")
		got := ""
		if i := strings.Index(plan, "limit="); i >= 0 {
			got = strings.Fields(plan[i:])[0]
		}
		if got != want {
			t.Errorf("%s: the Rank has %q, want %q in\n%s", q, got, want, plan)
		}
	}
}
