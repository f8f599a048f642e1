package connector

import (
	"context"
	"errors"
	"io"
	"math/rand"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/types"
)

// fakeClock is a Clock that moves only when the test advances it.
type fakeClock struct {
	mu      sync.Mutex
	now     time.Time
	waiters []fakeWaiter
	slept   chan time.Duration // receives d each time a Sleep starts waiting
}

type fakeWaiter struct {
	until time.Time
	ch    chan struct{}
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC), slept: make(chan time.Duration, 1024)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	c.mu.Lock()
	w := fakeWaiter{until: c.now.Add(d), ch: make(chan struct{})}
	c.waiters = append(c.waiters, w)
	c.mu.Unlock()
	c.slept <- d
	select {
	case <-w.ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	kept := c.waiters[:0]
	for _, w := range c.waiters {
		if w.until.After(c.now) {
			kept = append(kept, w)
		} else {
			close(w.ch)
		}
	}
	c.waiters = kept
}

func colsOf(k *nexmarkKind) []catalog.Column {
	out := make([]catalog.Column, len(k.schema))
	for i, f := range k.schema {
		out[i] = catalog.Column{Name: f.name, Type: f.t}
	}
	return out
}

func typesOf(cols []catalog.Column) []types.T {
	ts := make([]types.T, len(cols))
	for i, c := range cols {
		ts[i] = c.Type
	}
	return ts
}

func mustOpen(t testing.TB, opts map[string]string, cols []catalog.Column) Source {
	t.Helper()
	s, err := Open(opts, cols, newFakeClock())
	if err != nil {
		t.Fatalf("Open(%v): %v", opts, err)
	}
	return s
}

// drain reads up to limit rows (all, if limit < 0) with batch sizes from sizes, checking the
// batch contract, and returns the rows as physical values.
func drain(t testing.TB, s Source, cols []catalog.Column, limit int, sizes func() int) [][]any {
	t.Helper()
	var rows [][]any
	for limit < 0 || len(rows) < limit {
		max := sizes()
		if limit >= 0 {
			max = min(max, limit-len(rows))
		}
		before := s.Offset()
		b, err := s.Next(context.Background(), max)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		if b.N < 1 || b.N > max || len(b.Cols) != len(cols) || b.W != nil || b.WM != nil {
			t.Fatalf("bad batch: N=%d max=%d cols=%d W=%v WM=%v", b.N, max, len(b.Cols), b.W != nil, b.WM != nil)
		}
		for c, a := range b.Cols {
			if a.Len() != b.N || a.DataType().ID() != cols[c].Type.ArrowType().ID() {
				t.Fatalf("column %s: len %d type %s, want %d %s", cols[c].Name, a.Len(), a.DataType(), b.N, cols[c].Type.ArrowType())
			}
		}
		if got := s.Offset(); got != before+int64(b.N) {
			t.Fatalf("Offset after %d rows from %d = %d", b.N, before, got)
		}
		for i := 0; i < b.N; i++ {
			rows = append(rows, b.Row(i))
		}
	}
	return rows
}

func fixed(n int) func() int { return func() int { return n } }

// randomSizes varies batch sizes metamorphically; the seed is logged so a failure replays.
func randomSizes(t testing.TB, seed int64) func() int {
	t.Logf("batch-size seed %d", seed)
	r := rand.New(rand.NewSource(seed))
	choices := []int{1, 3, 7, 64, 1024}
	return func() int { return choices[r.Intn(len(choices))] }
}

func format(rows [][]any, cols []catalog.Column) string {
	var sb strings.Builder
	ts := typesOf(cols)
	for _, r := range rows {
		for c, v := range r {
			if c > 0 {
				sb.WriteByte('|')
			}
			sb.WriteString(types.Display(v, ts[c]))
		}
		sb.WriteByte('\n')
	}
	return sb.String()
}

func nexmarkOpts(table string, kv ...string) map[string]string {
	m := map[string]string{"connector": "nexmark", "nexmark.table": table}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

func colIndex(cols []catalog.Column, name string) int {
	for i, c := range cols {
		if c.Name == name {
			return i
		}
	}
	panic("no column " + name)
}
