package connector

import (
	"strings"
	"testing"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/types"
)

func TestOptionErrors(t *testing.T) {
	bid := colsOf(bidKind)
	one := func(name string, ty types.T) []catalog.Column { return []catalog.Column{{Name: name, Type: ty}} }
	for _, tc := range []struct {
		opts map[string]string
		cols []catalog.Column
		want []string // substrings of the error
	}{
		{map[string]string{}, bid, []string{"'connector' is required", "'nexmark' or 'datagen'"}},
		{map[string]string{"connector": "kafak"}, bid, []string{"'connector' = 'kafak'", "expected 'kafka', 'file', 'nexmark' or 'datagen'"}},
		// nexmark
		{map[string]string{"connector": "nexmark"}, []catalog.Column{{Name: "id", Type: types.TBigInt}},
			[]string{"'nexmark.table' is required", "'bid', 'auction' or 'person'", "fit 2 of"}},
		{map[string]string{"connector": "nexmark"}, one("name", types.TBigInt), []string{"'nexmark.table' is required", "fit 0 of"}},
		{nexmarkOpts("bids"), bid, []string{"'nexmark.table' = 'bids'", "'bid', 'auction' or 'person'"}},
		{nexmarkOpts("bid", "rate", "5"), bid, []string{"unknown option 'rate'", "'events.per.second'"}},
		{nexmarkOpts("bid", "events.per.second", "fast"), bid, []string{"'events.per.second' = 'fast'", "rows per second"}},
		{nexmarkOpts("bid", "events.per.second", "-1"), bid, []string{"'events.per.second' = '-1'"}},
		{nexmarkOpts("bid", "events.max", "-5"), bid, []string{"'events.max' = '-5'", "non-negative integer"}},
		{nexmarkOpts("bid", "seed", "x"), bid, []string{"'seed' = 'x'", "64-bit integer"}},
		{nexmarkOpts("bid", "nexmark.first.event.time", "yesterday"), bid, []string{"'nexmark.first.event.time' = 'yesterday'", "YYYY-MM-DD HH:MM:SS"}},
		{nexmarkOpts("bid", "nexmark.inter.event.ms", "1.5"), bid, []string{"'nexmark.inter.event.ms' = '1.5'", "milliseconds"}},
		{nexmarkOpts("bid", "nexmark.out.of.order.ms", "5", "nexmark.max.out.of.order", "5"), bid, []string{"aliases"}},
		{nexmarkOpts("bid"), one("ts", types.TBigInt), []string{"no column ts", "bid(auction BIGINT, bidder BIGINT, price BIGINT, channel VARCHAR, url VARCHAR, date_time TIMESTAMP(3), extra VARCHAR)"}},
		{nexmarkOpts("bid"), []catalog.Column{{Name: "date_time", Type: types.TTimestamp}, {Name: "ts", Type: types.TTimestamp}},
			[]string{"columns date_time and ts both take bid's date_time"}},
		{nexmarkOpts("auction"), one("expires_at", types.TTimestamp), []string{"no column expires_at", "auction(id BIGINT"}},
		{nexmarkOpts("bid"), one("price", types.TDouble), []string{"column price is DOUBLE: expected BIGINT"}},
		{nexmarkOpts("person"), one("auction", types.TBigInt), []string{"no column auction", "person(id BIGINT, name VARCHAR"}},
		// datagen
		{datagenOpts("bogus", "1"), one("a", types.TInt), []string{"unknown option 'bogus'", "'rows.per.second'"}},
		{datagenOpts("number-of-rows", "many"), one("a", types.TInt), []string{"'number-of-rows' = 'many'", "non-negative integer"}},
		{datagenOpts("rows.per.second", "2000000000"), one("a", types.TInt), []string{"'rows.per.second'", "[0, 1000000000]"}},
		{datagenOpts("fields.b.kind", "random"), one("a", types.TInt), []string{"'fields.b.kind' names no column", "among a"}},
		{datagenOpts("fields.a.kind", "gaussian"), one("a", types.TInt), []string{"'fields.a.kind' = 'gaussian'", "'sequence' or 'random' for INT column a"}},
		{datagenOpts("fields.a.kind", "sequence"), one("a", types.TBool), []string{"'fields.a.kind' = 'sequence'", "'random' for BOOLEAN"}},
		{datagenOpts("fields.a.kind", "timestamp"), one("a", types.TBigInt), []string{"'fields.a.kind' = 'timestamp'"}},
		{datagenOpts("fields.a.length", "5"), one("a", types.TBigInt), []string{"'fields.a.length'", "does not apply to kind 'random' of BIGINT column a"}},
		{datagenOpts("fields.a.kind", "sequence", "fields.a.min", "5"), one("a", types.TBigInt), []string{"'fields.a.min'", "does not apply to kind 'sequence'"}},
		{datagenOpts("fields.a.min", "10", "fields.a.max", "1"), one("a", types.TBigInt), []string{"'min' 10 is above 'max' 1"}},
		{datagenOpts("fields.a.max", "3000000000"), one("a", types.TInt), []string{"'fields.a.max' = '3000000000'", "[-2147483648, 2147483647]"}},
		{datagenOpts("fields.a.max", "123456.789"), one("a", types.DecimalOf(5, 2)), []string{"'fields.a.max'", "fits DECIMAL(5,2)"}},
		{datagenOpts("fields.a.min", "x"), one("a", types.TDouble), []string{"'fields.a.min' = 'x'", "finite DOUBLE"}},
		{datagenOpts("fields.a.kind", "sequence", "fields.a.start", "10", "fields.a.end", "3"), one("a", types.TBigInt), []string{"'fields.a.end' = '3'", "not below 'start'"}},
		{datagenOpts("fields.a.mode", "later"), one("a", types.TTimestamp), []string{"'fields.a.mode' = 'later'", "'event' or 'now'"}},
		{datagenOpts("fields.a.mode", "now", "fields.a.step.ms", "5"), one("a", types.TTimestamp), []string{"'fields.a.step.ms'", "does not apply"}},
		{datagenOpts("fields.a.start", "noon"), one("a", types.TTimestamp), []string{"'fields.a.start' = 'noon'", "timestamp"}},
		{datagenOpts("fields.a.min", "2024-13-01"), one("a", types.TDate), []string{"'fields.a.min'", "YYYY-MM-DD"}},
	} {
		_, err := Open(tc.opts, tc.cols, newFakeClock())
		if err == nil {
			t.Errorf("Open(%v) succeeded, want an error with %q", tc.opts, tc.want)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("Open(%v) = %q, want it to contain %q", tc.opts, err, w)
			}
		}
	}
}

// Column names may contain dots: the longest column name matching a 'fields.' key wins.
func TestDatagenDottedColumnNames(t *testing.T) {
	cols := []catalog.Column{{Name: "a", Type: types.TBigInt}, {Name: "a.kind", Type: types.TBigInt}}
	s := mustOpen(t, datagenOpts("fields.a.kind.kind", "sequence", "fields.a.kind", "sequence", "fields.a.start", "7"), cols)
	rows := drain(t, s, cols, 2, fixed(2))
	if rows[1][0].(int64) != 8 || rows[1][1].(int64) != 1 {
		t.Fatalf("rows %v, want a = 7, 8 and a.kind = 0, 1", rows)
	}
}

func TestOpenAcceptsValidOptions(t *testing.T) {
	for _, opts := range []map[string]string{
		nexmarkOpts("BID", "events.per.second", "1000", "events.max", "10", "seed", "-3",
			"nexmark.max.out.of.order", "50", "nexmark.first.event.time", "2024-05-05 10:00:00", "nexmark.inter.event.ms", "5"),
		{"connector": "NexMark", "nexmark.table": "person", "seed": "18446744073709551615"},
	} {
		kind := bidKind
		if opts["nexmark.table"] == "person" {
			kind = personKind
		}
		if _, err := Open(opts, colsOf(kind), nil); err != nil {
			t.Errorf("Open(%v): %v", opts, err)
		}
	}
}
