package streamsql_test

import (
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"testing"
	"time"

	"github.com/streamsql/streamsql"
)

const nexmarkBids = `CREATE TABLE bid (auction BIGINT, bidder BIGINT, price BIGINT, channel VARCHAR, url VARCHAR,
  date_time TIMESTAMP(3), extra VARCHAR, WATERMARK FOR date_time AS date_time - INTERVAL '2' SECOND)
  WITH (connector = 'nexmark', 'nexmark.table' = 'bid', 'events.max' = '50000', 'seed' = '7', 'nexmark.inter.event.ms' = '1'%s)`

const bidView = `CREATE MATERIALIZED VIEW per_auction AS SELECT window_start, auction, COUNT(*) AS n, SUM(price) AS p
  FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(date_time), INTERVAL '10' SECOND)) GROUP BY window_start, window_end, auction`

// waitFinished polls system.sources until the generator has produced every row.
func waitFinished(t *testing.T, db *streamsql.DB) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		rows, err := db.Query("SELECT status FROM system.sources")
		if err != nil {
			t.Fatal(err)
		}
		status := ""
		if rows.Next() {
			status, _ = rows.Values()[0].(string)
		}
		rows.Close()
		switch status {
		case "finished":
			return
		case "running":
			time.Sleep(20 * time.Millisecond)
		default:
			t.Fatalf("source status %q", status)
		}
	}
	t.Fatal("the generator did not finish in time")
}

// TestGeneratorResumesExactlyOnce stops a rate-limited Nexmark table mid-stream (Close),
// reopens it, and checks that the table and a view over it equal those of one uninterrupted
// run: the generator's offset is committed with its rows, so nothing is lost or repeated.
func TestGeneratorResumesExactlyOnce(t *testing.T) {
	ref, err := streamsql.Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	mustExec(t, ref, sprintf(nexmarkBids, ""))
	mustExec(t, ref, bidView)
	waitFinished(t, ref)
	want := snapshotQuery(t, ref, "SELECT * FROM per_auction")
	wantRows := countRows(t, ref, "SELECT COUNT(*) FROM bid")

	dir := filepath.Join(t.TempDir(), "db")
	db, err := streamsql.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, db, sprintf(nexmarkBids, ", 'events.per.second' = '100000'"))
	mustExec(t, db, bidView)
	for countRows(t, db, "SELECT COUNT(*) FROM bid") == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = streamsql.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	waitFinished(t, db)
	if got := countRows(t, db, "SELECT COUNT(*) FROM bid"); got != wantRows {
		t.Fatalf("bids after a restart: %d, want %d", got, wantRows)
	}
	if got := countRows(t, db, "SELECT COUNT(*) FROM (SELECT auction, bidder, price, date_time FROM bid GROUP BY auction, bidder, price, date_time HAVING COUNT(*) > 1) d"); got != 0 {
		t.Errorf("%d bids were stored twice", got)
	}
	got := snapshotQuery(t, db, "SELECT * FROM per_auction")
	if len(got) != len(want) {
		t.Fatalf("view rows: %d, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("view differs at row %d: %s vs %s", i, got[i], want[i])
		}
	}
}

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }

// snapshotQuery returns a query's rows as sorted text.
func snapshotQuery(t *testing.T, db *streamsql.DB, q string) []string {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		out = append(out, fmt.Sprint(rows.Values()...))
	}
	sort.Strings(out)
	return out
}

// TestConnectorOptionErrorPosition: a bad connector option's error points at that option,
// not at the first one; an error naming no option points at the first.
func TestConnectorOptionErrorPosition(t *testing.T) {
	db := openT(t, "")
	for _, c := range []struct{ sql, want string }{
		{"CREATE TABLE g (k BIGINT)\nWITH (\n  connector = 'datagen',\n  'rows.per.second' = '10',\n  'fields.k.kind' = 'bogus'\n)",
			"option 'fields.k.kind' = 'bogus'.* at line 5, column 3"},
		{"CREATE TABLE g2 (k BIGINT)\nWITH (connector = 'datagen', 'fields.nope.kind' = 'random')",
			"option 'fields.nope.kind' names no column.* at line 2, column 30"},
		{"CREATE TABLE g3 (k BIGINT)\nWITH (connector = 'file', format = 'csv')",
			"at line 2, column 7"},
	} {
		_, err := db.Exec(c.sql)
		if err == nil || !regexp.MustCompile(c.want).MatchString(err.Error()) {
			t.Errorf("%s:\n got %v\nwant /%s/", c.sql, err, c.want)
		}
	}
}
