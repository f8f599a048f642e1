package types

import (
	"math/rand"
	"testing"
	"time"
)

// TestParseTimestampFastMatchesTime checks the hand-written parser against the time package
// on random instants from 1600 to 2400.
func TestParseTimestampFastMatchesTime(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	lo := time.Date(1600, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	hi := time.Date(2400, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	for i := 0; i < 20000; i++ {
		ms := lo + r.Int63n(hi-lo)
		s := FormatTimestamp(ms)
		got, ok := parseTimestampFast(s)
		if !ok || got != ms {
			t.Fatalf("%s: got %d ok=%v, want %d", s, got, ok, ms)
		}
	}
	for _, bad := range []string{"2024-02-30 00:00:00", "2024-13-01 00:00:00", "2024-01-01 24:00:00", "2024-01-01 00:00:00.x"} {
		if _, ok := parseTimestampFast(bad); ok {
			t.Errorf("%q accepted", bad)
		}
		if _, err := ParseTimestamp(bad); err == nil {
			t.Errorf("%q accepted by ParseTimestamp", bad)
		}
	}
	if v, err := ParseTimestamp("2024-01-01 00:00:01.5"); err != nil || v != time.Date(2024, 1, 1, 0, 0, 1, 5e8, time.UTC).UnixMilli() {
		t.Errorf("fraction: %d %v", v, err)
	}
	if v, err := ParseTimestamp("2024-01-01 00:00:01.123456"); err != nil || v != time.Date(2024, 1, 1, 0, 0, 1, 123e6, time.UTC).UnixMilli() {
		t.Errorf("microseconds truncate: %d %v", v, err)
	}
}

func TestFormatDecimal(t *testing.T) {
	cases := []struct {
		v     int64
		scale int8
		want  string
	}{{1250, 2, "12.50"}, {-5, 2, "-0.05"}, {7, 0, "7"}, {0, 3, "0.000"}}
	for _, c := range cases {
		if got := FormatDecimal(c.v, c.scale); got != c.want {
			t.Errorf("FormatDecimal(%d, %d) = %s, want %s", c.v, c.scale, got, c.want)
		}
	}
}
