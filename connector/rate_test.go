package connector

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/types"
)

type nextResult struct {
	b   *exec.Batch
	err error
}

// nextAsync runs Next in a goroutine and waits until it sleeps on the clock (or returns).
func nextAsync(t *testing.T, ctx context.Context, s Source, c *fakeClock, max int) chan nextResult {
	t.Helper()
	done := make(chan nextResult, 1)
	go func() {
		b, err := s.Next(ctx, max)
		done <- nextResult{b, err}
	}()
	select {
	case <-c.slept:
	case r := <-done:
		t.Fatalf("Next returned %v rows, err %v, without waiting for the clock", r.b, r.err)
	case <-time.After(10 * time.Second):
		t.Fatal("Next neither slept nor returned")
	}
	return done
}

func await(t *testing.T, done chan nextResult) nextResult {
	t.Helper()
	select {
	case r := <-done:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("Next did not return after the clock advanced")
	}
	return nextResult{}
}

func TestRateLimitDatagen(t *testing.T) {
	clock := newFakeClock()
	cols := []catalog.Column{{Name: "id", Type: types.TBigInt}}
	s, err := Open(map[string]string{"connector": "datagen", "rows.per.second": "100", "fields.id.kind": "sequence"}, cols, clock)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// Row 0 is due at the first Next.
	b, err := s.Next(ctx, 1000)
	if err != nil || b.N != 1 {
		t.Fatalf("first Next = %v rows, %v; want 1 row", b, err)
	}
	// Row 1 is due 10 ms later: Next blocks until the clock says so.
	done := nextAsync(t, ctx, s, clock, 1000)
	select {
	case r := <-done:
		t.Fatalf("Next returned %d rows before the clock advanced", r.b.N)
	default:
	}
	clock.Advance(time.Second)
	r := await(t, done)
	if r.err != nil || r.b.N != 100 {
		t.Fatalf("after 1 s at 100 rows/s Next returned %v rows, %v; want 100", r.b, r.err)
	}
	if got := exec.Int64s(r.b.Cols[0]); got[0] != 1 || got[99] != 100 {
		t.Fatalf("rows %d..%d, want 1..100", got[0], got[99])
	}
	// max still caps a batch, and what is due is returned without sleeping.
	clock.Advance(time.Second)
	for _, want := range []int{30, 30, 30, 10} {
		b, err := s.Next(ctx, 30)
		if err != nil || b.N != want {
			t.Fatalf("Next(30) = %v rows, %v; want %d", b, err, want)
		}
	}
	// Cancellation while blocked returns ctx.Err().
	cctx, cancel := context.WithCancel(ctx)
	done = nextAsync(t, cctx, s, clock, 10)
	cancel()
	if r := await(t, done); !errors.Is(r.err, context.Canceled) {
		t.Fatalf("cancelled Next = %v, want context.Canceled", r.err)
	}
	if _, err := s.Next(cctx, 10); !errors.Is(err, context.Canceled) {
		t.Fatalf("Next on a cancelled context = %v", err)
	}
	if s.Offset() != 201 {
		t.Fatalf("Offset = %d, want 201", s.Offset())
	}
}

// The rate counts events of all kinds: at 100 events/s a bid table sees about 92 rows a
// second, and event time advances 10 ms per event.
func TestRateLimitNexmark(t *testing.T) {
	clock := newFakeClock()
	cols := colsOf(bidKind)
	s, err := Open(nexmarkOpts("bid", "events.per.second", "100", "nexmark.out.of.order.ms", "0"), cols, clock)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if b, err := s.Next(ctx, 1000); err != nil || b.N != 1 {
		t.Fatalf("first Next = %v, %v; want 1 row", b, err)
	}
	done := nextAsync(t, ctx, s, clock, 1000)
	clock.Advance(time.Second)
	r := await(t, done)
	if r.err != nil || r.b.N < 88 || r.b.N > 96 {
		t.Fatalf("after 1 s at 100 events/s: %v bids, %v; want about 92", r.b, r.err)
	}
	ts := exec.Int64s(r.b.Cols[colIndex(cols, "date_time")])
	if gap := ts[1] - ts[0]; gap != 10 {
		t.Fatalf("event-time gap %d ms at 100 events/s, want 10", gap)
	}
}

// SeekTo restarts the schedule: after a restart the source does not burst to catch up with
// time that passed while it was down.
func TestRateLimitSeekRestartsSchedule(t *testing.T) {
	clock := newFakeClock()
	cols := []catalog.Column{{Name: "x", Type: types.TInt}}
	s, err := Open(map[string]string{"connector": "datagen", "rows.per.second": "10"}, cols, clock)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if b, _ := s.Next(ctx, 100); b.N != 1 {
		t.Fatalf("first Next = %d rows", b.N)
	}
	clock.Advance(time.Hour)
	if err := s.SeekTo(5); err != nil {
		t.Fatal(err)
	}
	if b, _ := s.Next(ctx, 100); b.N != 1 {
		t.Fatalf("Next after Seek = %d rows, want 1", b.N)
	}
	clock.Advance(500 * time.Millisecond)
	if b, _ := s.Next(ctx, 100); b.N != 5 {
		t.Fatalf("after 0.5 s at 10 rows/s: %d rows, want 5", b.N)
	}
}

func TestRealClockSleep(t *testing.T) {
	c := RealClock()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := c.Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("Sleep on a cancelled context = %v", err)
	}
	if err := c.Sleep(context.Background(), 0); err != nil {
		t.Fatal(err)
	}
}
