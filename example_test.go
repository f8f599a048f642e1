package streamsql_test

import (
	"database/sql"
	"fmt"
	"log"
	"time"

	"github.com/streamsql/streamsql"
)

// Open a database, declare a table with a watermark, maintain a 10-second TUMBLE view over
// it, insert rows and read the view.
func ExampleOpen() {
	db, err := streamsql.Open("") // "" or ":memory:" is in memory; a path persists
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()

	stmts := []string{
		`CREATE TABLE bids (auction BIGINT, price BIGINT, ts TIMESTAMP(3),
		   WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)`,
		`CREATE MATERIALIZED VIEW per10s AS
		   SELECT window_start, auction, COUNT(*) AS n, SUM(price) AS total
		   FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '10' SECOND))
		   GROUP BY window_start, window_end, auction`,
		`INSERT INTO bids VALUES
		   (1, 10, TIMESTAMP '2024-01-01 00:00:01'),
		   (1, 20, TIMESTAMP '2024-01-01 00:00:09.500'),
		   (2,  5, TIMESTAMP '2024-01-01 00:00:10'),
		   (2,  7, TIMESTAMP '2024-01-01 00:00:12')`,
		`FLUSH`,
	}
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			log.Fatal(err)
		}
	}

	rows, err := db.Query(`SELECT window_start, auction, n, total FROM per10s ORDER BY window_start, auction`)
	if err != nil {
		log.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var start time.Time
		var auction, n, total int64
		if err := rows.Scan(&start, &auction, &n, &total); err != nil {
			log.Fatal(err)
		}
		fmt.Println(start.Format("15:04:05"), auction, n, total)
	}
	if err := rows.Err(); err != nil {
		log.Fatal(err)
	}
	// Output:
	// 00:00:00 1 2 30
	// 00:00:10 2 2 12
}

// The same through database/sql: import the package for its driver "streamsql" and bind
// values with ? placeholders. EMIT ON WINDOW CLOSE shows a window once it is complete.
func Example_databaseSQL() {
	db, err := sql.Open("streamsql", ":memory:") // or "path/to/db?sync=off"
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()

	mustExec := func(q string, args ...any) {
		if _, err := db.Exec(q, args...); err != nil {
			log.Fatal(err)
		}
	}
	mustExec(`CREATE TABLE clicks (page VARCHAR, ts TIMESTAMP(3),
	            WATERMARK FOR ts AS ts - INTERVAL '2' SECOND)`)
	mustExec(`CREATE MATERIALIZED VIEW closed AS
	            SELECT window_start, window_end, page, COUNT(*) AS clicks
	            FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '1' MINUTE))
	            GROUP BY window_start, window_end, page
	            EMIT ON WINDOW CLOSE`)

	t0 := time.Date(2024, 1, 1, 12, 0, 0, 0, time.UTC)
	ins, err := db.Prepare(`INSERT INTO clicks VALUES (?, ?)`)
	if err != nil {
		log.Fatal(err)
	}
	defer ins.Close()
	for _, c := range []struct {
		page string
		at   time.Duration
	}{
		{"/home", 5 * time.Second},
		{"/docs", 20 * time.Second},
		{"/home", 50 * time.Second},
		{"/home", 70 * time.Second}, // the watermark reaches 12:01:08: 12:00 closes
	} {
		if _, err := ins.Exec(c.page, t0.Add(c.at)); err != nil {
			log.Fatal(err)
		}
	}
	mustExec(`FLUSH`)

	rows, err := db.Query(`SELECT window_start, window_end, page, clicks FROM closed ORDER BY page`)
	if err != nil {
		log.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var start, end time.Time
		var page string
		var clicks int64
		if err := rows.Scan(&start, &end, &page, &clicks); err != nil {
			log.Fatal(err)
		}
		fmt.Printf("[%s, %s) %-5s %d\n", start.Format("15:04"), end.Format("15:04"), page, clicks)
	}
	if err := rows.Err(); err != nil {
		log.Fatal(err)
	}
	// Output:
	// [12:00, 12:01) /docs 1
	// [12:00, 12:01) /home 2
}
