package watermark

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/streamsql/streamsql/exec"
)

type fakeClock struct{ t time.Time }

func (c *fakeClock) Now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

func TestGeneratorRowByRow(t *testing.T) {
	g := New()
	before, after := g.Advance([]int64{10, 5, 20, 15})
	want := []int64{exec.NoWatermark, 10, 10, 20}
	for i := range want {
		if before[i] != want[i] {
			t.Fatalf("before[%d] = %d, want %d", i, before[i], want[i])
		}
	}
	if after != 20 {
		t.Fatalf("after = %d, want 20", after)
	}
	if g.W != exec.NoWatermark {
		t.Fatalf("Advance must not change W before Set")
	}
	g.Set(after)
	g.Set(3)
	if g.W != 20 {
		t.Fatalf("W went back to %d", g.W)
	}
}

func TestPartitionsMinimum(t *testing.T) {
	c := &fakeClock{t: time.Unix(0, 0)}
	p := NewPartitions(2, 0, 0, c)
	if w := p.Observe(0, 100); w != exec.NoWatermark {
		t.Fatalf("one silent partition must hold the watermark, got %d", w)
	}
	if w := p.Observe(1, 50); w != 50 {
		t.Fatalf("min = %d, want 50", w)
	}
	if w := p.Observe(1, 200); w != 100 {
		t.Fatalf("min = %d, want 100", w)
	}
}

func TestPartitionsIdleness(t *testing.T) {
	c := &fakeClock{t: time.Unix(0, 0)}
	p := NewPartitions(2, 5*time.Second, 0, c)
	p.Observe(0, 100)
	p.Observe(1, 10)
	if p.Current() != 10 {
		t.Fatalf("current = %d, want 10", p.Current())
	}
	// Partition 1 goes quiet; partition 0 keeps producing.
	for i := 0; i < 6; i++ {
		c.advance(time.Second)
		p.Observe(0, int64(200+i))
	}
	if !p.Idle(1) || p.Idle(0) {
		t.Fatalf("partition 1 should be idle after 6 s, partition 0 not")
	}
	if p.Current() != 205 {
		t.Fatalf("idle partition must be left out: current = %d, want 205", p.Current())
	}
	// It returns behind: the watermark does not go back.
	if w := p.Observe(1, 50); w != 205 {
		t.Fatalf("watermark went back to %d", w)
	}
	if p.Idle(1) {
		t.Fatalf("a partition with rows is not idle")
	}
	// It catches up: the minimum applies again.
	if w := p.Observe(1, 300); w != 205 {
		t.Fatalf("current = %d, want 205 (partition 0 is the minimum)", w)
	}
	c.advance(time.Second)
	if w := p.Observe(0, 400); w != 300 {
		t.Fatalf("current = %d, want 300", w)
	}
}

func TestPartitionsIdleTimeoutOffByDefault(t *testing.T) {
	c := &fakeClock{t: time.Unix(0, 0)}
	p := NewPartitions(2, 0, 0, c)
	p.Observe(0, 100)
	c.advance(time.Hour)
	if p.Idle(1) || p.Tick() != exec.NoWatermark {
		t.Fatalf("without an idle timeout a silent partition stalls the watermark")
	}
}

func TestPartitionsAlignment(t *testing.T) {
	c := &fakeClock{t: time.Unix(0, 0)}
	p := NewPartitions(2, 0, 1000, c)
	p.Observe(0, 1000)
	p.Observe(1, 1000)
	p.Observe(0, 1500)
	if p.Paused(0) {
		t.Fatalf("500 ms ahead is within the 1000 ms drift")
	}
	p.Observe(0, 2500)
	if !p.Paused(0) || p.Paused(1) {
		t.Fatalf("partition 0 at 2500 vs watermark 1000 must pause; partition 1 must not")
	}
	p.Observe(1, 2000)
	if p.Paused(0) {
		t.Fatalf("after the slow partition catches up, the fast one resumes")
	}
}

// When every partition is idle the watermark holds: quiet everywhere says nothing about
// what comes next. Marks and Restore carry the partitions' watermarks across a restart.
func TestPartitionsAllIdleAndRestore(t *testing.T) {
	c := &fakeClock{t: time.Unix(0, 0)}
	p := NewPartitions(2, 5*time.Second, 0, c)
	p.Observe(0, 100)
	p.Observe(1, 40)
	c.advance(time.Minute)
	if w := p.Tick(); w != 40 {
		t.Fatalf("all idle: watermark %d, want 40 (held)", w)
	}
	if w := p.Observe(0, 120); w != 120 {
		t.Fatalf("partition 1 idle, 0 active at 120: watermark %d, want 120", w)
	}
	q := NewPartitions(3, 0, 0, c)
	q.Restore(p.Marks(), p.Current())
	if q.Current() != 120 || q.Observe(1, 50) != 120 {
		t.Fatalf("restored: current %d", q.Current())
	}
	if w := q.Observe(2, 200); w != 120 {
		t.Fatalf("restored with a new partition: %d, want 120 (partition 1 at 50 holds it)", w)
	}
}

// Advance gives each row the watermark before it, never below the table's own (floor).
func TestPartitionsAdvance(t *testing.T) {
	c := &fakeClock{t: time.Unix(0, 0)}
	p := NewPartitions(2, 0, 0, c)
	before, after := p.Advance([]int32{0, 1, 1, 0}, []int64{50, 20, 70, 90}, exec.NoWatermark)
	want := []int64{exec.NoWatermark, exec.NoWatermark, 20, 50}
	if fmt.Sprint(before) != fmt.Sprint(want) || after != 70 {
		t.Fatalf("before = %v after = %d, want %v and 70", before, after, want)
	}
	before, after = p.Advance([]int32{0}, []int64{95}, 80)
	if before[0] != 80 || after != 80 {
		t.Fatalf("with floor 80: before = %v after = %d, want [80] and 80", before, after)
	}
}

func TestRunsRoundTrip(t *testing.T) {
	for _, before := range [][]int64{{}, {exec.NoWatermark}, {1, 1, 1, 5, 5, 9}, {-3, 0, 7}} {
		b := EncodeRuns(before, 42)
		got, after, err := DecodeRuns(b, len(before))
		if err != nil || fmt.Sprint(got) != fmt.Sprint(before) || after != 42 {
			t.Fatalf("%v: got %v %d %v", before, got, after, err)
		}
		if _, _, err := DecodeRuns(b, len(before)+1); err == nil {
			t.Fatalf("%v: a wrong row count must be an error", before)
		}
		if len(b) > 1 {
			if _, _, err := DecodeRuns(b[:len(b)-1], len(before)); err == nil {
				t.Fatalf("%v: a truncated encoding must be an error", before)
			}
		}
	}
}

// AdvanceShifted equals Advance over the shifted values, and refuses a shift that overflows.
func TestGeneratorAdvanceShifted(t *testing.T) {
	for _, d := range []int64{0, 1000, -1000} {
		g := New()
		g.Set(7)
		vals := []int64{10, 5, 20_000, 15, -3, 20_001}
		shifted := make([]int64, len(vals))
		for i, v := range vals {
			shifted[i] = v - d
		}
		wantBefore, wantAfter := g.Advance(shifted)
		before, after, ok := g.AdvanceShifted(vals, d)
		if !ok || after != wantAfter || fmt.Sprint(before) != fmt.Sprint(wantBefore) {
			t.Fatalf("d=%d: %v %d %v, want %v %d", d, before, after, ok, wantBefore, wantAfter)
		}
	}
	g := New()
	if _, _, ok := g.AdvanceShifted([]int64{0, math.MinInt64 + 999}, 1000); ok {
		t.Fatal("MinInt64+999 - 1000 did not overflow")
	}
	if _, _, ok := g.AdvanceShifted([]int64{math.MaxInt64 - 10}, -11); ok {
		t.Fatal("MaxInt64-10 + 11 did not overflow")
	}
	if _, _, ok := g.AdvanceShifted([]int64{math.MinInt64 + 1000, math.MaxInt64}, 1000); !ok {
		t.Fatal("MinInt64+1000 - 1000 overflowed")
	}
}
