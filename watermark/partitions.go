package watermark

import (
	"time"

	"github.com/streamsql/streamsql/exec"
)

// Clock is the processing-time clock idleness is measured with; tests inject a fake.
type Clock interface{ Now() time.Time }

// Partitions combines the watermarks of a source's partitions (SPEC.md §3): each partition
// keeps the largest watermark value of its own rows; the source's watermark is the minimum
// over the partitions that are not idle. A partition with no rows for IdleTimeout (0: never)
// is left out of the minimum until it has rows again; when all are idle, the watermark
// holds. Alignment: a partition whose
// watermark runs more than MaxDrift (0: no limit) ahead of the combined watermark is paused —
// its reader must stop taking rows from it — instead of buffering without bound.
//
// Invariant: Current never decreases, even when an idle partition returns behind it (its
// rows are then judged late by the operators, as any row at or below the watermark is).
type Partitions struct {
	IdleTimeout time.Duration
	MaxDrift    int64
	clock       Clock
	wm          []int64
	seen        []time.Time
	current     int64
}

// NewPartitions tracks n partitions.
func NewPartitions(n int, idleTimeout time.Duration, maxDrift int64, clock Clock) *Partitions {
	p := &Partitions{IdleTimeout: idleTimeout, MaxDrift: maxDrift, clock: clock,
		wm: make([]int64, n), seen: make([]time.Time, n), current: exec.NoWatermark}
	now := clock.Now()
	for i := range p.wm {
		p.wm[i] = exec.NoWatermark
		p.seen[i] = now
	}
	return p
}

// Observe takes a row of partition part whose watermark expression is v, and returns the
// source's watermark after it.
func (p *Partitions) Observe(part int, v int64) int64 {
	return p.observe(part, v, p.clock.Now())
}

// observe is Observe at time now. Only a partition's own watermark rising can raise the
// minimum (a partition coming back from idleness can only lower it, and the watermark
// never goes back), so the partitions are scanned only then.
func (p *Partitions) observe(part int, v int64, now time.Time) int64 {
	p.seen[part] = now
	if v > p.wm[part] {
		p.wm[part] = v
		p.advance(now)
	}
	return p.current
}

// Tick re-evaluates idleness at the clock's current time (call it periodically while
// partitions are quiet) and returns the source's watermark.
func (p *Partitions) Tick() int64 { return p.advance(p.clock.Now()) }

// Current is the source's watermark.
func (p *Partitions) Current() int64 { return p.current }

// Idle reports whether partition part is left out of the minimum.
func (p *Partitions) Idle(part int) bool { return p.idleAt(part, p.clock.Now()) }

// A paused partition is not idle: it has rows, its reader just does not take them.
func (p *Partitions) idleAt(part int, now time.Time) bool {
	return p.IdleTimeout > 0 && now.Sub(p.seen[part]) >= p.IdleTimeout && !p.Paused(part)
}

// Paused reports whether partition part runs too far ahead and must not be read now.
func (p *Partitions) Paused(part int) bool {
	return p.MaxDrift > 0 && p.current != exec.NoWatermark && p.wm[part] > p.current+p.MaxDrift
}

// advance recomputes the combined watermark: the minimum over the partitions that are not
// idle. When every partition is idle there is no minimum and the watermark holds, as in
// Flink: a source quiet everywhere says nothing about what comes next.
func (p *Partitions) advance(now time.Time) int64 {
	m := int64(1<<63 - 1)
	active := false
	for i, w := range p.wm {
		if p.idleAt(i, now) {
			continue
		}
		active = true
		m = min(m, w)
	}
	if active && m > p.current {
		p.current = m
	}
	return p.current
}

// Advance observes rows in acceptance order — row i from partition parts[i] with watermark
// value vals[i] — and returns the watermark in force just before each row and the one after
// the last. floor is the table's watermark, which rows inserted by statements advance
// directly; the result never falls below it.
func (p *Partitions) Advance(parts []int32, vals []int64, floor int64) (before []int64, after int64) {
	before = make([]int64, len(vals))
	w := max(floor, p.current)
	now := p.clock.Now()
	for i, v := range vals {
		before[i] = w
		w = max(w, p.observe(int(parts[i]), v, now))
	}
	return before, w
}

// Marks returns each partition's watermark, to be stored with the rows that set them.
func (p *Partitions) Marks() []int64 { return append([]int64(nil), p.wm...) }

// Restore sets the partitions' watermarks from Marks stored by an earlier run (a partition
// beyond them, new since, starts with none) and the combined watermark to at least current.
func (p *Partitions) Restore(marks []int64, current int64) {
	copy(p.wm, marks)
	p.current = max(p.current, current)
}
