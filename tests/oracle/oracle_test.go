package oracle

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"io"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"

	duckdb "github.com/duckdb/duckdb-go/v2"
	"github.com/streamsql/streamsql/slt"
)

// corpus is the batch corpus, relative to this package's directory.
const corpus = "../../testdata/sqllogic/batch"

// TestBatchCorpusOnDuckDB runs every batch .slt file on a fresh in-memory
// DuckDB under the engine name "duckdb" and fails with every record whose
// expectation DuckDB does not reproduce.
func TestBatchCorpusOnDuckDB(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(corpus, "*.slt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no .slt files under %s", corpus)
	}
	var records, passed, skipped int
	for _, path := range files {
		res, err := slt.RunFile(path, slt.Options{Engine: "duckdb", Open: openDuckDB})
		if err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		records += res.Records
		passed += res.Passed
		skipped += res.Skipped
		t.Logf("%-28s records=%3d passed=%3d skipped=%2d failed=%d",
			filepath.Base(path), res.Records, res.Passed, res.Skipped, len(res.Failures))
		for _, f := range res.Failures {
			t.Errorf("%s:%d: %s\n    SQL: %s", f.File, f.Line, f.Msg, strings.ReplaceAll(f.SQL, "\n", "\n         "))
		}
	}
	t.Logf("total: %d records, %d passed on DuckDB, %d skipped for DuckDB", records, passed, skipped)
}

// TestCorpusHeaders holds every batch file to the house style: it opens
// with a `# description:` line saying what it covers.
func TestCorpusHeaders(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(corpus, "*.slt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(data), "# description: ") {
			t.Errorf("%s: first line must be \"# description: ...\"", path)
		}
	}
}

// openDuckDB returns a fresh in-memory DuckDB whose DECIMAL values scan as
// strings with the declared scale ("12.50"), as streamsql's driver returns
// them (SPEC.md §1). duckdb-go's Decimal.String trims trailing zeros.
func openDuckDB() (*sql.DB, error) {
	c, err := duckdb.NewConnector("", nil)
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(decimalConnector{c}), nil
}

// decimalConnector wraps DuckDB's connector so that result rows render
// DECIMAL with its full scale; everything else passes through.
type decimalConnector struct{ c driver.Connector }

func (d decimalConnector) Connect(ctx context.Context) (driver.Conn, error) {
	cn, err := d.c.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &decimalConn{Conn: cn}, nil
}

func (d decimalConnector) Driver() driver.Driver { return d.c.Driver() }

// Close releases the DuckDB database when the *sql.DB is closed.
func (d decimalConnector) Close() error {
	if c, ok := d.c.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

type decimalConn struct{ driver.Conn }

func (c *decimalConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	q, ok := c.Conn.(driver.QueryerContext)
	if !ok {
		return nil, driver.ErrSkip
	}
	rows, err := q.QueryContext(ctx, query, args)
	if err != nil {
		return nil, err
	}
	return &decimalRows{Rows: rows}, nil
}

func (c *decimalConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	e, ok := c.Conn.(driver.ExecerContext)
	if !ok {
		return nil, driver.ErrSkip
	}
	return e.ExecContext(ctx, query, args)
}

type decimalRows struct{ driver.Rows }

func (r *decimalRows) Next(dest []driver.Value) error {
	if err := r.Rows.Next(dest); err != nil {
		return err
	}
	for i, v := range dest {
		if d, ok := v.(duckdb.Decimal); ok {
			dest[i] = formatDecimal(d)
		}
	}
	return nil
}

func (r *decimalRows) ColumnTypeDatabaseTypeName(i int) string {
	if t, ok := r.Rows.(driver.RowsColumnTypeDatabaseTypeName); ok {
		return t.ColumnTypeDatabaseTypeName(i)
	}
	return ""
}

// formatDecimal renders d with exactly d.Scale fractional digits.
func formatDecimal(d duckdb.Decimal) string {
	if d.Value == nil {
		return ""
	}
	s := d.Value.String()
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	if sc := int(d.Scale); sc > 0 {
		if len(s) <= sc {
			s = strings.Repeat("0", sc-len(s)+1) + s
		}
		s = s[:len(s)-sc] + "." + s[len(s)-sc:]
	}
	if neg {
		s = "-" + s
	}
	return s
}

func TestFormatDecimal(t *testing.T) {
	for _, c := range []struct {
		v     int64
		scale uint8
		want  string
	}{
		{1250, 2, "12.50"}, {-5, 2, "-0.05"}, {0, 2, "0.00"}, {7, 0, "7"}, {123456789, 3, "123456.789"},
	} {
		d := duckdb.Decimal{Scale: c.scale, Value: big.NewInt(c.v)}
		if got := formatDecimal(d); got != c.want {
			t.Errorf("formatDecimal(%d, scale %d) = %q, want %q", c.v, c.scale, got, c.want)
		}
	}
}
