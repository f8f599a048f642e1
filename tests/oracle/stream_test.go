package oracle

import (
	"testing"

	"github.com/streamsql/streamsql"
)

func TestProbe(t *testing.T) {
	db, err := streamsql.Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{
		`CREATE TABLE ev (k BIGINT, v BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)`,
		`CREATE MATERIALIZED VIEW tum AS SELECT k, window_start, window_end, window_time, COUNT(*) AS n, SUM(v) AS s, MIN(v) AS mn, MAX(v) AS mx FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '4' SECOND)) GROUP BY k, window_start, window_end, window_time`,
		`INSERT INTO ev VALUES (1, 2, TIMESTAMP '2024-01-01 00:00:01.5'), (1, 3, TIMESTAMP '2024-01-01 00:00:09'), (2, 3, TIMESTAMP '2024-01-01 00:00:02')`,
		`FLUSH`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for _, q := range []string{`SELECT * FROM tum`, `SELECT * FROM system.late_rows`, `SELECT * FROM system.watermarks`} {
		rows, err := db.Query(q)
		if err != nil {
			t.Fatal(err)
		}
		t.Log(rows.Columns(), rows.ColumnTypes())
		for rows.Next() {
			t.Logf("%#v", rows.Values())
		}
		rows.Close()
	}
}
