package slt

import (
	"context"
	"crypto/md5"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	ssql "github.com/streamsql/streamsql/sql"
)

// Options configures a run.
type Options struct {
	// Engine is the name skipif/onlyif lines are compared with
	// (case-insensitively), e.g. "streamsql" or "duckdb".
	Engine string
	// Open returns a fresh database; it is called once per file and the
	// database is closed when the file is done.
	Open func() (*sql.DB, error)
}

// Failure is one record that did not do what the file expected.
type Failure struct {
	File string
	Line int    // line of the record's header
	SQL  string // the record's SQL text
	Msg  string // what was expected and what happened
}

func (f Failure) String() string {
	return fmt.Sprintf("%s:%d: %s\n%s", f.File, f.Line, f.Msg, f.SQL)
}

// Result summarises one file. Records counts statements and queries that
// were executed or skipped; Passed + len(Failures) + Skipped == Records.
type Result struct {
	File                     string
	Records, Passed, Skipped int
	Failures                 []Failure
}

// RunFile runs the sqllogictest file at path. The error is non-nil only
// when the file cannot be read or parsed, or no database can be opened.
func RunFile(path string, opt Options) (*Result, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("slt: %w", err)
	}
	defer f.Close()
	return Run(path, f, opt)
}

// Run runs the records read from r, naming the file name in the result.
// All statements of the file run on one connection of a fresh database.
func Run(name string, r io.Reader, opt Options) (*Result, error) {
	recs, err := parse(name, r)
	if err != nil {
		return nil, err
	}
	if opt.Open == nil {
		return nil, errors.New("slt: Options.Open is nil")
	}
	db, err := opt.Open()
	if err != nil {
		return nil, fmt.Errorf("slt: opening a database for %s: %w", name, err)
	}
	defer db.Close()
	ctx := context.Background()
	// One connection for the whole file: an engine may keep session state
	// or even a separate in-memory database per connection.
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("slt: connecting for %s: %w", name, err)
	}
	defer conn.Close()

	rn := &runner{name: name, opt: opt, conn: conn, ctx: ctx, labels: map[string]string{}}
	res := &Result{File: name}
	for _, rec := range recs {
		skip := rn.skipped(rec)
		switch rec.kind {
		case kindHalt:
			if !skip {
				return res, nil
			}
			continue
		case kindHashThreshold:
			if !skip {
				rn.threshold = rec.threshold
			}
			continue
		}
		res.Records++
		if skip {
			res.Skipped++
			continue
		}
		if msg := rn.run(rec); msg != "" {
			res.Failures = append(res.Failures, Failure{File: name, Line: rec.line, SQL: rec.sql, Msg: msg})
		} else {
			res.Passed++
		}
	}
	return res, nil
}

type runner struct {
	name      string
	opt       Options
	conn      *sql.Conn
	ctx       context.Context
	threshold int
	labels    map[string]string // label -> hash line of its first result
}

func (rn *runner) skipped(rec *record) bool {
	for _, c := range rec.conds {
		match := strings.EqualFold(c.engine, rn.opt.Engine)
		if match != c.only {
			return true
		}
	}
	return false
}

// run executes one statement or query record and returns "" when it
// passed, else a message saying what was expected and what happened.
func (rn *runner) run(rec *record) string {
	if rec.kind == kindStatement {
		_, err := rn.conn.ExecContext(rn.ctx, rec.sql)
		return checkErr(rec, err)
	}
	cols, rows, err := rn.query(rec.sql, rec.types)
	if rec.expectErr || err != nil {
		return checkErr(rec, err)
	}
	return rn.compare(rec, cols, rows)
}

func checkErr(rec *record, err error) string {
	if !rec.expectErr {
		if err != nil {
			return "expected success, got error: " + err.Error()
		}
		return ""
	}
	want := "an error"
	if rec.errRe != nil {
		want = "an error matching /" + rec.errRe.String() + "/"
	} else if rec.errText != "" {
		want = "an error containing " + fmt.Sprintf("%q", rec.errText)
	}
	switch {
	case err == nil:
		return "expected " + want + ", but it succeeded"
	case rec.errRe != nil && !rec.errRe.MatchString(err.Error()):
		return "expected " + want + ", got: " + err.Error()
	case rec.errRe == nil && rec.errText != "" && !strings.Contains(err.Error(), rec.errText):
		return "expected " + want + ", got: " + err.Error()
	}
	return ""
}

// subscribeIdle is how long a SUBSCRIBE query record waits for a change after its last
// one before its result is complete.
const subscribeIdle = time.Second

// query runs sql and returns the column count and the formatted rows. A SUBSCRIBE, whose
// rows never end, returns the changes there are when it runs (its snapshot, which holds the
// effect of the statements before it, then what comes meanwhile, as from a running source):
// its rows end once none has come for subscribeIdle after the statement started or after the
// last one.
func (rn *runner) query(q, types string) (int, [][]string, error) {
	ctx := rn.ctx
	subscribe := isSubscribe(q)
	var cancel context.CancelFunc
	if subscribe {
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
	}
	rows, err := rn.conn.QueryContext(ctx, q)
	if err != nil {
		return 0, nil, err
	}
	defer rows.Close()
	// idled is set when the idle timer ends the rows: the cancellation's error (from Next
	// or, when a change came as it fired, from Scan) then ends the result.
	var idled atomic.Bool
	var idle *time.Timer
	if subscribe {
		idle = time.AfterFunc(subscribeIdle, func() { idled.Store(true); cancel() })
		defer idle.Stop()
	}
	ended := func(err error) bool { return idled.Load() && rn.ctx.Err() == nil && errors.Is(err, context.Canceled) }
	cts, err := rows.ColumnTypes()
	if err != nil {
		return 0, nil, err
	}
	n := len(cts)
	vals := make([]any, n)
	ptrs := make([]any, n)
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var out [][]string
	for rows.Next() {
		if idle != nil {
			idle.Reset(subscribeIdle)
		}
		if err := rows.Scan(ptrs...); err != nil {
			if ended(err) {
				break
			}
			return 0, nil, err
		}
		row := make([]string, n)
		for i, v := range vals {
			letter := byte('T')
			if i < len(types) {
				letter = types[i]
			}
			row[i] = formatValue(v, letter, cts[i].DatabaseTypeName())
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil && !ended(err) {
		return 0, nil, err
	}
	return n, out, nil
}

// isSubscribe reports whether q is one SUBSCRIBE statement, as streamsql's parser reads it
// (comments and all).
func isSubscribe(q string) bool {
	stmts, err := ssql.Parse(q)
	return err == nil && len(stmts) == 1 && stmts[0].Kind == ssql.KindSubscribe
}

var hashLine = regexp.MustCompile(`^\d+ values hashing to [0-9a-f]{32}$`)

func (rn *runner) compare(rec *record, ncols int, rows [][]string) string {
	if ncols != len(rec.types) {
		return fmt.Sprintf("query declares %d columns (%s), got %d", len(rec.types), rec.types, ncols)
	}
	switch rec.sort {
	case rowSort:
		sortRows(rows)
	case valueSort:
		var all []string
		for _, r := range rows {
			all = append(all, r...)
		}
		sort.Strings(all)
		rows = nil
		for i := 0; i+ncols <= len(all); i += ncols {
			rows = append(rows, all[i:i+ncols])
		}
	}
	var values []string
	for _, r := range rows {
		values = append(values, r...)
	}
	hash := hashValues(values)

	if rec.label != "" {
		if prev, ok := rn.labels[rec.label]; ok && prev != hash {
			return fmt.Sprintf("label %s: result %s differs from the first query with this label (%s)", rec.label, hash, prev)
		}
		rn.labels[rec.label] = hash
	}

	exp := rec.expected
	if len(exp) == 1 && hashLine.MatchString(strings.TrimSpace(exp[0])) {
		if strings.TrimSpace(exp[0]) == hash {
			return ""
		}
		return mismatch(exp, []string{hash})
	}
	if len(exp) == len(values) {
		want := normalizeExpected(exp, rec.sort, ncols)
		if equal(want, values) {
			return ""
		}
	} else if ncols > 1 && len(exp) == len(rows) {
		// Row-per-line style: values of a row joined by single spaces.
		got := make([]string, len(rows))
		for i, r := range rows {
			got[i] = strings.Join(r, " ")
		}
		want := make([]string, len(exp))
		for i, l := range exp {
			want[i] = strings.Join(strings.Fields(l), " ")
		}
		if rec.sort != noSort {
			sort.Strings(got)
			sort.Strings(want)
		}
		if equal(want, got) {
			return ""
		}
		return mismatch(exp, got)
	}
	if rn.threshold > 0 && len(values) > rn.threshold {
		return mismatch(exp, []string{hash})
	}
	return mismatch(exp, values)
}

// normalizeExpected sorts the expected values the way the result was
// sorted, so that rowsort and valuesort compare multisets.
func normalizeExpected(exp []string, mode sortMode, ncols int) []string {
	switch mode {
	case valueSort:
		want := append([]string(nil), exp...)
		sort.Strings(want)
		return want
	case rowSort:
		if ncols == 0 || len(exp)%ncols != 0 {
			return exp
		}
		var rows [][]string
		for i := 0; i < len(exp); i += ncols {
			rows = append(rows, exp[i:i+ncols])
		}
		sortRows(rows)
		var want []string
		for _, r := range rows {
			want = append(want, r...)
		}
		return want
	}
	return exp
}

// sortRows orders rows as sequences of values, value by value.
func sortRows(rows [][]string) {
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		for k := 0; k < len(a) && k < len(b); k++ {
			if a[k] != b[k] {
				return a[k] < b[k]
			}
		}
		return len(a) < len(b)
	})
}

func hashValues(values []string) string {
	h := md5.New()
	for _, v := range values {
		io.WriteString(h, v)
		io.WriteString(h, "\n")
	}
	return fmt.Sprintf("%d values hashing to %x", len(values), h.Sum(nil))
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func mismatch(exp, got []string) string {
	var b strings.Builder
	b.WriteString("wrong result\n--- expected\n")
	for _, l := range exp {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	b.WriteString("--- got\n")
	for _, l := range got {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return strings.TrimRight(b.String(), "\n")
}
