// Package streamsql is an embedded streaming SQL database: DuckDB's ease with Flink's
// semantics. Open a database, create tables with WATERMARK declarations, define
// materialized views over TUMBLE/HOP/CUMULATE windows, insert rows, and read views that stay
// current — through late data, restarts and crashes.
//
//	db, err := streamsql.Open("data/db")
//	db.Exec(`CREATE TABLE bids (auction BIGINT, price BIGINT, ts TIMESTAMP(3),
//	           WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)`)
//
// Importing the package also registers the database/sql driver "streamsql" (DSN = path,
// options as a URL query: "data/db?sync=off").
package streamsql

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/engine"
	"github.com/streamsql/streamsql/sql"
)

// DB is an open database. It is safe for concurrent use; statements run one at a time.
type DB struct {
	eng *engine.Engine
}

// Option configures Open.
type Option func(*engine.Options) error

// WithSync sets whether each statement's writes are synced to disk before it returns
// (default true). With sync off, a crash may lose the most recently acknowledged statements
// but never leaves a partial one.
func WithSync(on bool) Option {
	return func(o *engine.Options) error { o.NoSync = !on; return nil }
}

// WithCheckpointInterval sets how often a checkpoint is taken while there are changes
// (default 1 s); a negative interval checkpoints only on CHECKPOINT and Close. A checkpoint
// makes the next Open replay only what came after it.
func WithCheckpointInterval(d time.Duration) Option {
	return func(o *engine.Options) error {
		if d == 0 {
			d = -1
		}
		o.CheckpointInterval = d
		return nil
	}
}

// WithCacheSize bounds the decoded rows each table keeps in memory (default: 1/16 of the
// memory limit); rows beyond it are read back from disk when scanned.
func WithCacheSize(bytes int64) Option {
	return func(o *engine.Options) error {
		if bytes <= 0 {
			return fmt.Errorf("cache size must be positive, got %d", bytes)
		}
		o.CacheSize = bytes
		return nil
	}
}

// WithMemoryLimit bounds the memory the database aims to use (default: a quarter of the
// machine's memory). Once the live heap passes a quarter of it, the state of views that
// grows with distinct keys — non-windowed aggregates' groups and views' rows — moves to disk
// and is read through a cache; table caches and Pebble's caches are sized from it too. An
// explicit limit also sets the Go runtime's soft memory limit while the database is open,
// unless the program has set one.
func WithMemoryLimit(bytes int64) Option {
	return func(o *engine.Options) error {
		if bytes <= 0 {
			return fmt.Errorf("memory limit must be positive, got %d", bytes)
		}
		o.MemoryLimit = bytes
		return nil
	}
}

// Open opens the database at path, creating it if needed; "" or ":memory:" is an in-memory
// database. A path another process (or another open DB) holds fails with an error.
func Open(path string, opts ...Option) (*DB, error) {
	o := engine.Options{Path: path}
	if path == ":memory:" {
		o.Path = ""
	}
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	eng, err := engine.Open(o)
	if err != nil {
		return nil, err
	}
	return &DB{eng: eng}, nil
}

// Close closes the database; it is idempotent.
func (db *DB) Close() error { return db.eng.Close() }

// Result reports what a statement changed.
type Result struct {
	RowsAffected int64
}

// Exec runs one or more statements; the result is the last one's.
func (db *DB) Exec(query string, args ...any) (Result, error) {
	return db.ExecContext(context.Background(), query, args...)
}

// ExecContext is Exec with a context.
func (db *DB) ExecContext(ctx context.Context, query string, args ...any) (Result, error) {
	res, err := db.eng.ExecNoRows(ctx, query, args)
	if err != nil {
		return Result{}, err
	}
	return Result{RowsAffected: res.RowsAffected}, nil
}

// Query runs a statement that returns rows. For SUBSCRIBE, Next blocks until a change
// arrives or the context is cancelled.
func (db *DB) Query(query string, args ...any) (*Rows, error) {
	return db.QueryContext(context.Background(), query, args...)
}

// QueryContext is Query with a context.
func (db *DB) QueryContext(ctx context.Context, query string, args ...any) (*Rows, error) {
	res, err := db.eng.Exec(ctx, query, args)
	if err != nil {
		return nil, err
	}
	return newRows(ctx, res), nil
}

// QueryArrow runs a query and returns its result as Arrow record batches, with the
// external Arrow types of the columns (INT as int32, DECIMAL as decimal128, DATE as date32,
// TIMESTAMP as timestamp[ms, UTC]).
func (db *DB) QueryArrow(ctx context.Context, query string, args ...any) (array.RecordReader, error) {
	res, err := db.eng.Exec(ctx, query, args)
	if err != nil {
		return nil, err
	}
	if res.Sub != nil {
		res.Sub.Close()
		return nil, fmt.Errorf("QueryArrow does not take SUBSCRIBE; use Subscribe")
	}
	fields := make([]arrow.Field, len(res.Cols))
	for i, c := range res.Cols {
		fields[i] = arrow.Field{Name: c.Name, Type: c.Type.ExternalArrowType(), Nullable: true}
	}
	schema := arrow.NewSchema(fields, nil)
	recs := make([]arrow.RecordBatch, 0, len(res.Batches))
	for _, b := range res.Batches {
		cols := make([]arrow.Array, len(res.Cols))
		for i, c := range res.Cols {
			cols[i] = toExternal(b.Cols[i], c.Type)
		}
		recs = append(recs, array.NewRecordBatch(schema, cols, int64(b.N)))
	}
	return array.NewRecordReader(schema, recs)
}

// Append ingests an Arrow record batch into a table — the bulk path, like DuckDB's
// Appender. The batch's columns must match the table's in order and name, and each column's
// Arrow type must convert as an INSERT of the same values would: int8/16/32/64 into INT
// (range-checked) and BIGINT, int8/16/32/64 and float32/64 into DOUBLE, utf8/large_utf8 into VARCHAR,
// timestamp (any unit; finer than milliseconds floors to the millisecond, as TIMESTAMP(3)
// holds) or int64 milliseconds into TIMESTAMP, date32/date64 into DATE, decimal128 into
// DECIMAL (rescaled, rounding half away from zero, precision-checked), bool into BOOLEAN;
// anything else is refused with an error naming the column.
func (db *DB) Append(ctx context.Context, table string, rec arrow.RecordBatch) error {
	return db.eng.Append(ctx, table, rec)
}

// Subscribe returns a materialized view's changelog: a snapshot of its rows as +I changes,
// then every change as it happens, until ctx is cancelled or Close is called.
func (db *DB) Subscribe(ctx context.Context, view string) (*Rows, error) {
	if strings.ContainsAny(view, "`;") {
		return nil, fmt.Errorf("invalid view name %q", view)
	}
	rows, err := db.QueryContext(ctx, "SUBSCRIBE `"+view+"`")
	if se := (*sql.Error)(nil); errors.As(err, &se) {
		return nil, errors.New(se.Msg) // its place is in text the caller never wrote
	}
	return rows, err
}
