package connector

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/types"
)

// Decoder turns a record — a JSON object, or a CSV line's fields — into a row of a table's
// physical values. JSON fields match columns by name, case-insensitively; a missing field or
// JSON null is NULL; fields that name no column are ignored. CSV fields are the columns in
// order, an empty field NULL. A value of the wrong type, out of the column's range, or NULL
// in a NOT NULL column is an error naming the column: the record is bad.
type Decoder struct {
	cols   []catalog.Column
	byName map[string]int
}

// NewDecoder returns the decoder of a table's columns.
func NewDecoder(cols []catalog.Column) *Decoder {
	d := &Decoder{cols: cols, byName: make(map[string]int, len(cols))}
	for i, c := range cols {
		d.byName[strings.ToLower(c.Name)] = i
	}
	return d
}

// Batch makes decoded rows a batch of the table's columns.
func (d *Decoder) Batch(rows [][]any) *exec.Batch {
	ts := make([]types.T, len(d.cols))
	for i, c := range d.cols {
		ts[i] = c.Type
	}
	return exec.RowsToBatch(rows, ts)
}

// DecodeCSV decodes a CSV line's fields: as JSON values, text columns' (and times') quoted.
func (d *Decoder) DecodeCSV(fields []string) ([]any, error) {
	if len(fields) != len(d.cols) {
		return nil, fmt.Errorf("%d fields, the table has %d columns", len(fields), len(d.cols))
	}
	row := make([]any, len(d.cols))
	for i, f := range fields {
		c := d.cols[i]
		if !utf8.ValidString(f) {
			return nil, fmt.Errorf("column %s: the field is not valid UTF-8", c.Name)
		}
		if f == "" {
			if c.NotNull {
				return nil, fmt.Errorf("column %s is NOT NULL and the field is empty", c.Name)
			}
			continue
		}
		raw := json.RawMessage(f)
		switch c.Type.Kind {
		case types.Timestamp:
			if _, err := strconv.ParseInt(f, 10, 64); err != nil { // digits: epoch milliseconds, as in JSON
				raw, _ = json.Marshal(f)
			}
		case types.Varchar, types.Date:
			raw, _ = json.Marshal(f)
		case types.Bool: // the text a CAST to BOOLEAN takes
			if v, ok := types.ParseBool(f); ok {
				raw, _ = json.Marshal(v)
			}
		case types.Double: // the text a CAST to DOUBLE takes (Inf and NaN too, unlike JSON)
			v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
			if err != nil {
				return nil, fmt.Errorf("column %s: expected a number for DOUBLE, got %s", c.Name, f)
			}
			row[i] = v
			continue
		}
		x, err := fieldValue(raw, c.Type)
		if err != nil {
			return nil, fmt.Errorf("column %s: %v", c.Name, err)
		}
		row[i] = x
	}
	return row, nil
}

// jsonKind names the kind of JSON value encoding/json reports a type error for.
func jsonKind(v string) string {
	switch {
	case v == "array":
		return "an array"
	case v == "string":
		return "a string"
	case strings.HasPrefix(v, "number"):
		return "a number"
	case v == "bool":
		return "a boolean"
	}
	return v
}

// DecodeJSON decodes a JSON object.
func (d *Decoder) DecodeJSON(v []byte) ([]any, error) {
	if !utf8.Valid(v) {
		return nil, fmt.Errorf("not valid UTF-8")
	}
	if len(bytes.TrimSpace(v)) == 0 { // encoding/json would say only EOF
		return nil, fmt.Errorf("not a JSON object: the record is empty")
	}
	var obj map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(v))
	if err := dec.Decode(&obj); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) { // valid JSON, but not an object: say what it is
			return nil, fmt.Errorf("not a JSON object: %s", jsonKind(te.Value))
		}
		return nil, fmt.Errorf("not a JSON object: %v", err)
	}
	if obj == nil {
		return nil, fmt.Errorf("not a JSON object: null")
	}
	if rest := bytes.TrimSpace(v[dec.InputOffset():]); len(rest) > 0 {
		return nil, fmt.Errorf("not a JSON object: text after the object")
	}
	row := make([]any, len(d.cols))
	given := make([]string, len(d.cols))
	for k, raw := range obj {
		i, ok := d.byName[strings.ToLower(k)]
		if !ok {
			continue
		}
		if given[i] != "" {
			return nil, fmt.Errorf("fields %s and %s both name column %s", min(given[i], k), max(given[i], k), d.cols[i].Name)
		}
		given[i] = k
		x, err := fieldValue(raw, d.cols[i].Type)
		if err != nil {
			return nil, fmt.Errorf("field %s: %v", k, err)
		}
		row[i] = x
	}
	for i, c := range d.cols {
		if c.NotNull && row[i] == nil {
			return nil, fmt.Errorf("field %s: missing or null, and column %s is NOT NULL", c.Name, c.Name)
		}
	}
	return row, nil
}

// minTimestamp and maxTimestamp bound epoch milliseconds to years 0001-9999, as timestamp
// text is: a wild value would otherwise overflow the WATERMARK expression or push the
// watermark to the end of time.
const (
	minTimestamp = -62135596800000
	maxTimestamp = 253402300799999
)

// fieldValue converts one JSON value to column type t's physical value (nil for null).
// Numbers are read from their text, so BIGINT and DECIMAL are exact. TIMESTAMP takes a
// string ('2024-01-01 00:00:00[.fff]', ISO 'T' and 'Z' allowed) or epoch milliseconds; DATE
// takes 'YYYY-MM-DD'.
func fieldValue(raw json.RawMessage, t types.T) (any, error) {
	s := strings.TrimSpace(string(raw))
	if s == "null" {
		return nil, nil
	}
	str, isString := "", len(s) > 0 && s[0] == '"'
	if isString {
		if err := json.Unmarshal(raw, &str); err != nil {
			return nil, err
		}
		// encoding/json makes a lone surrogate (\ud800) U+FFFD: refuse it, as a value it is not.
		if strings.ContainsRune(str, utf8.RuneError) && !strings.Contains(s, "\uFFFD") && !strings.Contains(strings.ToLower(s), `\ufffd`) {
			return nil, fmt.Errorf("a string with an invalid escape (a lone UTF-16 surrogate)")
		}
	}
	// A JSON number: digits, sign, point and exponent only (strconv would take Inf, NaN, hex).
	isNumber := len(s) > 0 && (s[0] == '-' || s[0] >= '0' && s[0] <= '9') && strings.Trim(s, "0123456789+-.eE") == ""

	switch t.Kind {
	case types.Varchar:
		if !isString {
			return nil, fmt.Errorf("expected a string for %s, got %s", t, s)
		}
		return str, nil
	case types.Bool:
		switch s {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
		return nil, fmt.Errorf("expected true or false for BOOLEAN, got %s", s)
	case types.Int, types.BigInt:
		if !isNumber {
			return nil, fmt.Errorf("expected an integer for %s, got %s", t, s)
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("expected an integer for %s, got %s", t, s)
		}
		if t.Kind == types.Int && (n < math.MinInt32 || n > math.MaxInt32) {
			return nil, fmt.Errorf("%s is out of range for INT", s)
		}
		return n, nil
	case types.Double:
		if !isNumber {
			return nil, fmt.Errorf("expected a number for DOUBLE, got %s", s)
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("expected a number for DOUBLE, got %s", s)
		}
		return f, nil
	case types.Decimal:
		text := s
		if isString {
			text = str
		} else if !isNumber {
			return nil, fmt.Errorf("expected a number for %s, got %s", t, s)
		}
		return types.ParseDecimal(text, t.Precision, t.Scale)
	case types.Timestamp:
		if isNumber {
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("expected epoch milliseconds or a timestamp string, got %s", s)
			}
			if n < minTimestamp || n > maxTimestamp {
				return nil, fmt.Errorf("epoch milliseconds %s are outside years 0001-9999", s)
			}
			return n, nil
		}
		if !isString {
			return nil, fmt.Errorf("expected a timestamp string or epoch milliseconds, got %s", s)
		}
		iso := str
		if len(iso) > 10 && iso[10] == 'T' { // ISO 8601's date-time separator
			iso = iso[:10] + " " + iso[11:]
		}
		n, err := types.ParseTimestamp(strings.TrimSuffix(iso, "Z"))
		if err != nil {
			return nil, fmt.Errorf("invalid TIMESTAMP %q", str)
		}
		if n < minTimestamp || n > maxTimestamp { // a zone offset can move it out
			return nil, fmt.Errorf("TIMESTAMP %q is outside years 0001-9999 in UTC", str)
		}
		return n, nil
	case types.Date:
		if !isString {
			return nil, fmt.Errorf("expected a 'YYYY-MM-DD' string for DATE, got %s", s)
		}
		return types.ParseDate(str)
	}
	return nil, fmt.Errorf("columns of type %s cannot be read from JSON", t)
}
