// Package types is streamsql's SQL type system: the logical types of SPEC.md §2, their
// physical representation inside the engine, and their external forms (Arrow types handed to
// callers, text for display and sqllogictest).
//
// Invariant: every logical type has exactly one physical representation, and it is one of
// four: int64 (BIGINT, INT, DECIMAL scaled by 10^scale, DATE as days since the epoch,
// TIMESTAMP as UTC milliseconds since the epoch, INTERVAL as milliseconds), float64 (DOUBLE),
// bool (BOOLEAN) and string (VARCHAR). Operators only ever see these four; the logical type
// travels in the plan, never in the data.
package types

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
)

// Kind is a logical SQL type.
type Kind uint8

// The logical kinds. Null is the type of an untyped NULL literal.
const (
	Null Kind = iota
	Bool
	Int
	BigInt
	Double
	Decimal
	Varchar
	Date
	Timestamp
	Interval
)

// Phys is a physical representation.
type Phys uint8

// The four physical representations.
const (
	PhysInt64 Phys = iota
	PhysFloat64
	PhysBool
	PhysString
)

// MaxDecimalPrecision is the largest DECIMAL precision: values are scaled int64s.
const MaxDecimalPrecision = 18

// T is a logical type: a kind plus DECIMAL's precision and scale.
type T struct {
	Kind      Kind
	Precision int8
	Scale     int8
}

// Common types.
var (
	TNull      = T{Kind: Null}
	TBool      = T{Kind: Bool}
	TInt       = T{Kind: Int}
	TBigInt    = T{Kind: BigInt}
	TDouble    = T{Kind: Double}
	TVarchar   = T{Kind: Varchar}
	TDate      = T{Kind: Date}
	TTimestamp = T{Kind: Timestamp}
	TInterval  = T{Kind: Interval}
)

// DecimalOf returns DECIMAL(p,s).
func DecimalOf(p, s int) T { return T{Kind: Decimal, Precision: int8(p), Scale: int8(s)} }

// Phys returns the physical representation of t. NULL is carried as int64 (all values null).
func (t T) Phys() Phys {
	switch t.Kind {
	case Double:
		return PhysFloat64
	case Bool:
		return PhysBool
	case Varchar:
		return PhysString
	default:
		return PhysInt64
	}
}

// IsInteger reports INT or BIGINT.
func (t T) IsInteger() bool { return t.Kind == Int || t.Kind == BigInt }

// IsNumeric reports INT, BIGINT, DECIMAL or DOUBLE.
func (t T) IsNumeric() bool { return t.IsInteger() || t.Kind == Decimal || t.Kind == Double }

// IsTemporal reports DATE or TIMESTAMP.
func (t T) IsTemporal() bool { return t.Kind == Date || t.Kind == Timestamp }

func (t T) String() string {
	switch t.Kind {
	case Null:
		return "NULL"
	case Bool:
		return "BOOLEAN"
	case Int:
		return "INT"
	case BigInt:
		return "BIGINT"
	case Double:
		return "DOUBLE"
	case Decimal:
		return fmt.Sprintf("DECIMAL(%d,%d)", t.Precision, t.Scale)
	case Varchar:
		return "VARCHAR"
	case Date:
		return "DATE"
	case Timestamp:
		return "TIMESTAMP(3)"
	case Interval:
		return "INTERVAL"
	}
	return fmt.Sprintf("Kind(%d)", t.Kind)
}

// ArrowType is the Arrow type of t's physical representation inside the engine.
func (t T) ArrowType() arrow.DataType {
	switch t.Phys() {
	case PhysFloat64:
		return arrow.PrimitiveTypes.Float64
	case PhysBool:
		return arrow.FixedWidthTypes.Boolean
	case PhysString:
		return arrow.BinaryTypes.String
	}
	return arrow.PrimitiveTypes.Int64
}

// ExternalArrowType is the Arrow type callers of QueryArrow and Append see for t.
func (t T) ExternalArrowType() arrow.DataType {
	switch t.Kind {
	case Int:
		return arrow.PrimitiveTypes.Int32
	case Decimal:
		return &arrow.Decimal128Type{Precision: int32(t.Precision), Scale: int32(t.Scale)}
	case Date:
		return arrow.FixedWidthTypes.Date32
	case Timestamp:
		return &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}
	case Interval:
		return arrow.FixedWidthTypes.Duration_ms
	case Null:
		return arrow.Null
	}
	return t.ArrowType()
}

// Pow10 holds 10^i for i in [0, 18].
var Pow10 = func() [19]int64 {
	var p [19]int64
	p[0] = 1
	for i := 1; i < len(p); i++ {
		p[i] = p[i-1] * 10
	}
	return p
}()

// MsPerDay is the number of milliseconds in a day.
const MsPerDay = 86_400_000

// FormatTimestamp renders UTC milliseconds as "YYYY-MM-DD HH:MM:SS[.fff]" (milliseconds
// only when non-zero), as SPEC.md §5 asks.
func FormatTimestamp(ms int64) string {
	t := time.UnixMilli(ms).UTC()
	s := t.Format("2006-01-02 15:04:05")
	if frac := t.Nanosecond() / 1e6; frac != 0 {
		s += fmt.Sprintf(".%03d", frac)
	}
	return s
}

// FormatDate renders days since the epoch as YYYY-MM-DD.
func FormatDate(days int64) string {
	// In seconds: days*MsPerDay leaves int64 beyond about 292 million years.
	return time.Unix(days*86400, 0).UTC().Format("2006-01-02")
}

// FormatDecimal renders a scaled integer with exactly scale fractional digits.
func FormatDecimal(v int64, scale int8) string {
	if scale <= 0 {
		return strconv.FormatInt(v, 10)
	}
	neg := v < 0
	u := uint64(v)
	if neg {
		u = uint64(-v)
	}
	s := strconv.FormatUint(u, 10)
	if len(s) <= int(scale) {
		s = strings.Repeat("0", int(scale)-len(s)+1) + s
	}
	s = s[:len(s)-int(scale)] + "." + s[len(s)-int(scale):]
	if neg {
		s = "-" + s
	}
	return s
}

// FormatInterval renders milliseconds as "INTERVAL 'n' UNIT" with the largest exact unit.
func FormatInterval(ms int64) string {
	units := []struct {
		n    int64
		name string
	}{{MsPerDay, "DAY"}, {3_600_000, "HOUR"}, {60_000, "MINUTE"}, {1000, "SECOND"}}
	for _, u := range units {
		if ms != 0 && ms%u.n == 0 {
			return fmt.Sprintf("INTERVAL '%d' %s", ms/u.n, u.name)
		}
	}
	return fmt.Sprintf("INTERVAL '%d' MILLISECOND", ms)
}

// timestampLayouts are the timestamp texts taken; month and day may drop their leading
// zero ("2024-1-5"), as PostgreSQL and DuckDB allow.
var timestampLayouts = []string{
	"2006-1-2 15:04:05.999999999",
	"2006-1-2T15:04:05.999999999",
	"2006-1-2 15:04:05.999999999Z07:00",
	"2006-1-2T15:04:05.999999999Z07:00",
	"2006-1-2 15:04",
	"2006-1-2",
}

// ParseTimestamp parses a timestamp literal into UTC milliseconds. Sub-millisecond digits
// are truncated.
func ParseTimestamp(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if ms, ok := parseTimestampFast(s); ok {
		return ms, nil
	}
	for _, l := range timestampLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t.UnixMilli(), nil
		}
	}
	return 0, fmt.Errorf("invalid TIMESTAMP %q: expected YYYY-MM-DD HH:MM:SS[.fff]", s)
}

// ParseBool parses a BOOLEAN's text: true/false, t/f, yes/no, y/n, on/off and 1/0, in any
// case, as PostgreSQL does; ok is false for any other text.
func ParseBool(s string) (v, ok bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "t", "yes", "y", "on", "1":
		return true, true
	case "false", "f", "no", "n", "off", "0":
		return false, true
	}
	return false, false
}

// ParseDate parses YYYY-MM-DD (or YYYY-M-D) into days since the epoch.
func ParseDate(s string) (int64, error) {
	t, err := time.Parse("2006-1-2", strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("invalid DATE %q: expected YYYY-MM-DD", s)
	}
	return floorDiv(t.UnixMilli(), MsPerDay), nil
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// FloorDiv divides rounding toward negative infinity (window and date arithmetic).
func FloorDiv(a, b int64) int64 { return floorDiv(a, b) }

// ErrDecimalRange is the error of ParseDecimal for a value that does not fit the precision.
var ErrDecimalRange = errors.New("out of range")

// ParseDecimal parses [+-]digits[.digits] exactly (no float detour, so 18-digit values
// survive) to a DECIMAL(precision, scale) scaled int64, rounding half away from zero to
// scale; exponent forms go through float64. A value that does not fit wraps ErrDecimalRange.
func ParseDecimal(s string, precision, scale int8) (int64, error) {
	s = strings.TrimSpace(s)
	rangeErr := func() (int64, error) {
		return 0, fmt.Errorf("value %s %w for DECIMAL(%d,%d)", s, ErrDecimalRange, precision, scale)
	}
	invalid := func() (int64, error) { return 0, fmt.Errorf("invalid DECIMAL %q", s) }
	if strings.ContainsAny(s, "eE") {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return invalid()
		}
		v, err := DecimalFromFloat(f, precision, scale)
		if err != nil {
			return rangeErr()
		}
		return v, nil
	}
	digits, neg := s, false
	if digits != "" && (digits[0] == '-' || digits[0] == '+') {
		neg = digits[0] == '-'
		digits = digits[1:]
	}
	intPart, frac, _ := strings.Cut(digits, ".")
	if intPart == "" && frac == "" {
		return invalid()
	}
	// acc < limit <= 10^18 before each step, so acc*10+9 fits a uint64.
	limit := uint64(Pow10[precision])
	var acc uint64
	for i := 0; i < len(intPart); i++ {
		c := intPart[i]
		if c < '0' || c > '9' {
			return invalid()
		}
		if acc = acc*10 + uint64(c-'0'); acc >= limit {
			return rangeErr()
		}
	}
	roundUp := false
	for i := 0; i < len(frac); i++ {
		c := frac[i]
		if c < '0' || c > '9' {
			return invalid()
		}
		switch {
		case i < int(scale):
			acc = acc*10 + uint64(c-'0')
		case i == int(scale):
			roundUp = c >= '5'
		}
		if acc >= limit {
			return rangeErr()
		}
	}
	for i := len(frac); i < int(scale); i++ {
		if acc *= 10; acc >= limit {
			return rangeErr()
		}
	}
	if roundUp {
		acc++
	}
	if acc >= limit {
		return rangeErr()
	}
	if neg {
		return -int64(acc), nil
	}
	return int64(acc), nil
}

// DecimalFromFloat converts f to a scaled int64, rounding half away from zero.
func DecimalFromFloat(f float64, precision, scale int8) (int64, error) {
	v := math.Round(f * float64(Pow10[scale]))
	if math.IsNaN(v) || math.Abs(v) >= float64(Pow10[precision]) {
		return 0, fmt.Errorf("value %v out of range for DECIMAL(%d,%d)", f, precision, scale)
	}
	return int64(v), nil
}

// Display renders a physical value v of type t as text (SPEC.md §5 conventions), or "NULL".
func Display(v any, t T) string {
	if v == nil {
		return "NULL"
	}
	switch x := v.(type) {
	case int64:
		switch t.Kind {
		case Decimal:
			return FormatDecimal(x, t.Scale)
		case Date:
			return FormatDate(x)
		case Timestamp:
			return FormatTimestamp(x)
		case Interval:
			return FormatInterval(x)
		}
		return strconv.FormatInt(x, 10)
	case float64:
		switch { // PostgreSQL's and Flink's words, not Go's +Inf
		case math.IsInf(x, 1):
			return "Infinity"
		case math.IsInf(x, -1):
			return "-Infinity"
		}
		return strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	case string:
		return x
	}
	return fmt.Sprint(v)
}

// parseTimestampFast reads the canonical "YYYY-MM-DD HH:MM:SS[.fff]" form without the time
// package's layout machinery (bulk INSERTs are full of them).
func parseTimestampFast(s string) (int64, bool) {
	if len(s) != 19 && (len(s) < 21 || len(s) > 29 || s[19] != '.') {
		return 0, false
	}
	num := func(a, b int) (int, bool) {
		n := 0
		for i := a; i < b; i++ {
			c := s[i]
			if c < '0' || c > '9' {
				return 0, false
			}
			n = n*10 + int(c-'0')
		}
		return n, true
	}
	if s[4] != '-' || s[7] != '-' || (s[10] != ' ' && s[10] != 'T') || s[13] != ':' || s[16] != ':' {
		return 0, false
	}
	y, ok1 := num(0, 4)
	mo, ok2 := num(5, 7)
	d, ok3 := num(8, 10)
	h, ok4 := num(11, 13)
	mi, ok5 := num(14, 16)
	se, ok6 := num(17, 19)
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || mo < 1 || mo > 12 || d < 1 || d > daysIn(y, mo) || h > 23 || mi > 59 || se > 59 {
		return 0, false
	}
	ms := 0
	if len(s) > 19 {
		frac := s[20:]
		if len(frac) > 3 {
			frac = frac[:3]
		}
		f, ok := num(20, 20+len(frac))
		if !ok {
			return 0, false
		}
		for k := len(frac); k < 3; k++ {
			f *= 10
		}
		if _, ok := num(20, len(s)); !ok {
			return 0, false
		}
		ms = f
	}
	days := daysFromCivil(y, mo, d)
	return ((days*24+int64(h))*60+int64(mi))*60_000 + int64(se)*1000 + int64(ms), true
}

func daysIn(y, m int) int {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// daysFromCivil is the number of days from 1970-01-01 to y-m-d (proleptic Gregorian).
func daysFromCivil(y, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400
	if y < 0 && y%400 != 0 {
		era = (y - 399) / 400
	}
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return int64(era)*146097 + int64(doe) - 719468
}
