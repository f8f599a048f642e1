package streamsql_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/streamsql/streamsql"
)

// TestFileSource reads a JSON-lines file into a table with a window view, follows lines
// appended later (a last line without its newline is taken once the file stops growing),
// sets malformed lines aside as bad records, and after a reopen resumes at the committed
// byte offset: every line lands once.
func TestFileSource(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "bids.json")
	line := func(sec, auction, price int) string {
		return fmt.Sprintf(`{"auction": %d, "price": %d, "ts": "2024-01-01 00:00:%02d"}`+"\n", auction, price, sec)
	}
	write := func(flag int, text string) int64 {
		f, err := os.OpenFile(in, flag|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(text); err != nil {
			t.Fatal(err)
		}
		st, _ := f.Stat()
		return st.Size()
	}
	size := write(os.O_CREATE|os.O_TRUNC, line(1, 1, 10)+line(2, 2, 20)+"not json\n"+line(12, 1, 5))
	dbPath := filepath.Join(dir, "db")
	db, err := streamsql.Open(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, db, fmt.Sprintf(`CREATE TABLE bids (auction BIGINT, price BIGINT, ts TIMESTAMP(3),
		WATERMARK FOR ts AS ts) WITH (connector = 'file', path = '%s', format = 'json')`, in))
	mustExec(t, db, `CREATE MATERIALIZED VIEW w AS SELECT window_start, COUNT(*) AS n, SUM(price) AS s
		FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY window_start, window_end`)
	waitPosition(t, db, "bids", size)
	mustExec(t, db, "FLUSH")
	wantRows(t, db, "SELECT * FROM w ORDER BY window_start", "[2024-01-01 00:00:00 +0000 UTC 2 30] [2024-01-01 00:00:10 +0000 UTC 1 5]")
	wantRows(t, db, "SELECT source_offset, error LIKE 'not a JSON object%', record FROM system.bad_records", fmt.Sprintf("[%d true not json]", len(line(1, 1, 10)+line(2, 2, 20))))

	// Appended lines stream in; the last one has no newline yet.
	size = write(os.O_APPEND, line(13, 3, 7)+strings.TrimSuffix(line(25, 3, 1), "\n"))
	waitPosition(t, db, "bids", size)
	mustExec(t, db, "FLUSH")
	wantRows(t, db, "SELECT COUNT(*), SUM(price) FROM bids", "[5 43]")
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	// Reopened, it resumes after the last committed record: nothing is read twice.
	size = write(os.O_APPEND, "\n"+line(26, 4, 100))
	db, err = streamsql.Open(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	waitPosition(t, db, "bids", size)
	mustExec(t, db, "FLUSH")
	wantRows(t, db, "SELECT COUNT(*), SUM(price) FROM bids", "[6 143]")
	wantRows(t, db, "SELECT * FROM w ORDER BY window_start", "[2024-01-01 00:00:00 +0000 UTC 2 30] [2024-01-01 00:00:10 +0000 UTC 2 12] [2024-01-01 00:00:20 +0000 UTC 2 101]")
}

// TestFileSourceCSV reads CSV lines (columns in order, an empty field NULL) and refuses bad
// options and a missing file at CREATE TABLE with an error naming the problem.
func TestFileSourceCSV(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "t.csv")
	// Booleans take the text a CAST to BOOLEAN takes (true, FALSE, yes, 0, ...); "maybe" is bad.
	// A TIMESTAMP is text or epoch milliseconds.
	text := "1,\"a, b\",true,2024-01-01 00:00:01.5\n2,,FALSE,2024-01-01 00:00:02\nx,y,true,2024-01-01 00:00:03\n" +
		"3,c,yes,2024-01-01 00:00:04\n4,d,0,1704067205000\n5,e,maybe,2024-01-01 00:00:06\n" // epoch ms as in JSON
	if err := os.WriteFile(in, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	db, err := streamsql.Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	mustExec(t, db, fmt.Sprintf(`CREATE TABLE t (id BIGINT, name VARCHAR, ok BOOLEAN, ts TIMESTAMP(3)) WITH (connector = 'file', path = '%s', format = 'csv')`, in))
	waitPosition(t, db, "t", int64(len(text)))
	wantRows(t, db, "SELECT * FROM t ORDER BY id", "[1 a, b true 2024-01-01 00:00:01.5 +0000 UTC] [2 <nil> false 2024-01-01 00:00:02 +0000 UTC] "+
		"[3 c true 2024-01-01 00:00:04 +0000 UTC] [4 d false 2024-01-01 00:00:05 +0000 UTC]")
	wantRows(t, db, "SELECT COUNT(*) FROM system.bad_records WHERE table_name = 't'", "[2]")
	for opts, want := range map[string]string{
		fmt.Sprintf("connector = 'file', path = '%s', format = 'xml'", in): "option 'format' = 'xml': expected 'json' or 'csv'",
		"connector = 'file'": "option 'path' is required",
		fmt.Sprintf("connector = 'file', path = '%s'", filepath.Join(dir, "no")): "no such file",
		fmt.Sprintf("connector = 'file', path = '%s', topic = 'x'", in):          "unknown option 'topic'",
	} {
		_, err := db.Exec("CREATE TABLE bad (id BIGINT) WITH (" + opts + ")")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("WITH (%s): got %v, want an error containing %q", opts, err, want)
		}
	}
}

// wantRows checks q's rows, each printed as fmt.Sprint of its values, space-separated.
func wantRows(t *testing.T, db *streamsql.DB, q, want string) {
	t.Helper()
	var got []string
	for _, r := range queryRows(t, db, q) {
		got = append(got, fmt.Sprint(r))
	}
	if strings.Join(got, " ") != want {
		t.Fatalf("%s:\ngot  %s\nwant %s", q, strings.Join(got, " "), want)
	}
}

// TestFileSourceLongAndPartialLines: a line too long to read becomes one bad record and the
// lines after it are read; a line written in two pieces with a pause between is one row.
func TestFileSourceLongAndPartialLines(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "t.json")
	long := `{"a": 1, "pad": "` + strings.Repeat("x", 5<<20) + `"}` + "\n"
	if err := os.WriteFile(in, []byte(long+`{"a": 2}`+"\n"+`{"a": `), 0o644); err != nil {
		t.Fatal(err)
	}
	db, err := streamsql.Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	mustExec(t, db, fmt.Sprintf(`CREATE TABLE t (a BIGINT) WITH (connector = 'file', path = '%s')`, in))
	waitPosition(t, db, "t", int64(len(long)+len(`{"a": 2}`+"\n")))
	time.Sleep(300 * time.Millisecond) // the writer pauses mid-line
	f, err := os.OpenFile(in, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("3}\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	waitPosition(t, db, "t", int64(len(long)+len(`{"a": 2}`+"\n"+`{"a": 3}`+"\n")))
	wantRows(t, db, "SELECT a FROM t ORDER BY a", "[2] [3]")
	wantRows(t, db, "SELECT source_offset, error FROM system.bad_records", fmt.Sprintf("[0 a line longer than %d bytes]", 4<<20))
}

// TestFileSourceFlush: FLUSH makes what a file holds when it starts reach the table and its
// views, as it does the rows INSERT wrote.
func TestFileSourceFlush(t *testing.T) {
	db, _ := openFileTable(t, timedLines(0, 5000, 7))
	mustExec(t, db, "CREATE MATERIALIZED VIEW c AS SELECT k, COUNT(*) AS n FROM f GROUP BY k")
	mustExec(t, db, "FLUSH")
	wantRows(t, db, "SELECT SUM(n), COUNT(*) FROM c", "[5000 7]")
}

// timedLines is JSON lines i = from .. from+n-1 of a file table f: k = i (mod mod, when
// not 0), ts i ms after 2024-01-01.
func timedLines(from, n, mod int) string {
	var sb strings.Builder
	for i := from; i < from+n; i++ {
		k := i
		if mod > 0 {
			k %= mod
		}
		fmt.Fprintf(&sb, `{"k": %d, "ts": %d}`+"\n", k, 1704067200000+int64(i))
	}
	return sb.String()
}

// openFileTable writes text into a new file and opens an in-memory database with a table f
// (k BIGINT, ts with a WATERMARK) reading it.
func openFileTable(t *testing.T, text string) (*streamsql.DB, string) {
	t.Helper()
	in := filepath.Join(t.TempDir(), "t.json")
	if err := os.WriteFile(in, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	db, err := streamsql.Open("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	mustExec(t, db, fmt.Sprintf(`CREATE TABLE f (k BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) WITH (connector = 'file', path = '%s')`, in))
	return db, in
}

// TestFileSourceShrinks: a file truncated or replaced below the position read stops its
// source with an error saying so (system.sources, FLUSH), instead of reading on from the
// middle of the new file once it grows past that position.
func TestFileSourceShrinks(t *testing.T) {
	db, in := openFileTable(t, timedLines(0, 3, 0))
	mustExec(t, db, "FLUSH")
	if err := os.WriteFile(in, []byte(timedLines(100, 1, 0)), 0o644); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		status := queryStrings(t, db, "SELECT status FROM system.sources")
		if len(status) == 1 && strings.HasPrefix(status[0], "failed:") && strings.Contains(status[0], "shrank") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("source status after the file shrank: %v", status)
		}
		time.Sleep(20 * time.Millisecond)
	}
	f, err := os.OpenFile(in, os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(timedLines(101, 20, 0)); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := db.Exec("FLUSH"); err == nil || !strings.Contains(err.Error(), "shrank") {
		t.Fatalf("FLUSH after the file shrank: %v", err)
	}
	wantRows(t, db, "SELECT COUNT(*), MAX(k) FROM f", "[3 2]")
}

// TestFileSourceMissingOnReopen: a file table whose file is gone when the database reopens
// does not keep the database from opening: its rows and the other tables stay readable, the
// source reports the failure (system.sources, FLUSH), and DROP TABLE removes it.
func TestFileSourceMissingOnReopen(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.csv")
	if err := os.WriteFile(in, []byte("1,10\n2,20\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "db")
	db, err := streamsql.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, db, fmt.Sprintf("CREATE TABLE r (a BIGINT, p BIGINT) WITH (connector = 'file', path = '%s', format = 'csv')", in))
	mustExec(t, db, "CREATE TABLE keep (x INT)")
	mustExec(t, db, "INSERT INTO keep VALUES (42)")
	mustExec(t, db, "FLUSH")
	wantRows(t, db, "SELECT COUNT(*) FROM r", "[2]")
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(in); err != nil {
		t.Fatal(err)
	}
	db, err = streamsql.Open(path)
	if err != nil {
		t.Fatalf("Open with a file table's file gone: %v", err)
	}
	defer db.Close()
	wantRows(t, db, "SELECT x FROM keep", "[42]")
	wantRows(t, db, "SELECT COUNT(*) FROM r", "[2]")
	status := queryStrings(t, db, "SELECT status FROM system.sources")
	if len(status) != 1 || !strings.HasPrefix(status[0], "failed:") || !strings.Contains(status[0], "no such file") {
		t.Fatalf("system.sources status: %v", status)
	}
	wantRows(t, db, "SELECT position FROM system.sources", "[10]")
	if _, err := db.Exec("FLUSH"); err == nil || !strings.Contains(err.Error(), "table r stopped reading its source") {
		t.Fatalf("FLUSH with the file gone: %v", err)
	}
	mustExec(t, db, "DROP TABLE r")
	mustExec(t, db, "FLUSH")
}

// TestFileSourceLongLineAcrossRestart: a restart while the rest of a line too long to read is
// being skipped goes on skipping it (the committed position says so), rather than taking the
// line's tail as a row; a line of exactly 4 MiB is not too long.
func TestFileSourceLongLineAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "t.csv")
	exact := strings.Repeat("y", 4<<20-2) + ",1\n" // 4 MiB before its newline
	// Then a CSV line of 5 MiB still being written (no newline yet).
	if err := os.WriteFile(in, []byte(exact+strings.Repeat("x", 5<<20)+",7"), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "db")
	db, err := streamsql.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, db, fmt.Sprintf("CREATE TABLE t (s VARCHAR, k BIGINT) WITH (connector = 'file', path = '%s', format = 'csv')", in))
	waitPosition(t, db, "t", int64(len(exact)+4<<20))
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(in, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("\n1,2\n"); err != nil { // the writer ends the line, then one more
		t.Fatal(err)
	}
	f.Close()
	db, err = streamsql.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	mustExec(t, db, "FLUSH")
	wantRows(t, db, "SELECT LENGTH(s), k FROM t ORDER BY k", fmt.Sprintf("[%d 1] [1 2]", 4<<20-2))
	wantRows(t, db, "SELECT source_offset, error FROM system.bad_records", fmt.Sprintf("[%d a line longer than %d bytes]", len(exact), 4<<20))
}

// TestFileSourceNotRegular: a path that is no regular file (a FIFO, whose open would block
// the statement and the database with it) is refused at CREATE TABLE with one clear error.
func TestFileSourceNotRegular(t *testing.T) {
	in := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(in, 0o644); err != nil {
		t.Fatal(err)
	}
	db, err := streamsql.Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = db.ExecContext(ctx, fmt.Sprintf("CREATE TABLE t (k BIGINT) WITH (connector = 'file', path = '%s')", in))
	if err == nil || !strings.Contains(err.Error(), "is not a regular file") {
		t.Fatalf("err = %v, want the FIFO refused", err)
	}
	mustExec(t, db, "CREATE TABLE t (k BIGINT)") // the name is free
}

// TestFileSourceBlankLines: an empty line is no record; a line of white space is a CSV
// record (one field of it) but, JSON ignoring white space, no JSON record.
func TestFileSourceBlankLines(t *testing.T) {
	db, _ := qaFileTable(t, "s VARCHAR", "csv", "a\n\n   \n\t\nb\n")
	wantRows(t, db, "SELECT '[' || s || ']' FROM t", "[[a]] [[   ]] [[\t]] [[b]]")
	db, _ = qaFileTable(t, "s VARCHAR", "json", "{\"s\": \"a\"}\n\n   \n\t\n{\"s\": \"b\"}\n")
	wantRows(t, db, "SELECT s FROM t", "[a] [b]")
	wantRows(t, db, "SELECT COUNT(*) FROM system.bad_records", "[0]")
}
