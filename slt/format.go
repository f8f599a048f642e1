package slt

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"
)

// formatValue renders one scanned value under a column type letter (I, R,
// T, ...) as the package doc describes. dbType is the column's
// DatabaseTypeName, used to tell a DATE from a TIMESTAMP.
func formatValue(v any, letter byte, dbType string) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case bool:
		if x {
			return "true"
		}
		return "false"
	case string:
		return formatText(x, letter)
	case []byte:
		return formatText(string(x), letter)
	case int:
		return formatInt(int64(x), letter)
	case int8:
		return formatInt(int64(x), letter)
	case int16:
		return formatInt(int64(x), letter)
	case int32:
		return formatInt(int64(x), letter)
	case int64:
		return formatInt(x, letter)
	case uint:
		return formatUint(uint64(x), letter)
	case uint8:
		return formatUint(uint64(x), letter)
	case uint16:
		return formatUint(uint64(x), letter)
	case uint32:
		return formatUint(uint64(x), letter)
	case uint64:
		return formatUint(x, letter)
	case float32:
		return formatFloat(float64(x), letter)
	case float64:
		return formatFloat(x, letter)
	case time.Time:
		if isDateType(dbType) {
			return x.UTC().Format("2006-01-02")
		}
		return formatTimestamp(x)
	case *big.Int:
		if x == nil {
			return "NULL"
		}
		return formatText(x.String(), letter)
	case fmt.Stringer:
		return formatText(x.String(), letter)
	default:
		return formatText(fmt.Sprint(v), letter)
	}
}

func formatText(s string, letter byte) string {
	if s == "" {
		return "(empty)"
	}
	if letter == 'R' {
		if f, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil {
			return formatFloat(f, 'R')
		}
	}
	return s
}

func formatInt(n int64, letter byte) string {
	if letter == 'R' {
		return fmt.Sprintf("%.3f", float64(n))
	}
	return strconv.FormatInt(n, 10)
}

func formatUint(n uint64, letter byte) string {
	if letter == 'R' {
		return fmt.Sprintf("%.3f", float64(n))
	}
	return strconv.FormatUint(n, 10)
}

func formatFloat(f float64, letter byte) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	switch letter {
	case 'R':
		s := fmt.Sprintf("%.3f", f)
		if s == "-0.000" {
			s = "0.000"
		}
		return s
	case 'I':
		t := math.Trunc(f)
		if t >= math.MinInt64 && t < math.MaxInt64 {
			return strconv.FormatInt(int64(t), 10)
		}
		return strconv.FormatFloat(t, 'f', 0, 64)
	default:
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
}

// formatTimestamp renders t in UTC as YYYY-MM-DD HH:MM:SS, with the
// fraction only when it is non-zero: three digits for milliseconds, more
// only when sub-millisecond digits are present.
func formatTimestamp(t time.Time) string {
	t = t.UTC()
	s := t.Format("2006-01-02 15:04:05")
	ns := t.Nanosecond()
	switch {
	case ns == 0:
		return s
	case ns%1e6 == 0:
		return fmt.Sprintf("%s.%03d", s, ns/1e6)
	default:
		frac := strings.TrimRight(fmt.Sprintf("%09d", ns), "0")
		return s + "." + frac
	}
}

// isDateType reports whether a DatabaseTypeName names a date without time.
func isDateType(name string) bool {
	u := strings.ToUpper(name)
	return strings.Contains(u, "DATE") && !strings.Contains(u, "TIME")
}
