package streamsql_test

// Adversarial QA guards for the connectors' decoding (SPEC §6: "A malformed record from a
// source goes to system.bad_records, not into a panic"; README "Files in" and "Kafka in and
// out"): type edges of JSON and CSV lines, the bad_records columns (partition, byte offset,
// error, record), WATERMARK expression failures, a source that goes on after bad records, and
// datagen option edges.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/streamsql/streamsql"
)

// qaFileTable writes text to a new file and creates table t (cols) reading it with the given
// format, then FLUSHes.
func qaFileTable(t *testing.T, cols, format, text string) (*streamsql.DB, string) {
	t.Helper()
	in := filepath.Join(t.TempDir(), "in."+format)
	if err := os.WriteFile(in, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	db, err := streamsql.Open("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	mustExec(t, db, fmt.Sprintf("CREATE TABLE t (%s) WITH (connector = 'file', path = '%s', format = '%s')", cols, in, format))
	mustExec(t, db, "FLUSH")
	return db, in
}

// qaLines joins lines, each ended by "\n", and returns the byte offset of each.
func qaLines(lines ...string) (string, []int) {
	var sb strings.Builder
	offs := make([]int, len(lines))
	for i, l := range lines {
		offs[i] = sb.Len()
		sb.WriteString(l + "\n")
	}
	return sb.String(), offs
}

func qaWant(t *testing.T, got []string, want ...string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// TestQAConnectorsJSONTypeEdges: BIGINT extremes are exact, one past them is bad; DECIMAL
// rounds to its scale (as CAST and INSERT do) and is bad past its precision; DOUBLE out of
// range, a fractional or string integer, a string boolean, an object for VARCHAR, an
// impossible DATE, a non-object, text after the object and two fields naming one column in
// different case are each a bad record with its line's byte offset; unicode escapes, CRLF,
// nested extra fields, zone offsets (converted to UTC) and blank lines are fine.
func TestQAConnectorsJSONTypeEdges(t *testing.T) {
	text, offs := qaLines(
		`{"a": 9223372036854775807, "d": 1.5, "s": "x", "b": true, "ts": "2024-01-01 00:00:00", "dt": "2024-01-01", "m": 12.345}`, // 0
		`{"a": 9223372036854775808}`,                    // 1 bad
		`{"a": -9223372036854775808, "m": "99999.999"}`, // 2
		`{"m": 123456.7}`,                               // 3 bad
		`{"m": 1.23456}`,                                // 4 rounds
		`{"d": 1e400}`,                                  // 5 bad
		`{"ts": "2024-01-01T10:00:00+02:00"}`,           // 6 zone
		`{"ts": 1.5}`,                                   // 7 bad
		`{"ts": -1}`,                                    // 8
		`{"dt": "2024-02-30"}`,                          // 9 bad
		`{"b": "true"}`,                                 // 10 bad
		`{"s": {"x": 1}}`,                               // 11 bad
		`{"s": "caf\u00e9 \ud83d\ude00"}`,               // 12
		`{"a": 1, "A": 2}`,                              // 13 bad
		`[1]`,                                           // 14 bad
		`null`,                                          // 15 bad
		`{"a": 1} x`,                                    // 16 bad
		``,                                              // 17 skipped
		`   `,                                           // 18 skipped
		`{"a": 1.0}`,                                    // 19 bad
		`{"a": "5"}`,                                    // 20 bad
		`{"extra": {"deep": [1, {"x": null}]}, "a": 7}`, // 21
		"{\"a\": 8}\r",                      // 22 CRLF
		`{"ts": "9999-12-31 23:59:59.999"}`, // 23
		`{"ts": 253402300800000}`,           // 24 bad: past 9999
	)
	db, _ := qaFileTable(t, "a BIGINT, d DOUBLE, s VARCHAR, b BOOLEAN, ts TIMESTAMP(3), dt DATE, m DECIMAL(8,3)", "json", text)
	qaWant(t, queryStrings(t, db, "SELECT a, d, s, b, ts, CAST(dt AS VARCHAR), CAST(m AS VARCHAR) FROM t"),
		"9223372036854775807|1.5|x|true|2024-01-01 00:00:00.000|2024-01-01|12.345",
		"-9223372036854775808|NULL|NULL|NULL|NULL|NULL|99999.999",
		"NULL|NULL|NULL|NULL|NULL|NULL|1.235",
		"NULL|NULL|NULL|NULL|2024-01-01 08:00:00.000|NULL|NULL",
		"NULL|NULL|NULL|NULL|1969-12-31 23:59:59.999|NULL|NULL",
		"NULL|NULL|café 😀|NULL|NULL|NULL|NULL",
		"7|NULL|NULL|NULL|NULL|NULL|NULL",
		"8|NULL|NULL|NULL|NULL|NULL|NULL",
		"NULL|NULL|NULL|NULL|9999-12-31 23:59:59.999|NULL|NULL",
	)
	lines := strings.Split(text, "\n")
	bad := func(i int, err string) string {
		return fmt.Sprintf("t|0|%d|%s|%s", offs[i], err, lines[i])
	}
	qaWant(t, queryStrings(t, db, "SELECT table_name, source_partition, source_offset, error, record FROM system.bad_records"),
		bad(1, "field a: expected an integer for BIGINT, got 9223372036854775808"),
		bad(3, "field m: value 123456.7 out of range for DECIMAL(8,3)"),
		bad(5, "field d: expected a number for DOUBLE, got 1e400"),
		bad(7, "field ts: expected epoch milliseconds or a timestamp string, got 1.5"),
		bad(9, `field dt: invalid DATE "2024-02-30": expected YYYY-MM-DD`),
		bad(10, `field b: expected true or false for BOOLEAN, got "true"`),
		bad(11, `field s: expected a string for VARCHAR, got {"x": 1}`),
		bad(13, "fields A and a both name column a"),
		bad(14, "not a JSON object: an array"),
		bad(15, "not a JSON object: null"),
		bad(16, "not a JSON object: text after the object"),
		bad(19, "field a: expected an integer for BIGINT, got 1.0"),
		bad(20, `field a: expected an integer for BIGINT, got "5"`),
		bad(24, "field ts: epoch milliseconds 253402300800000 are outside years 0001-9999"),
	)
	qaWant(t, queryStrings(t, db, "SELECT position, row_count, status, lag FROM system.sources"),
		fmt.Sprintf("%d|9|running|0", len(text)))
}

// TestQAConnectorsCSVTypeEdges: RFC 4180 quoting, epoch milliseconds and zones for
// TIMESTAMP, CAST's boolean texts, a wrong field count, an unterminated quote, an empty
// field in a NOT NULL column (a PRIMARY KEY, the WATERMARK column) each as documented.
func TestQAConnectorsCSVTypeEdges(t *testing.T) {
	text, offs := qaLines(
		`1,hello,true,2024-01-01 00:00:00,12.345`,             // 0
		`2,"quoted, ""comma""",yes,1704067200000,1`,           // 1
		`3,x,0,2024-01-01T10:00:00Z,`,                         // 2
		`4,x,maybe,2024-01-01 00:00:00,`,                      // 3 bad
		`5,x,,2024-01-01 00:00:00,123456.7`,                   // 4 bad
		`6,2`,                                                 // 5 bad
		`7,x,,2024-01-01 00:00:00,,`,                          // 6 bad
		`8,"unterminated,,2024-01-01 00:00:00,`,               // 7 bad
		`,x,,2024-01-01 00:00:00,`,                            // 8 bad: key
		`10,x,,,`,                                             // 9 bad: event time
		"11,crlf,OFF,2024-01-01 00:00:01,\r",                  // 10
		`12, spaced ,TRUE ,2024-01-01 00:00:00+05:00,1.23456`, // 11
	)
	db, _ := qaFileTable(t, "k BIGINT, s VARCHAR, b BOOLEAN, ts TIMESTAMP(3), m DECIMAL(8,3), PRIMARY KEY (k) NOT ENFORCED, WATERMARK FOR ts AS ts", "csv", text)
	qaWant(t, queryStrings(t, db, "SELECT k, '[' || s || ']', b, ts, CAST(m AS VARCHAR) FROM t ORDER BY k"),
		"1|[hello]|true|2024-01-01 00:00:00.000|12.345",
		`2|[quoted, "comma"]|true|2024-01-01 00:00:00.000|1.000`,
		"3|[x]|false|2024-01-01 10:00:00.000|NULL",
		"11|[crlf]|false|2024-01-01 00:00:01.000|NULL",
		"12|[ spaced ]|true|2023-12-31 19:00:00.000|1.235",
	)
	qaWant(t, queryStrings(t, db, "SELECT source_partition, source_offset, error FROM system.bad_records"),
		fmt.Sprintf("0|%d|column b: expected true or false for BOOLEAN, got maybe", offs[3]),
		fmt.Sprintf("0|%d|column m: value 123456.7 out of range for DECIMAL(8,3)", offs[4]),
		fmt.Sprintf("0|%d|2 fields, the table has 5 columns", offs[5]),
		fmt.Sprintf("0|%d|6 fields, the table has 5 columns", offs[6]),
		fmt.Sprintf(`0|%d|parse error on line 1, column 38: extraneous or missing " in quoted-field`, offs[7]),
		fmt.Sprintf("0|%d|column k is NOT NULL and the field is empty", offs[8]),
		fmt.Sprintf("0|%d|column ts is NOT NULL and the field is empty", offs[9]),
	)
}

// TestQAConnectorsWatermarkFailures: a line whose WATERMARK expression fails (division by
// zero, a bad cast, a time out of range) is a bad record naming the expression and its place
// in the definition; the lines around it are rows and the watermark follows them.
func TestQAConnectorsWatermarkFailures(t *testing.T) {
	text, offs := qaLines(
		`{"k": 0, "s": "zzz", "ts": "2024-01-01 00:00:00"}`,
		`{"k": 1, "s": "2024-01-01 00:00:05", "ts": "2024-01-01 00:00:00"}`,
		`{"k": 5, "s": "bad", "ts": "2024-01-01 00:00:00"}`,
	)
	db, _ := qaFileTable(t, "k BIGINT, s VARCHAR, ts TIMESTAMP(3), WATERMARK FOR ts AS TIMESTAMPADD(SECOND, 10 / k, CAST(s AS TIMESTAMP(3)))", "json", text)
	qaWant(t, queryStrings(t, db, "SELECT k FROM t"), "1")
	qaWant(t, queryStrings(t, db, "SELECT source_offset, error FROM system.bad_records"),
		fmt.Sprintf("%d|WATERMARK expression: division by zero (in the definition of table t: line 1, column 96)", offs[0]),
		fmt.Sprintf(`%d|WATERMARK expression: invalid TIMESTAMP(3) value "bad" (in the definition of table t: line 1, column 104)`, offs[2]),
	)
	qaWant(t, queryStrings(t, db, "SELECT watermark FROM system.watermarks WHERE name = 't'"), "2024-01-01 00:00:15.000")
}

// TestQAConnectorsGoesOnAfterBad: a source is not stopped by bad lines, including a line too
// long to read: lines appended afterwards still stream in, and a line one byte short of
// the limit is a row.
func TestQAConnectorsGoesOnAfterBad(t *testing.T) {
	text := "1,a\n" + "2," + strings.Repeat("x", 5<<20) + "\n" + "x,y\n" + "3," + strings.Repeat("y", (4<<20)-3) + "\n"
	db, in := qaFileTable(t, "k BIGINT, s VARCHAR", "csv", text)
	qaWant(t, queryStrings(t, db, "SELECT k, LENGTH(s) FROM t"), "1|1", "3|4194301")
	qaWant(t, queryStrings(t, db, "SELECT source_offset, error FROM system.bad_records"),
		"4|a line longer than 4194304 bytes",
		fmt.Sprintf("%d|column k: expected an integer for BIGINT, got x", 4+2+(5<<20)+1))
	f, err := os.OpenFile(in, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("4,after\n")
	f.Close()
	waitPosition(t, db, "t", int64(len(text)+len("4,after\n")))
	mustExec(t, db, "FLUSH")
	qaWant(t, queryStrings(t, db, "SELECT k, s FROM t WHERE k = 4"), "4|after")
	qaWant(t, queryStrings(t, db, "SELECT status, row_count FROM system.sources"), "running|3")
}

// TestQAConnectorsDatagenEdges: an INT or DECIMAL sequence ends where its type does; a
// BIGINT random over the whole range stays in it; option values out of range are refused at
// the option.
func TestQAConnectorsDatagenEdges(t *testing.T) {
	db, err := streamsql.Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	mustExec(t, db, "CREATE TABLE g1 (k INT) WITH (connector = 'datagen', 'number-of-rows' = '5', 'fields.k.kind' = 'sequence', 'fields.k.start' = '2147483646')")
	mustExec(t, db, "CREATE TABLE g2 (k DECIMAL(4,2)) WITH (connector = 'datagen', 'number-of-rows' = '5', 'fields.k.kind' = 'sequence', 'fields.k.start' = '98')")
	mustExec(t, db, "FLUSH")
	qaWant(t, queryStrings(t, db, "SELECT k FROM g1 ORDER BY k"), "2147483646", "2147483647")
	qaWant(t, queryStrings(t, db, "SELECT CAST(k AS VARCHAR) FROM g2 ORDER BY k"), "98.00", "99.00")
	qaWant(t, queryStrings(t, db, "SELECT table_name, status, row_count FROM system.sources ORDER BY table_name"), "g1|finished|2", "g2|finished|2")
	for _, c := range []struct{ sql, want string }{
		{"CREATE TABLE e (k INT) WITH (connector = 'datagen', 'fields.k.kind' = 'random', 'fields.k.min' = '-9223372036854775808')",
			"datagen: option 'fields.k.min' = '-9223372036854775808': expected an integer in [-2147483648, 2147483647] at line 1, column 81"},
		{"CREATE TABLE e (k DECIMAL(4,2)) WITH (connector = 'datagen', 'fields.k.kind' = 'random', 'fields.k.max' = '1000')",
			"datagen: option 'fields.k.max' = '1000': expected a number that fits DECIMAL(4,2) at line 1, column 90"},
		{"CREATE TABLE e (d DOUBLE) WITH (connector = 'datagen', 'fields.d.kind' = 'random', 'fields.d.min' = 'NaN')",
			"datagen: option 'fields.d.min' = 'NaN': expected a finite DOUBLE at line 1, column 84"},
		{"CREATE TABLE e (s VARCHAR) WITH (connector = 'datagen', 'fields.s.kind' = 'random', 'fields.s.length' = '2000000000')",
			"datagen: option 'fields.s.length' = '2000000000': expected a string length, an integer in [0, 1048576] at line 1, column 85"},
		{"CREATE TABLE e (k BIGINT) WITH (connector = 'datagen', 'fields.k.kind' = 'sequence', 'fields.k.start' = '5', 'fields.k.end' = '1')",
			"datagen: option 'fields.k.end' = '1': expected an integer in [-9223372036854775808, 9223372036854775806] for BIGINT column k, not below 'start' at line 1, column 110"},
		{"CREATE TABLE e (dt DATE) WITH (connector = 'datagen', 'fields.dt.kind' = 'sequence')",
			"datagen: option 'fields.dt.kind' = 'sequence': expected 'random' for DATE column dt at line 1, column 55"},
	} {
		_, err := db.Exec(c.sql)
		if err == nil || err.Error() != c.want {
			t.Errorf("%s:\n got  %v\n want %s", c.sql, err, c.want)
		}
	}
	qaWant(t, queryStrings(t, db, "SELECT COUNT(*) FROM system.sources"), "2")
}

// TestDatagenSequenceAndRandomEdges: a BIGINT sequence ends at the type's last value instead
// of wrapping, event times end with year 9999, 'number-of-rows' holds however wide the sequence's range, and random DOUBLEs
// between bounds whose difference overflows stay between them.
func TestDatagenSequenceAndRandomEdges(t *testing.T) {
	db, err := streamsql.Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	mustExec(t, db, `CREATE TABLE w (k BIGINT) WITH (connector = 'datagen', 'number-of-rows' = '5', 'fields.k.kind' = 'sequence', 'fields.k.start' = '9223372036854775805')`)
	mustExec(t, db, `CREATE TABLE g (k BIGINT) WITH (connector = 'datagen', 'number-of-rows' = '3', 'fields.k.kind' = 'sequence', 'fields.k.start' = '-1', 'fields.k.end' = '9223372036854775806')`)
	mustExec(t, db, `CREATE TABLE d (x DOUBLE) WITH (connector = 'datagen', 'number-of-rows' = '50', 'fields.x.kind' = 'random', 'fields.x.min' = '-1e308', 'fields.x.max' = '1e308')`)
	mustExec(t, db, `CREATE TABLE e (ts TIMESTAMP(3)) WITH (connector = 'datagen', 'number-of-rows' = '5', 'fields.ts.kind' = 'timestamp', 'fields.ts.start' = '9999-12-31 23:59:58.999', 'fields.ts.step.ms' = '1000')`)
	mustExec(t, db, "FLUSH")
	wantRows(t, db, "SELECT CAST(ts AS VARCHAR) FROM e", "[9999-12-31 23:59:58.999] [9999-12-31 23:59:59.999]")
	wantRows(t, db, "SELECT k FROM w", "[9223372036854775805] [9223372036854775806]")
	wantRows(t, db, "SELECT k FROM g", "[-1] [0] [1]")
	wantRows(t, db, "SELECT COUNT(*), COUNT(*) FILTER (WHERE x BETWEEN -1e308 AND 1e308) FROM d", "[50 50]")
	wantRows(t, db, "SELECT table_name, status FROM system.sources ORDER BY table_name", "[d finished] [e finished] [g finished] [w finished]")
}

// TestQAConnectorsTextEdges: a line that is not valid UTF-8, or a JSON string with a lone
// UTF-16 surrogate, is a bad record rather than stored with U+FFFD in its place; a CSV
// DOUBLE reads as CAST reads it (Inf, NaN, a plus sign), a JSON one only as a JSON number;
// a TIMESTAMP that a zone offset moves out of years 0001-9999 is a bad record, and a bad
// one's error quotes it as written.
func TestQAConnectorsTextEdges(t *testing.T) {
	text, offs := qaLines(`{"s": "ok", "d": 1.5}`, "{\"s\": \"bad\xff\xfeutf\"}", `{"s": "\ud800"}`, `{"s": "\ufffd"}`,
		`{"d": "Inf"}`, `{"ts": "9999-12-31T23:00:00-02:00"}`, `{"ts": "2024-01-01 00:00:00 UTC"}`, `{"ts": "2024-01-01T10:00:00Z"}`)
	db, _ := qaFileTable(t, "s VARCHAR, d DOUBLE, ts TIMESTAMP(3)", "json", text)
	qaWant(t, queryStrings(t, db, "SELECT COALESCE(s, '-') || ' ' || COALESCE(CAST(d AS VARCHAR), '-') || ' ' || COALESCE(CAST(ts AS VARCHAR), '-') FROM t"),
		"ok 1.5 -", "\ufffd - -", "- - 2024-01-01 10:00:00")
	qaWant(t, queryStrings(t, db, "SELECT CAST(source_offset AS VARCHAR) || ' ' || error FROM system.bad_records ORDER BY source_offset"),
		fmt.Sprintf("%d not valid UTF-8", offs[1]),
		fmt.Sprintf("%d field s: a string with an invalid escape (a lone UTF-16 surrogate)", offs[2]),
		fmt.Sprintf(`%d field d: expected a number for DOUBLE, got "Inf"`, offs[4]),
		fmt.Sprintf(`%d field ts: TIMESTAMP "9999-12-31T23:00:00-02:00" is outside years 0001-9999 in UTC`, offs[5]),
		fmt.Sprintf(`%d field ts: invalid TIMESTAMP "2024-01-01 00:00:00 UTC"`, offs[6]))

	text, offs = qaLines("Inf", "-Inf", "NaN", "+5", "1e3", "x", "caf\xe9")
	db, _ = qaFileTable(t, "d DOUBLE", "csv", text)
	qaWant(t, queryStrings(t, db, "SELECT CAST(d AS VARCHAR) FROM t"), "Infinity", "-Infinity", "NaN", "5", "1000")
	qaWant(t, queryStrings(t, db, "SELECT CAST(source_offset AS VARCHAR) || ' ' || error FROM system.bad_records ORDER BY source_offset"),
		fmt.Sprintf("%d column d: expected a number for DOUBLE, got x", offs[5]),
		fmt.Sprintf("%d column d: the field is not valid UTF-8", offs[6]))
}
