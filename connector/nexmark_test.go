package connector

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/types"
)

var allKinds = []*nexmarkKind{personKind, auctionKind, bidKind}

// The event-number model the tests check the generator against, restated independently:
// in each block of 50 events, 1 person (offset 0), 3 auctions (1-3), 46 bids (4-49).
func bidEvent(r int64) int64     { return r/46*50 + 4 + r%46 }
func auctionEvent(r int64) int64 { return r/3*50 + 1 + r%3 }
func personEvent(r int64) int64  { return r * 50 }

func TestNexmarkProportions(t *testing.T) {
	for _, tc := range []struct {
		events string
		want   map[string]int
	}{
		{"5000", map[string]int{"person": 100, "auction": 300, "bid": 4600}},
		{"5003", map[string]int{"person": 101, "auction": 302, "bid": 4600}},
		{"5010", map[string]int{"person": 101, "auction": 303, "bid": 4606}},
		{"0", map[string]int{"person": 0, "auction": 0, "bid": 0}},
	} {
		for _, k := range allKinds {
			cols := colsOf(k)
			s := mustOpen(t, nexmarkOpts(k.name, "events.max", tc.events), cols)
			rows := drain(t, s, cols, -1, fixed(1000))
			if len(rows) != tc.want[k.name] {
				t.Errorf("events.max=%s: %s has %d rows, want %d", tc.events, k.name, len(rows), tc.want[k.name])
			}
			// io.EOF is sticky.
			if _, err := s.Next(context.Background(), 10); !errors.Is(err, io.EOF) {
				t.Errorf("%s: Next after the end = %v, want io.EOF", k.name, err)
			}
		}
	}
}

func TestNexmarkIDsAreDense(t *testing.T) {
	for _, k := range []*nexmarkKind{personKind, auctionKind} {
		cols := colsOf(k)
		rows := drain(t, mustOpen(t, nexmarkOpts(k.name, "events.max", "5000"), cols), cols, -1, fixed(77))
		for i, r := range rows {
			if got := r[0].(int64); got != 1000+int64(i) {
				t.Fatalf("%s row %d has id %d, want %d", k.name, i, got, 1000+i)
			}
		}
	}
}

func TestNexmarkDeterminism(t *testing.T) {
	for _, k := range allKinds {
		cols := colsOf(k)
		run := func(seed string) string {
			s := mustOpen(t, nexmarkOpts(k.name, "seed", seed), cols)
			return format(drain(t, s, cols, 3000, randomSizes(t, int64(len(seed)))), cols)
		}
		a, b, c := run("42"), run("42"), run("43")
		if a != b {
			t.Errorf("%s: two runs with seed 42 differ", k.name)
		}
		if a == c {
			t.Errorf("%s: seeds 42 and 43 give the same rows", k.name)
		}
	}
}

func TestNexmarkSeek(t *testing.T) {
	for _, k := range allKinds {
		cols := colsOf(k)
		opts := nexmarkOpts(k.name, "seed", "7", "events.max", "20000")
		all := drain(t, mustOpen(t, opts, cols), cols, -1, fixed(1024))
		for i, n := range []int{0, 1, 45, 46, 47, 299, len(all) - 1, len(all)} {
			s := mustOpen(t, opts, cols)
			if err := s.SeekTo(int64(n)); err != nil {
				t.Fatalf("SeekTo(%d): %v", n, err)
			}
			if s.Offset() != int64(n) {
				t.Fatalf("Offset after SeekTo(%d) = %d", n, s.Offset())
			}
			rest := drain(t, s, cols, -1, randomSizes(t, int64(i)))
			if got, want := format(rest, cols), format(all[n:], cols); got != want {
				t.Fatalf("%s: rows after SeekTo(%d) differ from a fresh run's", k.name, n)
			}
		}
		s := mustOpen(t, opts, cols)
		if err := s.SeekTo(int64(len(all) + 1)); err == nil {
			t.Errorf("%s: Seek past the end succeeded", k.name)
		}
		if err := s.SeekTo(-1); err == nil {
			t.Errorf("%s: SeekTo(-1) succeeded", k.name)
		}
	}
}

// A table may declare any subset of the schema, in any order, with any case; its values are
// those of the full schema.
func TestNexmarkColumnSubset(t *testing.T) {
	full := colsOf(bidKind)
	sub := []catalog.Column{{Name: "Price", Type: types.TBigInt}, {Name: "URL", Type: types.TVarchar}, {Name: "auction", Type: types.TBigInt}}
	opts := nexmarkOpts("bid", "seed", "3")
	a := drain(t, mustOpen(t, opts, full), full, 500, fixed(100))
	b := drain(t, mustOpen(t, opts, sub), sub, 500, fixed(33))
	for i := range a {
		want := []any{a[i][colIndex(full, "price")], a[i][colIndex(full, "url")], a[i][colIndex(full, "auction")]}
		for c := range want {
			if b[i][c] != want[c] {
				t.Fatalf("row %d column %s = %v, want %v", i, sub[c].Name, b[i][c], want[c])
			}
		}
	}
}

// SPEC.md's bids table: no 'nexmark.table' (its columns fit bid alone) and the event time
// in a column named ts. Its rows are the bid table's, ts being date_time.
func TestNexmarkSpecBids(t *testing.T) {
	full := colsOf(bidKind)
	spec := []catalog.Column{{Name: "auction", Type: types.TBigInt}, {Name: "bidder", Type: types.TBigInt},
		{Name: "price", Type: types.TBigInt}, {Name: "ts", Type: types.TTimestamp}}
	a := drain(t, mustOpen(t, nexmarkOpts("bid", "seed", "3"), full), full, 500, fixed(100))
	b := drain(t, mustOpen(t, map[string]string{"connector": "nexmark", "seed": "3"}, spec), spec, 500, fixed(33))
	if len(a) != len(b) {
		t.Fatalf("%d rows, want %d", len(b), len(a))
	}
	for i := range a {
		want := []any{a[i][0], a[i][1], a[i][2], a[i][colIndex(full, "date_time")]}
		for c := range want {
			if b[i][c] != want[c] {
				t.Fatalf("row %d column %s = %v, want %v", i, spec[c].Name, b[i][c], want[c])
			}
		}
	}
}

// The generator's guarantee: every bid references an auction and a person generated at a
// smaller event number — the auction among the newest 101, the person among the newest
// 1000 — and every auction's seller is a person generated before it.
func TestNexmarkReferentialIntegrity(t *testing.T) {
	opts := func(table string) map[string]string { return nexmarkOpts(table, "events.max", "100000", "seed", "11") }
	pc, ac, bc := colsOf(personKind), colsOf(auctionKind), colsOf(bidKind)
	persons := drain(t, mustOpen(t, opts("person"), pc), pc, -1, fixed(1000))
	auctions := drain(t, mustOpen(t, opts("auction"), ac), ac, -1, fixed(1000))
	bids := drain(t, mustOpen(t, opts("bid"), bc), bc, -1, fixed(1000))

	personAt := map[int64]int64{} // id -> event number
	for r, row := range persons {
		personAt[row[0].(int64)] = personEvent(int64(r))
	}
	auctionAt := map[int64]int64{}
	var auctionIDs []int64 // in event order
	for r, row := range auctions {
		e := auctionEvent(int64(r))
		auctionAt[row[0].(int64)] = e
		auctionIDs = append(auctionIDs, row[0].(int64))
		seller := row[colIndex(ac, "seller")].(int64)
		if pe, ok := personAt[seller]; !ok || pe >= e {
			t.Fatalf("auction %d (event %d) has seller %d, not a person generated before it", row[0], e, seller)
		}
		if c := row[colIndex(ac, "category")].(int64); c < 10 || c > 14 {
			t.Fatalf("auction %d has category %d", row[0], c)
		}
		if row[colIndex(ac, "reserve")].(int64) < row[colIndex(ac, "initial_bid")].(int64) {
			t.Fatalf("auction %d: reserve below initial bid", row[0])
		}
		if row[colIndex(ac, "expires")].(int64) <= row[colIndex(ac, "date_time")].(int64) {
			t.Fatalf("auction %d expires before it starts", row[0])
		}
	}
	hot := 0
	for r, row := range bids {
		e := bidEvent(int64(r))
		a, bidder := row[0].(int64), row[1].(int64)
		ae, ok := auctionAt[a]
		if !ok || ae >= e {
			t.Fatalf("bid %d (event %d) references auction %d, not generated before it", r, e, a)
		}
		newest := auctionIDs[(e/50)*3+2]
		if newest-a > 100 {
			t.Fatalf("bid %d references auction %d, %d behind the newest", r, a, newest-a)
		}
		if a%100 == 0 {
			hot++
		}
		pe, ok := personAt[bidder]
		if !ok || pe >= e || e/50-pe/50 >= 1000 {
			t.Fatalf("bid %d (event %d) has bidder %d, not among the 1000 newest persons", r, e, bidder)
		}
		if p := row[2].(int64); p < 100 || p > 100_000_000 {
			t.Fatalf("bid %d has price %d", r, p)
		}
	}
	if frac := float64(hot) / float64(len(bids)); frac < 0.45 || frac > 0.6 {
		t.Errorf("%.2f of bids go to hot auctions, want about half", frac)
	}
}

// Event time never falls more than out.of.order behind the largest seen so far, so
// WATERMARK FOR date_time AS date_time - INTERVAL 'out.of.order' makes no row late.
func TestNexmarkBoundedDisorder(t *testing.T) {
	const ooo = 200
	first, _ := types.ParseTimestamp("2025-03-01 12:00:00")
	for _, gap := range []string{"1", "10"} {
		for _, k := range allKinds {
			cols := colsOf(k)
			s := mustOpen(t, nexmarkOpts(k.name, "events.max", "50000", "nexmark.out.of.order.ms", "200",
				"nexmark.first.event.time", "2025-03-01 12:00:00", "nexmark.inter.event.ms", gap), cols)
			rows := drain(t, s, cols, -1, fixed(500))
			dt := colIndex(cols, "date_time")
			maxSeen, disordered := int64(-1<<62), 0
			for r, row := range rows {
				ts := row[dt].(int64)
				var e int64
				switch k {
				case bidKind:
					e = bidEvent(int64(r))
				case auctionKind:
					e = auctionEvent(int64(r))
				default:
					e = personEvent(int64(r))
				}
				g := int64(1)
				if gap == "10" {
					g = 10
				}
				if base := first + e*g; ts > base || ts < base-ooo {
					t.Fatalf("%s row %d: date_time %d outside [%d, %d]", k.name, r, ts, base-ooo, base)
				}
				if ts < maxSeen-ooo {
					t.Fatalf("%s row %d: date_time %s is late: more than %d ms behind %s",
						k.name, r, types.FormatTimestamp(ts), ooo, types.FormatTimestamp(maxSeen))
				}
				if ts < maxSeen {
					disordered++
				}
				maxSeen = max(maxSeen, ts)
			}
			if k == bidKind && disordered == 0 {
				t.Errorf("gap %s: no bid is out of order; the disorder is not exercised", gap)
			}
		}
	}
	// With disorder off, event time is exactly first + e * gap.
	cols := colsOf(bidKind)
	rows := drain(t, mustOpen(t, nexmarkOpts("bid", "nexmark.out.of.order.ms", "0", "nexmark.inter.event.ms", "3"), cols), cols, 100, fixed(100))
	for r, row := range rows {
		if got, want := row[5].(int64), defaultStart+3*bidEvent(int64(r)); got != want {
			t.Fatalf("row %d: date_time %d, want %d", r, got, want)
		}
	}
}

func TestNexmarkEventsMaxIsTotalOverKinds(t *testing.T) {
	cols := colsOf(bidKind)
	s := mustOpen(t, nexmarkOpts("bid", "events.max", "54"), cols)
	rows := drain(t, s, cols, -1, fixed(1000))
	if len(rows) != 46 {
		t.Fatalf("54 events hold %d bids, want 46", len(rows))
	}
	// Seek to the end is allowed and reads EOF.
	if err := s.SeekTo(46); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Next(context.Background(), 1); !errors.Is(err, io.EOF) {
		t.Fatalf("Next at the end = %v, want io.EOF", err)
	}
}

func BenchmarkNexmarkBids(b *testing.B) {
	cols := colsOf(bidKind)
	s := mustOpen(b, nexmarkOpts("bid"), cols)
	ctx := context.Background()
	rows := 0
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		batch, err := s.Next(ctx, 1024)
		if err != nil {
			b.Fatal(err)
		}
		rows += batch.N
	}
	b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
}
