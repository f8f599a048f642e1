package connector

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/types"
)

// Fatal is a source error no retry can mend (a file truncated below the position read):
// the table's feeder stops with it, where other errors are retried.
type Fatal struct{ Err error }

func (f *Fatal) Error() string { return f.Err.Error() }
func (f *Fatal) Unwrap() error { return f.Err }

// Clock is injectable time: tests advance it; the engine passes the real clock.
type Clock interface {
	Now() time.Time
	// Sleep waits until d has passed on this clock, or returns ctx.Err() when ctx is done
	// first. A non-positive d returns at once.
	Sleep(ctx context.Context, d time.Duration) error
}

// RealClock returns the wall clock.
func RealClock() Clock { return realClock{} }

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Source generates the rows of a table. Offsets count rows from 0; a source is deterministic
// for its options: the rows after SeekTo(n) are exactly rows n, n+1, ... of a fresh run, so the
// engine can store the offset atomically with the rows and resume exactly once after a crash.
// A Source is used by one goroutine at a time.
type Source interface {
	// Next returns up to max next rows as a batch whose columns match the table's columns
	// (physical representation, exec.Batch with W and WM nil), blocking (via Clock) to honour
	// a rate limit; io.EOF after 'events.max' rows; ctx cancellation returns ctx.Err().
	Next(ctx context.Context, max int) (*exec.Batch, error)
	// SeekTo positions the source so that the next row returned is row offset. Offsets past
	// the last row of a bounded source are an error; SeekTo to exactly the end is allowed and
	// the next Next returns io.EOF. SeekTo restarts the rate limiter's schedule.
	SeekTo(offset int64) error
	// Offset is the number of the next row Next will return.
	Offset() int64
	// Total is the number of rows of a bounded source, -1 for an unbounded one.
	Total() int64
	// Lasts is how long a bounded source takes, at its rate limit, to produce its rows from
	// row off to its end (0 without a limit). It reads no state Next changes.
	Lasts(off int64) time.Duration
}

// Chunk is what a source hands over at once: rows, the partition of each (nil: one
// partition), the records that could not be decoded, and the position after all of them,
// which the engine commits with them. Err is a fetch error of a partitioned source: the
// records that came are still in the chunk.
type Chunk struct {
	Rows  *exec.Batch // nil when every record was bad or none came
	Parts []int32     // Parts[i] is the partition of row i
	Offs  []int64     // Offs[i] is the offset of row i's record
	Vals  [][]byte    // Vals[i] is row i's record value
	Bad   []BadRecord
	Pos   []byte
	Err   error
}

// BadRecord is a record that could not become a row.
type BadRecord struct {
	Partition int32
	Offset    int64
	Err       string
	Value     []byte
}

// Open validates options (keys lower-case, values as strings) against the table's columns
// and returns the source. opts["connector"] is "nexmark" or "datagen" (Kafka and file tables are read by
// packages connector/kafka and connector/file, listed in the error for any other). Unknown option keys or
// bad values → error naming the option and what is expected.
func Open(opts map[string]string, cols []catalog.Column, clock Clock) (Source, error) {
	if clock == nil {
		clock = RealClock()
	}
	o := NewOptions("connector", opts)
	name, ok := o.Take("connector")
	if !ok {
		return nil, fmt.Errorf("connector: option 'connector' is required: expected 'kafka', 'file', 'nexmark' or 'datagen'")
	}
	o.conn = strings.ToLower(strings.TrimSpace(name))
	var (
		g    generator
		rate int64
		err  error
	)
	switch o.conn {
	case "nexmark":
		g, rate, err = openNexmark(o, cols)
	case "datagen":
		g, rate, err = openDatagen(o, cols)
	default:
		return nil, fmt.Errorf("connector: option 'connector' = '%s': expected 'kafka', 'file', 'nexmark' or 'datagen'", name)
	}
	if err != nil {
		return nil, err
	}
	valid := nexmarkOptions
	if o.conn == "datagen" {
		valid = datagenOptions
	}
	if err := o.RejectUnused(valid); err != nil {
		return nil, err
	}
	return &source{gen: g, clock: clock, rate: rate}, nil
}

// generator is what a connector contributes: rows as a pure function of their number, and
// the schedule ("ticks") the rate limit applies to.
type generator interface {
	// total is the number of rows, or -1 when unbounded.
	total() int64
	// tick is the position of row r on the rate limiter's schedule: the row is due R ticks
	// per second. It is non-decreasing in r.
	tick(r int64) int64
	// rowsThrough is the number of rows whose tick is <= t (the inverse of tick).
	rowsThrough(t int64) int64
	// fill generates rows [from, from+n); now is the clock's time in UTC milliseconds.
	fill(from int64, n int, now int64) *exec.Batch
}

// maxRate bounds rates so that the schedule's arithmetic cannot overflow.
const maxRate = 1_000_000_000

// source drives a generator: offsets, EOF and the rate limit.
type source struct {
	gen   generator
	clock Clock
	rate  int64 // ticks per second; 0 = unlimited
	off   int64

	// The schedule: the tick of row off when it was (re)started, and the clock's time then.
	started bool
	start   time.Time
	base    int64
}

var _ Source = (*source)(nil)

func (s *source) Offset() int64 { return s.off }

func (s *source) Total() int64 { return s.gen.total() }

func (s *source) Lasts(off int64) time.Duration {
	total := s.gen.total()
	if s.rate == 0 || total < 0 || off >= total {
		return 0
	}
	return durationOf(s.gen.tick(total-1)-s.gen.tick(off), s.rate)
}

func (s *source) SeekTo(offset int64) error {
	if offset < 0 {
		return fmt.Errorf("connector: cannot seek to negative offset %d", offset)
	}
	if t := s.gen.total(); t >= 0 && offset > t {
		return fmt.Errorf("connector: cannot seek to offset %d: the source has only %d rows", offset, t)
	}
	s.off = offset
	s.started = false
	return nil
}

func (s *source) Next(ctx context.Context, max int) (*exec.Batch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if max <= 0 {
		return nil, fmt.Errorf("connector: Next: max must be positive, got %d", max)
	}
	n := int64(max)
	if t := s.gen.total(); t >= 0 {
		if s.off >= t {
			return nil, io.EOF
		}
		n = min(n, t-s.off)
	}
	if s.rate > 0 {
		for {
			now := s.clock.Now()
			if !s.started {
				s.started, s.start, s.base = true, now, s.gen.tick(s.off)
			}
			elapsed := max64(int64(now.Sub(s.start)), 0)
			due := s.gen.rowsThrough(s.base+ticksIn(elapsed, s.rate)) - s.off
			if due > 0 {
				n = min(n, due)
				break
			}
			wait := durationOf(s.gen.tick(s.off)-s.base, s.rate) - time.Duration(elapsed)
			if err := s.clock.Sleep(ctx, wait); err != nil {
				return nil, err
			}
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
	}
	b := s.gen.fill(s.off, int(n), s.clock.Now().UnixMilli())
	s.off += n
	return b, nil
}

func max64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}

// ticksIn is floor(ns * rate / 1e9) without overflow.
func ticksIn(ns, rate int64) int64 {
	return ns/1e9*rate + ns%1e9*rate/1e9
}

// durationOf is the time ceil(ticks * 1e9 / rate) ns at which tick 'ticks' falls due.
func durationOf(ticks, rate int64) time.Duration {
	return time.Duration(ticks/rate)*time.Second + time.Duration((ticks%rate*1e9+rate-1)/rate)
}

// Options reads a connector's WITH options (keys lower-case, values as strings),
// remembering which were taken so that the rest can be reported as unknown.
type Options struct {
	conn string
	m    map[string]string
	used map[string]bool
}

// NewOptions reads m for connector conn (its name leads every error).
func NewOptions(conn string, m map[string]string) *Options {
	return &Options{conn: conn, m: m, used: map[string]bool{}}
}

// Take returns an option's value and marks it used.
func (o *Options) Take(key string) (string, bool) {
	v, ok := o.m[key]
	if ok {
		o.used[key] = true
	}
	return v, ok
}

func (o *Options) errorf(key, expected string) error {
	return fmt.Errorf("%s: option '%s' = '%s': expected %s", o.conn, key, o.m[key], expected)
}

// Choice reads an option whose value is one of choices (any case), returned lower-cased, or
// def when absent.
func (o *Options) Choice(key, def string, choices ...string) (string, error) {
	v, ok := o.Take(key)
	if !ok {
		return def, nil
	}
	c := strings.ToLower(strings.TrimSpace(v))
	if !slices.Contains(choices, c) {
		return "", o.errorf(key, "'"+strings.Join(choices, "' or '")+"'")
	}
	return c, nil
}

// int reads an integer option in [lo, hi], or def when absent.
func (o *Options) int(key string, def, lo, hi int64, expected string) (int64, error) {
	v, ok := o.Take(key)
	if !ok {
		return def, nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	inRange := err == nil && n >= lo && n <= hi
	if !inRange && hi < math.MaxInt64 && !strings.Contains(expected, "[") { // say a bound that is not the type's, unless expected does
		expected += fmt.Sprintf(" in [%d, %d]", lo, hi)
	}
	if !inRange {
		return 0, o.errorf(key, expected)
	}
	return n, nil
}

// timestamp reads a timestamp literal option, or def when absent.
func (o *Options) timestamp(key string, def int64) (int64, error) {
	v, ok := o.Take(key)
	if !ok {
		return def, nil
	}
	ms, err := types.ParseTimestamp(v)
	if err != nil {
		return 0, o.errorf(key, "a timestamp 'YYYY-MM-DD HH:MM:SS[.fff]'")
	}
	return ms, nil
}

// alias returns the name the options give an option that has two: key, or alt when only
// alt is given; both given is an error.
func (o *Options) alias(key, alt string) (string, error) {
	if _, ok := o.m[alt]; !ok {
		return key, nil
	}
	if _, both := o.m[key]; both {
		return "", fmt.Errorf("%s: options '%s' and '%s' are aliases: expected only one", o.conn, key, alt)
	}
	return alt, nil
}

// rate reads a rows-per-second option: 0 means unlimited.
func (o *Options) rate(key string) (int64, error) {
	return o.int(key, 0, 0, maxRate, fmt.Sprintf("a rate in rows per second, an integer in [0, %d] (0 = unlimited)", int64(maxRate)))
}

// seed reads the 'seed' option (any 64-bit integer).
func (o *Options) seed() (uint64, error) {
	v, ok := o.Take("seed")
	if !ok {
		return 0, nil
	}
	v = strings.TrimSpace(v)
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		return uint64(n), nil
	}
	if n, err := strconv.ParseUint(v, 10, 64); err == nil {
		return n, nil
	}
	return 0, o.errorf("seed", "a 64-bit integer")
}

// RejectUnused reports the first option (by name) that nobody took, listing the valid ones.
func (o *Options) RejectUnused(valid string) error {
	var unknown []string
	for k := range o.m {
		if !o.used[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sort.Strings(unknown)
	return fmt.Errorf("%s: unknown option '%s'; valid options are %s", o.conn, unknown[0], valid)
}

// defaultStart is 2024-01-01 00:00:00 UTC, the default first event time.
var defaultStart = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
