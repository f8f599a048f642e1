package shell

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// result is a fully read query result.
type result struct {
	cols  []string
	types []string // lower-cased DatabaseTypeName; "" when unknown
	rows  [][]any
}

// cellText renders a value for display: NULL, numbers in decimal, floats as
// the shortest round-tripping decimal, timestamps in UTC with milliseconds
// when non-zero, DATE columns as dates.
func cellText(v any, dbType string) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case string:
		return x
	case []byte:
		return string(x)
	case bool:
		return strconv.FormatBool(x)
	case float64:
		return formatFloat(x)
	case float32:
		return formatFloat(float64(x))
	case time.Time:
		return formatTime(x, dbType)
	case fmt.Stringer:
		return x.String()
	default:
		return fmt.Sprint(v)
	}
}

func formatFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	if a := math.Abs(f); a != 0 && (a >= 1e16 || a < 1e-6) {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

func formatTime(t time.Time, dbType string) string {
	u := strings.ToUpper(dbType)
	t = t.UTC()
	if strings.Contains(u, "DATE") && !strings.Contains(u, "TIME") {
		return t.Format("2006-01-02")
	}
	s := t.Format("2006-01-02 15:04:05")
	if ns := t.Nanosecond(); ns != 0 {
		if ns%1e6 == 0 {
			return fmt.Sprintf("%s.%03d", s, ns/1e6)
		}
		return s + "." + strings.TrimRight(fmt.Sprintf("%09d", ns), "0")
	}
	return s
}

// jsonValue renders a value as a JSON literal.
func jsonValue(v any, dbType string) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return strconv.FormatBool(x)
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return fmt.Sprint(x)
	case float32:
		return jsonValue(float64(x), dbType)
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return "null"
		}
		b, _ := json.Marshal(x)
		return string(b)
	}
	b, _ := json.Marshal(cellText(v, dbType))
	return string(b)
}

// isNumber reports whether v is a Go numeric value.
func isNumber(v any) bool {
	switch v.(type) {
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, float32, float64:
		return true
	}
	return false
}

// isNumericType reports whether a database type name is numeric.
func isNumericType(t string) bool {
	t = strings.ToUpper(t)
	if i := strings.IndexByte(t, '('); i >= 0 {
		t = t[:i]
	}
	switch strings.TrimSpace(t) {
	case "TINYINT", "SMALLINT", "INT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT",
		"UINTEGER", "UBIGINT", "INT2", "INT4", "INT8", "FLOAT", "FLOAT4", "FLOAT8", "REAL",
		"DOUBLE", "DECIMAL", "NUMERIC":
		return true
	}
	return false
}

// rightAligned reports whether column j holds numbers: by its type name, or
// when the type is unknown, by its values.
func rightAligned(res *result, j int) bool {
	if res.types[j] != "" {
		return isNumericType(res.types[j])
	}
	seen := false
	for _, r := range res.rows {
		if r[j] == nil {
			continue
		}
		if !isNumber(r[j]) {
			return false
		}
		seen = true
	}
	return seen
}

// escapeCell makes a value printable on one line of a table.
func escapeCell(s string) string {
	if !strings.ContainsAny(s, "\n\r\t") {
		return s
	}
	return strings.NewReplacer("\n", `\n`, "\r", `\r`, "\t", `\t`).Replace(s)
}

// displayWidth is the number of terminal columns s takes: wide East Asian
// runes and emoji count two, combining marks and controls none.
func displayWidth(s string) int {
	n := 0
	for _, r := range s {
		n += runeWidth(r)
	}
	return n
}

func runeWidth(r rune) int {
	switch {
	case r < 0x20 || (r >= 0x7f && r < 0xa0) || unicode.Is(unicode.Mn, r) || r == 0x200b:
		return 0
	case r >= 0x1100 && (r <= 0x115f || (r >= 0x2e80 && r <= 0xa4cf) || (r >= 0xac00 && r <= 0xd7a3) ||
		(r >= 0xf900 && r <= 0xfaff) || (r >= 0xfe30 && r <= 0xfe4f) || (r >= 0xff00 && r <= 0xff60) ||
		(r >= 0xffe0 && r <= 0xffe6) || (r >= 0x1f300 && r <= 0x1f64f) || (r >= 0x1f900 && r <= 0x1f9ff) ||
		(r >= 0x20000 && r <= 0x3fffd)):
		return 2
	}
	return 1
}

// truncate shortens s to at most w columns, ending in "…" when cut.
func truncate(s string, w int) string {
	if displayWidth(s) <= w {
		return s
	}
	if w <= 0 {
		return ""
	}
	var b strings.Builder
	n := 0
	for _, r := range s {
		rw := runeWidth(r)
		if n+rw > w-1 {
			break
		}
		b.WriteRune(r)
		n += rw
	}
	b.WriteString("…")
	return b.String()
}

// pad fills s to w columns, aligned left, right or centred.
func pad(s string, w int, align byte) string {
	gap := w - displayWidth(s)
	if gap <= 0 {
		return s
	}
	switch align {
	case 'r':
		return strings.Repeat(" ", gap) + s
	case 'c':
		l := gap / 2
		return strings.Repeat(" ", l) + s + strings.Repeat(" ", gap-l)
	}
	return s + strings.Repeat(" ", gap)
}
