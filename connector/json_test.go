package connector

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/types"
)

var testCols = []catalog.Column{
	{Name: "id", Type: types.TBigInt, NotNull: true},
	{Name: "small", Type: types.TInt},
	{Name: "price", Type: types.DecimalOf(10, 2)},
	{Name: "ratio", Type: types.TDouble},
	{Name: "ok", Type: types.TBool},
	{Name: "name", Type: types.TVarchar},
	{Name: "ts", Type: types.TTimestamp},
	{Name: "day", Type: types.TDate},
}

func TestDecode(t *testing.T) {
	d := NewDecoder(testCols)
	for _, c := range []struct{ in, want string }{
		{`{"id": 1}`, "[1 <nil> <nil> <nil> <nil> <nil> <nil> <nil>]"},
		{`{"ID": 9223372036854775807, "small": -5, "price": 12.5, "ratio": 1e3, "ok": true, "name": "a\"b", "ts": "2024-01-01 00:00:01.5", "day": "2024-01-02"}`,
			"[9223372036854775807 -5 1250 1000 true a\"b 1704067201500 19724]"},
		{`{"id": 2, "price": "0.01", "ts": "2024-01-01T00:00:00Z", "extra": [1, 2]}`, "[2 <nil> 1 <nil> <nil> <nil> 1704067200000 <nil>]"},
		{`{"id": 3, "ts": 1704067200000, "name": null}`, "[3 <nil> <nil> <nil> <nil> <nil> 1704067200000 <nil>]"},
	} {
		row, err := d.DecodeJSON([]byte(c.in))
		if err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		if got := fmt.Sprint(row); got != c.want {
			t.Fatalf("%s: got %s, want %s", c.in, got, c.want)
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	d := NewDecoder(testCols)
	for _, c := range []struct{ in, want string }{
		{`not json`, "not a JSON object"},
		{`[1]`, "not a JSON object: an array"},
		{`"x"`, "not a JSON object: a string"},
		{`42`, "not a JSON object: a number"},
		{`true`, "not a JSON object: a boolean"},
		{`null`, "not a JSON object"},
		{`{"id": 1} {"id": 2}`, "text after the object"},
		{`{"id": 1}}`, "text after the object"},
		{`{"id": 1}]`, "text after the object"},
		{`{"id": 1, "ID": 2}`, "fields ID and id both name column id"},
		{`{"id": 1, "ts": -9223372036854775808}`, "outside years 0001-9999"},
		{`{"id": 1, "ts": 253402300800000}`, "outside years 0001-9999"},
		{`{"small": 1}`, "field id: missing or null"},
		{`{"id": null}`, "field id: missing or null"},
		{`{"id": "1"}`, "field id: expected an integer"},
		{`{"id": 1.5}`, "field id: expected an integer"},
		{`{"id": 1, "small": 3000000000}`, "field small: 3000000000 is out of range for INT"},
		{`{"id": 1, "price": 123456789.12}`, "field price"},
		{`{"id": 1, "ok": 1}`, "field ok: expected true or false"},
		{`{"id": 1, "name": 5}`, "field name: expected a string"},
		{`{"id": 1, "ts": "yesterday"}`, "field ts"},
		{`{"id": 1, "ts": true}`, "field ts: expected a timestamp string"},
		{`{"id": 1, "day": 5}`, "field day: expected a 'YYYY-MM-DD' string"},
		{`{"id": 1, "ratio": "x"}`, "field ratio: expected a number"},
	} {
		_, err := d.DecodeJSON([]byte(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("%s: got %v, want an error containing %q", c.in, err, c.want)
		}
	}
}

// FuzzDecode: any bytes, read as a JSON object or as a CSV line, give a row of the table's
// width with its NOT NULL column set, or an error — never a panic.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"id": 1, "price": 1.25, "ts": "2024-01-01 00:00:00", "name": "x"}`))
	f.Add([]byte(`{"id": -1, "small": 7, "ok": false, "day": "1999-12-31", "ratio": -0.5}`))
	f.Add([]byte(`{"id": 1, "name": "\u00e9\ud800"}`))
	f.Add([]byte(`1,7,12.50,0.5,TRUE,"a, ""b""",2024-01-01 00:00:00.5,2024-01-02`))
	f.Add([]byte(`2,,,,,,,`))
	d := NewDecoder(testCols)
	check := func(t *testing.T, how string, b []byte, row []any) {
		if len(row) != len(testCols) || row[0] == nil {
			t.Fatalf("decoded %q as %s to %v", b, how, row)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if row, err := d.DecodeJSON(b); err == nil {
			check(t, "JSON", b, row)
		}
		fields, err := csv.NewReader(bytes.NewReader(b)).Read()
		if err != nil {
			return
		}
		if row, err := d.DecodeCSV(fields); err == nil {
			check(t, "CSV", b, row)
		}
	})
}
