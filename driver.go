package streamsql

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"io"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/streamsql/streamsql/engine"
	"github.com/streamsql/streamsql/types"
)

func init() { sql.Register("streamsql", &Driver{}) }

// Driver is the database/sql driver "streamsql". A DSN is a database path ("" or
// ":memory:" for in memory) with options as a URL query: "data/db?sync=off".
// Every connection of one sql.DB shares one database.
type Driver struct{}

var (
	_ driver.Driver        = (*Driver)(nil)
	_ driver.DriverContext = (*Driver)(nil)
)

// Open implements driver.Driver: a one-connection database, closed with its connection
// (sql.Open uses OpenConnector, whose connections share one database).
func (d *Driver) Open(dsn string) (driver.Conn, error) {
	c, err := d.OpenConnector(dsn)
	if err != nil {
		return nil, err
	}
	cn, err := c.Connect(context.Background())
	if err != nil {
		return nil, err
	}
	cn.(*conn).own = c.(*connector)
	return cn, nil
}

// OpenConnector implements driver.DriverContext.
func (d *Driver) OpenConnector(dsn string) (driver.Connector, error) {
	path, opts, err := parseDSN(dsn)
	if err != nil {
		return nil, err
	}
	return &connector{drv: d, path: path, opts: opts}, nil
}

// parseDSN splits "path?k=v&..." into the path and options.
func parseDSN(dsn string) (string, []Option, error) {
	path, query, _ := strings.Cut(dsn, "?")
	vals, err := url.ParseQuery(query)
	if err != nil {
		return "", nil, fmt.Errorf("streamsql: bad DSN options %q: %w", query, err)
	}
	var opts []Option
	for k, v := range vals {
		val := v[len(v)-1]
		switch k {
		case "sync":
			switch strings.ToLower(val) {
			case "on", "true", "1":
				opts = append(opts, WithSync(true))
			case "off", "false", "0":
				opts = append(opts, WithSync(false))
			default:
				return "", nil, fmt.Errorf("streamsql: DSN option sync=%q: expected on or off", val)
			}
		case "_split_batches":
			// Testing aid: results must not depend on batch boundaries (see engine.Options.SplitSeed).
			seed, err := strconv.ParseInt(val, 10, 64)
			if err != nil {
				return "", nil, fmt.Errorf("streamsql: DSN option _split_batches=%q: expected a seed", val)
			}
			opts = append(opts, func(o *engine.Options) error { o.SplitSeed = seed; return nil })
		case "cache_size":
			n, err := parseBytes(val)
			if err != nil {
				return "", nil, fmt.Errorf("streamsql: DSN option cache_size=%q: %w", val, err)
			}
			opts = append(opts, WithCacheSize(n))
		case "memory_limit":
			n, err := parseBytes(val)
			if err != nil {
				return "", nil, fmt.Errorf("streamsql: DSN option memory_limit=%q: %w", val, err)
			}
			opts = append(opts, WithMemoryLimit(n))
		case "checkpoint_interval":
			d, err := time.ParseDuration(val)
			if err != nil {
				return "", nil, fmt.Errorf("streamsql: DSN option checkpoint_interval=%q: %w", val, err)
			}
			opts = append(opts, WithCheckpointInterval(d))
		default:
			return "", nil, fmt.Errorf("streamsql: unknown DSN option %q (known: sync, checkpoint_interval, cache_size, memory_limit)", k)
		}
	}
	return path, opts, nil
}

// connector opens the database once and shares it among its connections.
type connector struct {
	drv  *Driver
	path string
	opts []Option
	mu   sync.Mutex
	db   *DB
}

func (c *connector) Connect(context.Context) (driver.Conn, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.db == nil {
		db, err := Open(c.path, c.opts...)
		if err != nil {
			return nil, err
		}
		c.db = db
	}
	return &conn{db: c.db}, nil
}

func (c *connector) Driver() driver.Driver { return c.drv }

// Close closes the shared database (database/sql calls it from sql.DB.Close).
func (c *connector) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.db == nil {
		return nil
	}
	err := c.db.Close()
	c.db = nil
	return err
}

type conn struct {
	db *DB
	// own, for a connection from Driver.Open, is the connector of its one-connection
	// database: closing the connection closes the database.
	own *connector
}

var (
	_ driver.QueryerContext     = (*conn)(nil)
	_ driver.ExecerContext      = (*conn)(nil)
	_ driver.ConnPrepareContext = (*conn)(nil)
	_ driver.NamedValueChecker  = (*conn)(nil)
)

func (c *conn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

func (c *conn) PrepareContext(_ context.Context, query string) (driver.Stmt, error) {
	n, err := engine.NumInput(query)
	if err != nil {
		return nil, err
	}
	return &stmt{c: c, query: query, n: n}, nil
}

func (c *conn) Close() error {
	if c.own != nil {
		return c.own.Close()
	}
	return nil
}

func (c *conn) Begin() (driver.Tx, error) {
	return nil, fmt.Errorf("streamsql: transactions are not supported; each statement is atomic")
}

// CheckNamedValue accepts the Go types placeholders take.
func (c *conn) CheckNamedValue(nv *driver.NamedValue) error {
	if nv.Name != "" {
		return fmt.Errorf("streamsql: named parameters are not supported; use ?")
	}
	switch v := nv.Value.(type) {
	case nil, int64, float64, bool, string, []byte, time.Time:
		return nil
	case int:
		nv.Value = int64(v)
	case int32:
		nv.Value = int64(v)
	case int16:
		nv.Value = int64(v)
	case int8:
		nv.Value = int64(v)
	case uint32:
		nv.Value = int64(v)
	case uint16:
		nv.Value = int64(v)
	case uint8:
		nv.Value = int64(v)
	case float32:
		nv.Value = float64(v)
	default:
		v2, err := driver.DefaultParameterConverter.ConvertValue(v)
		if err != nil {
			return err
		}
		nv.Value = v2
	}
	return nil
}

func (c *conn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	res, err := c.db.ExecContext(ctx, query, values(args)...)
	if err != nil {
		return nil, err
	}
	return driver.RowsAffected(res.RowsAffected), nil
}

func (c *conn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	res, err := c.db.eng.Exec(ctx, query, values(args))
	if err != nil {
		return nil, err
	}
	return &rows{r: newRows(ctx, res)}, nil
}

func values(args []driver.NamedValue) []any {
	out := make([]any, len(args))
	for i, a := range args {
		out[i] = a.Value
	}
	return out
}

type stmt struct {
	c     *conn
	query string
	n     int
}

func (s *stmt) Close() error  { return nil }
func (s *stmt) NumInput() int { return s.n }
func (s *stmt) Exec(args []driver.Value) (driver.Result, error) {
	return s.c.ExecContext(context.Background(), s.query, named(args))
}
func (s *stmt) Query(args []driver.Value) (driver.Rows, error) {
	return s.c.QueryContext(context.Background(), s.query, named(args))
}
func (s *stmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	return s.c.ExecContext(ctx, s.query, args)
}
func (s *stmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	return s.c.QueryContext(ctx, s.query, args)
}

func named(args []driver.Value) []driver.NamedValue {
	out := make([]driver.NamedValue, len(args))
	for i, a := range args {
		out[i] = driver.NamedValue{Ordinal: i + 1, Value: a}
	}
	return out
}

// rows adapts Rows to driver.Rows.
type rows struct{ r *Rows }

var (
	_ driver.RowsColumnTypeDatabaseTypeName = (*rows)(nil)
	_ driver.RowsColumnTypeScanType         = (*rows)(nil)
	_ driver.RowsColumnTypePrecisionScale   = (*rows)(nil)
)

func (r *rows) Columns() []string { return r.r.Columns() }
func (r *rows) Close() error      { return r.r.Close() }

func (r *rows) Next(dest []driver.Value) error {
	if !r.r.Next() {
		if err := r.r.Err(); err != nil {
			return err
		}
		return io.EOF
	}
	for i, v := range r.r.Values() {
		dest[i] = v
	}
	return nil
}

func (r *rows) ColumnTypeDatabaseTypeName(i int) string { return typeName(r.r.cols[i].Type) }

// Nullability is not tracked through expressions, so ColumnTypeNullable is not implemented
// (database/sql then reports it as unknown).

// ColumnTypePrecisionScale reports DECIMAL(p,s).
func (r *rows) ColumnTypePrecisionScale(i int) (int64, int64, bool) {
	t := r.r.cols[i].Type
	if t.Kind != types.Decimal {
		return 0, 0, false
	}
	return int64(t.Precision), int64(t.Scale), true
}

func (r *rows) ColumnTypeScanType(i int) reflect.Type {
	switch r.r.cols[i].Type.Kind {
	case types.Int, types.BigInt:
		return reflect.TypeOf(int64(0))
	case types.Double:
		return reflect.TypeOf(float64(0))
	case types.Bool:
		return reflect.TypeOf(false)
	case types.Date, types.Timestamp:
		return reflect.TypeOf(time.Time{})
	}
	return reflect.TypeOf("")
}

// parseBytes reads a size: 64MB, 1GiB, 512k, or a plain number of bytes.
func parseBytes(s string) (int64, error) {
	u := strings.ToUpper(strings.TrimSpace(s))
	mult := int64(1)
	for _, m := range []struct {
		suffix string
		n      int64
	}{{"GIB", 1 << 30}, {"MIB", 1 << 20}, {"KIB", 1 << 10}, {"GB", 1 << 30}, {"MB", 1 << 20}, {"KB", 1 << 10}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}, {"B", 1}} {
		if strings.HasSuffix(u, m.suffix) {
			u, mult = strings.TrimSpace(strings.TrimSuffix(u, m.suffix)), m.n
			break
		}
	}
	n, err := strconv.ParseInt(u, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("expected a size such as 256MB")
	}
	return n * mult, nil
}
