package engine

import "testing"

// TestParseDuration: Flink's durations (a number, a unit or none for milliseconds), Go's, and
// an INTERVAL's text.
func TestParseDuration(t *testing.T) {
	for in, want := range map[string]int64{
		"5000": 5000, "5000 ms": 5000, "1 min": 60_000, "1min": 60_000, "2 minutes": 120_000,
		"90s": 90_000, "5 s": 5000, "10 second": 10_000, "1 hour": 3_600_000, "3 d": 3 * 86_400_000,
		" 1 Day ": 86_400_000, "1h30m": 5_400_000, "1.5s": 1500, "0": 0, "0 s": 0, "0s": 0,
		// An INTERVAL's text form too.
		"1 hour 30 min": 5_400_000, "1.5 hours": 5_400_000, "2 weeks": 14 * 86_400_000,
	} {
		if got, err := parseDuration(in); err != nil || got != want {
			t.Errorf("parseDuration(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "-5 s", "1 fortnight", "s", "5 ns", "99999999999999999 d", "1 hour -2 hours"} {
		if got, err := parseDuration(in); err == nil {
			t.Errorf("parseDuration(%q) = %d, want an error", in, got)
		}
	}
}
