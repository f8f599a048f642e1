package exec

import (
	"fmt"
	"math"
	"math/bits"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/bitutil"

	"github.com/streamsql/streamsql/types"
)

// Calendar arithmetic on the proleptic Gregorian calendar in UTC, done on integers (Howard
// Hinnant's civil-date algorithms) so kernels never build a time.Time per row and dates
// before 1970 floor correctly.

// civilFromDays converts days since 1970-01-01 to year, month (1-12) and day (1-31).
func civilFromDays(z int64) (y, m, d int64) {
	z += 719468
	era := types.FloorDiv(z, 146097)
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y = yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = doy - (153*mp+2)/5 + 1
	if mp < 10 {
		m = mp + 3
	} else {
		m = mp - 9
	}
	if m <= 2 {
		y++
	}
	return y, m, d
}

// daysFromCivil is the inverse of civilFromDays.
func daysFromCivil(y, m, d int64) int64 {
	if m <= 2 {
		y--
	}
	era := types.FloorDiv(y, 400)
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

// dayOfWeek is 0 for Sunday ... 6 for Saturday (1970-01-01 was a Thursday).
func dayOfWeek(days int64) int64 {
	x := days + 4
	return x - types.FloorDiv(x, 7)*7
}

// isoWeek returns the ISO 8601 week number (weeks start on Monday; week 1 holds the year's
// first Thursday).
func isoWeek(days int64) int64 {
	isoDow := (dayOfWeek(days)+6)%7 + 1 // Monday 1 ... Sunday 7
	thursday := days - isoDow + 4
	y, _, _ := civilFromDays(thursday)
	return (thursday-daysFromCivil(y, 1, 1))/7 + 1
}

// temporalArg checks that fn's argument is DATE or TIMESTAMP (an untyped NULL becomes
// TIMESTAMP).
func temporalArg(fn string, e Expr) (Expr, error) {
	switch t := e.Type(); {
	case t.IsTemporal():
		return e, nil
	case t.Kind == types.Null:
		return newCast(e, types.TTimestamp, false, true), nil
	}
	return nil, fmt.Errorf("function %s expects DATE or TIMESTAMP, got %s", fn, e.Type())
}

// extractUnits are the fields of extract_<unit>. Their values follow PostgreSQL: dow is 0
// (Sunday) to 6, doy 1 to 366, week the ISO week, millisecond the seconds field in
// milliseconds (seconds*1000 + ms), microsecond likewise in microseconds, and epoch whole
// seconds since 1970 (floored: PostgreSQL returns a fraction, our result is BIGINT).
var extractUnits = map[string]bool{
	"year": true, "month": true, "day": true, "hour": true, "minute": true, "second": true,
	"millisecond": true, "microsecond": true, "dow": true, "doy": true, "week": true, "quarter": true, "epoch": true,
}

func newExtract(unit string, args []Expr) (Expr, error) {
	name := "extract_" + unit
	if !extractUnits[unit] {
		return nil, fmt.Errorf("EXTRACT(%s FROM ...) is not supported; units: YEAR, QUARTER, MONTH, WEEK, DAY, DOW, DOY, HOUR, MINUTE, SECOND, MILLISECOND, MICROSECOND, EPOCH", strings.ToUpper(unit))
	}
	if err := argCount(name, args, 1, 1); err != nil {
		return nil, err
	}
	x, err := temporalArg(name, args[0])
	if err != nil {
		return nil, err
	}
	isDate := x.Type().Kind == types.Date
	text := fmt.Sprintf("EXTRACT(%s FROM %s)", strings.ToUpper(unit), args[0])
	return &kernelExpr{t: types.TBigInt, args: []Expr{x}, text: text, k: func(as []arrow.Array, n int) (arrow.Array, error) {
		src := Int64s(as[0])
		dst := make([]int64, n)
		f := extractField(unit, isDate)
		for i, v := range src {
			days, ms := v, int64(0)
			if !isDate {
				days = types.FloorDiv(v, types.MsPerDay)
				ms = v - days*types.MsPerDay
			}
			dst[i] = f(days, ms, v)
		}
		valid, nulls := andValidity(n, as[0])
		return makeInt64(dst, valid, nulls), nil
	}}, nil
}

// extractField returns the function computing one field from a day number, the
// milliseconds into that day and the raw value; chosen once per batch, not per row.
func extractField(unit string, isDate bool) func(days, ms, raw int64) int64 {
	switch unit {
	case "year":
		return func(days, _, _ int64) int64 { y, _, _ := civilFromDays(days); return y }
	case "month":
		return func(days, _, _ int64) int64 { _, m, _ := civilFromDays(days); return m }
	case "day":
		return func(days, _, _ int64) int64 { _, _, d := civilFromDays(days); return d }
	case "quarter":
		return func(days, _, _ int64) int64 { _, m, _ := civilFromDays(days); return (m-1)/3 + 1 }
	case "hour":
		return func(_, ms, _ int64) int64 { return ms / 3_600_000 }
	case "minute":
		return func(_, ms, _ int64) int64 { return ms / 60_000 % 60 }
	case "second":
		return func(_, ms, _ int64) int64 { return ms / 1000 % 60 }
	case "millisecond":
		return func(_, ms, _ int64) int64 { return ms % 60_000 }
	case "microsecond":
		return func(_, ms, _ int64) int64 { return ms % 60_000 * 1000 }
	case "dow":
		return func(days, _, _ int64) int64 { return dayOfWeek(days) }
	case "doy":
		return func(days, _, _ int64) int64 {
			y, _, _ := civilFromDays(days)
			return days - daysFromCivil(y, 1, 1) + 1
		}
	case "week":
		return func(days, _, _ int64) int64 { return isoWeek(days) }
	}
	// epoch
	if isDate {
		return func(_, _, raw int64) int64 { return raw * 86_400 }
	}
	return func(_, _, raw int64) int64 { return types.FloorDiv(raw, 1000) }
}

// truncUnits are the units of date_trunc and FLOOR/CEIL(t TO unit), with their length in
// milliseconds (0: counted on the calendar).
var truncUnits = map[string]int64{"millisecond": 1, "second": 1000, "minute": 60_000, "hour": 3_600_000,
	"day": types.MsPerDay, "week": 0, "month": 0, "quarter": 0, "year": 0}

// floorCalendar rounds the timestamp v down to the start of its week (starting on Monday,
// or on Sunday when sunday is set), month, quarter or year.
func floorCalendar(v int64, unit string, sunday bool) int64 {
	days := types.FloorDiv(v, types.MsPerDay)
	switch unit {
	case "week":
		if sunday {
			days -= dayOfWeek(days)
		} else {
			days -= (dayOfWeek(days) + 6) % 7
		}
	case "month":
		y, m, _ := civilFromDays(days)
		days = daysFromCivil(y, m, 1)
	case "quarter":
		y, m, _ := civilFromDays(days)
		days = daysFromCivil(y, (m-1)/3*3+1, 1)
	case "year":
		y, _, _ := civilFromDays(days)
		days = daysFromCivil(y, 1, 1)
	}
	return days * types.MsPerDay
}

// newDateTrunc is date_trunc('unit', ts): ts (a DATE is taken as its midnight) rounded down
// to the start of its millisecond, second, minute, hour, day, week (Monday), month,
// quarter or year, as a TIMESTAMP. The unit must be a literal.
func newDateTrunc(args []Expr) (Expr, error) {
	if err := argCount("date_trunc", args, 2, 2); err != nil {
		return nil, err
	}
	c, ok := args[0].(*Const)
	if !ok || c.T.Kind != types.Varchar || c.V == nil {
		return nil, fmt.Errorf("function date_trunc expects a literal unit such as 'hour', got %s", args[0])
	}
	unit := strings.ToLower(strings.TrimSpace(c.V.(string)))
	step, ok := truncUnits[unit]
	if !ok {
		return nil, fmt.Errorf("function date_trunc: unknown unit %q (want second, minute, hour, day, week, month, quarter or year)", unit)
	}
	x, err := temporalArg("date_trunc", args[1])
	if err != nil {
		return nil, err
	}
	if x.Type().Kind == types.Date {
		x = newCast(x, types.TTimestamp, false, true)
	}
	return &kernelExpr{t: types.TTimestamp, args: []Expr{x}, text: callText("date_trunc", args), k: func(as []arrow.Array, n int) (arrow.Array, error) {
		src := Int64s(as[0])
		dst := make([]int64, n)
		for i, v := range src {
			if step > 0 {
				dst[i] = types.FloorDiv(v, step) * step
			} else {
				dst[i] = floorCalendar(v, unit, false)
			}
		}
		valid, nulls := andValidity(n, as[0])
		return makeInt64(dst, valid, nulls), nil
	}}, nil
}

// NewFloorTo is Flink's FLOOR(t TO unit), or CEIL(t TO unit) when ceil is set: the start of
// t's unit (MILLISECOND, SECOND, MINUTE, HOUR, DAY, WEEK, MONTH, QUARTER or YEAR; weeks
// start on Sunday, as in Flink), or the first start at or after t. A DATE stays a DATE.
func NewFloorTo(x Expr, unit string, ceil bool) (Expr, error) {
	fn := map[bool]string{false: "FLOOR", true: "CEIL"}[ceil]
	unit = strings.ToLower(unit)
	step, ok := truncUnits[unit]
	if !ok {
		return nil, fmt.Errorf("%s(... TO %s) is not supported; units: MILLISECOND, SECOND, MINUTE, HOUR, DAY, WEEK, MONTH, QUARTER, YEAR", fn, strings.ToUpper(unit))
	}
	x, err := temporalArg(strings.ToLower(fn), x)
	if err != nil {
		return nil, err
	}
	date := x.Type().Kind == types.Date
	months := map[string]int64{"month": 1, "quarter": 3, "year": 12}[unit]
	text := fmt.Sprintf("%s(%s TO %s)", fn, x, strings.ToUpper(unit))
	return &kernelExpr{t: x.Type(), args: []Expr{x}, text: text, k: func(as []arrow.Array, n int) (arrow.Array, error) {
		return mapInt64(as[0], false, func(v int64) (int64, error) {
			if date {
				v *= types.MsPerDay
			}
			f := floorCalendar(v, unit, true)
			if step > 0 {
				f = types.FloorDiv(v, step) * step
			}
			if ceil && f != v {
				var ok bool
				switch {
				case step > 0:
					f, ok = addUnits(f, 1, step, 0, false)
				case unit == "week":
					f, ok = addUnits(f, 7, types.MsPerDay, 0, false)
				default:
					f, ok = addUnits(f, 1, 0, months, false)
				}
				if !ok {
					return 0, errTimeOverflow
				}
			}
			if date {
				f /= types.MsPerDay
			}
			return f, nil
		})
	}}, nil
}

// newDateDiff is DATEDIFF(end, start) (MySQL, Flink): the days from start's date to end's,
// time of day ignored.
func newDateDiff(args []Expr) (Expr, error) {
	if err := argCount("datediff", args, 2, 2); err != nil {
		return nil, err
	}
	xs := make([]Expr, 2)
	for i, a := range args {
		x, err := temporalArg("datediff", a)
		if err != nil {
			return nil, err
		}
		if x.Type().Kind == types.Timestamp {
			x = newCast(x, types.TDate, false, true)
		}
		xs[i] = x
	}
	return &kernelExpr{t: types.TBigInt, args: xs, text: callText("datediff", args), k: func(as []arrow.Array, n int) (arrow.Array, error) {
		a, b := Int64s(as[0]), Int64s(as[1])
		dst := make([]int64, n)
		for i := range dst {
			dst[i] = a[i] - b[i]
		}
		valid, nulls := andValidity(n, as[0], as[1])
		return makeInt64(dst, valid, nulls), nil
	}}, nil
}

// formatArg checks the optional format argument i of fn (VARCHAR, by default
// defaultTimeFormat) and compiles it if it is a constant; args gains the default. The
// format of strftime is strftime's even without a '%'.
func formatArg(fn string, args []Expr, i int) ([]Expr, *compiledArg[timeLayout], error) {
	if len(args) == i {
		args = append(args, &Const{V: defaultTimeFormat, T: types.TVarchar})
	}
	f, err := textArg("function "+fn, args[i])
	if err != nil {
		return nil, nil, err
	}
	args[i] = f
	compile := func(p string) (timeLayout, error) { return compileTimeFormat(fn, p) }
	if fn == "strftime" {
		compile = func(p string) (timeLayout, error) { return compileStrftime(fn, p) }
	}
	l, err := newCompiledArg(f, compile)
	return args, l, err
}

// newDateFormat is DATE_FORMAT(t, format) (Flink, MySQL) and strftime(t, format) (DuckDB):
// the DATE or TIMESTAMP t as text in the format.
func newDateFormat(name string, args []Expr) (Expr, error) {
	if err := argCount(name, args, 2, 2); err != nil {
		return nil, err
	}
	x, err := temporalArg(name, args[0])
	if err != nil {
		return nil, err
	}
	if x.Type().Kind == types.Date {
		x = newCast(x, types.TTimestamp, false, true)
	}
	conv, layout, err := formatArg(name, []Expr{x, args[1]}, 1)
	if err != nil {
		return nil, err
	}
	return &kernelExpr{t: types.TVarchar, args: conv, text: callText(name, args), k: rowKernel(types.TVarchar, true, func(v []any) (any, error) {
		l, err := layout.get(v[1].(string))
		if err != nil {
			return nil, err
		}
		return l.format(v[0].(int64)), nil
	})}, nil
}

// newFromUnixtime is FROM_UNIXTIME(seconds[, format]) (Flink): the time seconds after
// 1970-01-01 00:00:00 UTC as text in the format, by default 'yyyy-MM-dd HH:mm:ss'.
func newFromUnixtime(args []Expr) (Expr, error) {
	if err := argCount("from_unixtime", args, 1, 2); err != nil {
		return nil, err
	}
	secs, err := intArg("function from_unixtime", args[0])
	if err != nil {
		return nil, err
	}
	conv, layout, err := formatArg("from_unixtime", append([]Expr{secs}, args[1:]...), 1)
	if err != nil {
		return nil, err
	}
	return &kernelExpr{t: types.TVarchar, args: conv, text: callText("from_unixtime", args), k: rowKernel(types.TVarchar, true, func(v []any) (any, error) {
		l, err := layout.get(v[1].(string))
		if err != nil {
			return nil, err
		}
		ms, ok := addUnits(0, v[0].(int64), 1000, 0, false)
		if !ok {
			return nil, errTimeOverflow
		}
		return l.format(ms), nil
	})}, nil
}

// newParseTime is TO_TIMESTAMP(s[, format]), TO_DATE(s[, format]) and UNIX_TIMESTAMP(s[,
// format]) (Flink): the text s read as a TIMESTAMP, a DATE or whole seconds since 1970 (in
// UTC), NULL when s is not such a time, as in Flink. Without a format s is read as a
// TIMESTAMP or DATE literal is.
func newParseTime(name string, args []Expr) (Expr, error) {
	if err := argCount(name, args, 1, 2); err != nil {
		return nil, err
	}
	s, err := textArg("function "+name, args[0])
	if err != nil {
		return nil, err
	}
	conv := []Expr{s}
	var layout *compiledArg[timeLayout]
	if len(args) == 2 {
		if conv, layout, err = formatArg(name, []Expr{s, args[1]}, 1); err != nil {
			return nil, err
		}
	}
	t := map[string]types.T{"to_timestamp": types.TTimestamp, "to_date": types.TDate, "unix_timestamp": types.TBigInt}[name]
	return &kernelExpr{t: t, args: conv, text: callText(name, args), k: rowKernel(t, true, func(v []any) (any, error) {
		ms, ok, err := parseTime(v, layout, name == "to_date")
		if err != nil || !ok {
			return nil, err
		}
		switch name {
		case "to_date":
			return types.FloorDiv(ms, types.MsPerDay), nil
		case "unix_timestamp":
			return types.FloorDiv(ms, 1000), nil
		}
		return ms, nil
	})}, nil
}

// parseTime reads the text v[0] in the format v[1] (layout), or without a format as a
// TIMESTAMP literal (a DATE literal when date is set); ok is false when it is not one.
func parseTime(v []any, layout *compiledArg[timeLayout], date bool) (ms int64, ok bool, err error) {
	s := v[0].(string)
	if layout != nil {
		l, err := layout.get(v[1].(string))
		if err != nil {
			return 0, false, err
		}
		ms, ok := l.parse(s)
		return ms, ok, nil
	}
	if date {
		d, err := types.ParseDate(s)
		return d * types.MsPerDay, err == nil, nil
	}
	ms, err = types.ParseTimestamp(s)
	return ms, err == nil, nil
}

// timestampUnits are the units of timestampdiff_<unit> and timestampadd_<unit>, with their
// length in milliseconds (0: counted on the calendar, in months; -1000: a microsecond).
var timestampUnits = map[string]int64{
	"microsecond": -1000, "millisecond": 1, "second": 1000, "minute": 60_000, "hour": 3_600_000,
	"day": types.MsPerDay, "week": 7 * types.MsPerDay, "month": 0, "quarter": 0, "year": 0,
}

// timestampUnit is unit's length in timestampUnits, or fn's error naming the units.
func timestampUnit(fn, unit string) (int64, error) {
	step, ok := timestampUnits[unit]
	if !ok {
		return 0, fmt.Errorf("%s(%s, ...) is not supported; units: MICROSECOND, MILLISECOND, SECOND, MINUTE, HOUR, DAY, WEEK, MONTH, QUARTER, YEAR", strings.ToUpper(fn), strings.ToUpper(unit))
	}
	return step, nil
}

// newTimestampDiff is TIMESTAMPDIFF(unit, a, b) (Flink, MySQL): the whole units from a to b,
// truncated toward zero; months, quarters and years count calendar months, a month being
// whole once b's day and time of month reach a's.
func newTimestampDiff(unit string, args []Expr) (Expr, error) {
	name := "timestampdiff"
	step, err := timestampUnit(name, unit)
	if err != nil {
		return nil, err
	}
	if err := argCount(name, args, 2, 2); err != nil {
		return nil, err
	}
	xs := make([]Expr, 2)
	for i, a := range args {
		x, err := temporalArg(name, a)
		if err != nil {
			return nil, err
		}
		if x.Type().Kind == types.Date {
			x = newCast(x, types.TTimestamp, false, true)
		}
		xs[i] = x
	}
	text := fmt.Sprintf("TIMESTAMPDIFF(%s, %s, %s)", strings.ToUpper(unit), args[0], args[1])
	return &kernelExpr{t: types.TBigInt, args: xs, text: text, k: func(as []arrow.Array, n int) (arrow.Array, error) {
		a, b := Int64s(as[0]), Int64s(as[1])
		dst := make([]int64, n)
		valid, nulls := andValidity(n, as[0], as[1])
		for i := range dst {
			d := b[i] - a[i]
			if (b[i] >= a[i]) != (d >= 0) || step < 0 && (d > math.MaxInt64/-step || d < math.MinInt64/-step) {
				if valid == nil || bitutil.BitIsSet(valid, i) {
					return nil, errIntOverflow
				}
				continue
			}
			switch {
			case step > 0:
				dst[i] = d / step
			case step < 0:
				dst[i] = d * -step
			default:
				dst[i] = monthsBetween(a[i], b[i])
				switch unit {
				case "quarter":
					dst[i] /= 3
				case "year":
					dst[i] /= 12
				}
			}
		}
		return makeInt64(dst, valid, nulls), nil
	}}, nil
}

// newTimestampAdd is TIMESTAMPADD(unit, n, t) (Flink, MySQL): t plus n units, a TIMESTAMP
// (a DATE plus days or longer units stays a DATE). Months, quarters and years move on the
// calendar, a day past the new month's end taking its last day (January 31 plus one month
// is February's last day).
func newTimestampAdd(unit string, args []Expr) (Expr, error) {
	name := "timestampadd"
	step, err := timestampUnit(name, unit)
	if err != nil {
		return nil, err
	}
	if err := argCount(name, args, 2, 2); err != nil {
		return nil, err
	}
	if k := args[0].Type().Kind; !args[0].Type().IsInteger() && k != types.Null {
		return nil, fmt.Errorf("function %s expects an integer count of units, got %s", name, args[0].Type())
	}
	n := newCast(args[0], types.TBigInt, false, true)
	t, err := temporalArg(name, args[1])
	if err != nil {
		return nil, err
	}
	out := types.TTimestamp
	if t.Type().Kind == types.Date && (step == 0 || step%types.MsPerDay == 0) {
		out = types.TDate
	} else if t.Type().Kind == types.Date {
		t = newCast(t, types.TTimestamp, false, true)
	}
	months := map[string]int64{"month": 1, "quarter": 3, "year": 12}[unit]
	text := fmt.Sprintf("TIMESTAMPADD(%s, %s, %s)", strings.ToUpper(unit), args[0], args[1])
	return &kernelExpr{t: out, args: []Expr{n, t}, text: text, k: func(as []arrow.Array, rows int) (arrow.Array, error) {
		ns, ts := Int64s(as[0]), Int64s(as[1])
		dst := make([]int64, rows)
		valid, nulls := andValidity(rows, as[0], as[1])
		for i := range dst {
			if valid != nil && !bitutil.BitIsSet(valid, i) {
				continue
			}
			v, ok := addUnits(ts[i], ns[i], step, months, out.Kind == types.Date)
			if !ok {
				return nil, errTimeOverflow
			}
			dst[i] = v
		}
		return makeInt64(dst, valid, nulls), nil
	}}, nil
}

// addUnits adds n units to t (a TIMESTAMP in ms, or a DATE in days when date): step ms
// each (negative: a microsecond, -step of them to a ms), or months calendar months each.
// ok is false when the result overflows.
func addUnits(t, n, step, months int64, date bool) (int64, bool) {
	if date {
		t *= types.MsPerDay // a DATE is far inside the range of ms
	}
	var v int64
	switch {
	case months > 0:
		const maxYears = maxCalendarYear
		if n > 12*maxYears || n < -12*maxYears {
			return 0, false
		}
		days := types.FloorDiv(t, types.MsPerDay)
		y, m, d := civilFromDays(days)
		total := y*12 + m - 1 + n*months
		ny := types.FloorDiv(total, 12)
		nm := total - ny*12 + 1
		if ny > maxYears || ny < -maxYears {
			return 0, false
		}
		v = daysFromCivil(ny, nm, min(d, daysInMonth(ny, nm)))*types.MsPerDay + (t - days*types.MsPerDay)
	case step < 0:
		v = t + n/-step // microseconds: whole milliseconds, truncated toward zero
	default:
		hi, lo := bits.Mul64(uint64(max(n, -n)), uint64(step))
		if hi != 0 || lo > math.MaxInt64 {
			return 0, false
		}
		d := int64(lo)
		if n < 0 {
			d = -d
		}
		if (d > 0 && t > math.MaxInt64-d) || (d < 0 && t < math.MinInt64-d) {
			return 0, false
		}
		v = t + d
	}
	if date {
		v = types.FloorDiv(v, types.MsPerDay)
	}
	return v, true
}

// daysInMonth is the number of days of month m (1-12) of year y.
func daysInMonth(y, m int64) int64 {
	if m == 12 {
		return 31
	}
	return daysFromCivil(y, m+1, 1) - daysFromCivil(y, m, 1)
}

// monthsBetween is the whole calendar months from timestamp a to b (negative when b is
// before a): a month counts once b's day and time of month reach a's.
func monthsBetween(a, b int64) int64 {
	inMonth := func(v int64) (months, rest int64) {
		days := types.FloorDiv(v, types.MsPerDay)
		y, m, d := civilFromDays(days)
		return y*12 + m - 1, (d-1)*types.MsPerDay + (v - days*types.MsPerDay)
	}
	ma, ra := inMonth(a)
	mb, rb := inMonth(b)
	months := mb - ma
	switch {
	case months > 0 && rb < ra:
		months--
	case months < 0 && rb > ra:
		months++
	}
	return months
}

// maxCalendarYear bounds the years of calendar arithmetic: a DATE or TIMESTAMP in
// milliseconds since 1970 reaches about 292 million years either way.
const maxCalendarYear = 200_000_000

// newEpochMs is DuckDB's EPOCH_MS: of a TIMESTAMP (or a DATE, taken as its midnight) the
// milliseconds since 1970-01-01 00:00:00 UTC as a BIGINT, and of an integer the TIMESTAMP
// that many milliseconds after it. A count beyond the years MAKE_DATE accepts (±200
// million) is a data error, as DuckDB's is beyond its range: near the ends of int64 the
// calendar functions (CAST to DATE, DATE_TRUNC, LAST_DAY) would wrap around.
func newEpochMs(args []Expr) (Expr, error) {
	if err := argCount("epoch_ms", args, 1, 1); err != nil {
		return nil, err
	}
	x, out := args[0], types.TTimestamp
	switch t := x.Type(); {
	case t.IsTemporal():
		out = types.TBigInt
	case t.IsInteger() || t.Kind == types.Null:
		x = newCast(x, types.TBigInt, false, true)
	default:
		return nil, fmt.Errorf("function epoch_ms expects a TIMESTAMP, DATE or integer, got %s", t)
	}
	kind := x.Type().Kind
	// Otherwise both sides are milliseconds since 1970: the values pass through unchanged.
	return &kernelExpr{t: out, args: []Expr{x}, text: callText("epoch_ms", args), k: func(as []arrow.Array, n int) (arrow.Array, error) {
		return mapInt64(as[0], false, func(v int64) (int64, error) {
			switch {
			case kind == types.Date:
				if v > math.MaxInt64/types.MsPerDay || v < math.MinInt64/types.MsPerDay {
					return 0, fmt.Errorf("function epoch_ms: DATE %s is out of range", types.FormatDate(v))
				}
				return v * types.MsPerDay, nil
			case kind == types.BigInt && (v < minEpochMs || v > maxEpochMs):
				return 0, fmt.Errorf("function epoch_ms: %d milliseconds is out of the TIMESTAMP range", v)
			}
			return v, nil
		})
	}}, nil
}

// minEpochMs and maxEpochMs bound EPOCH_MS(ms): the first and last millisecond of the years
// ±maxCalendarYear.
var (
	minEpochMs = daysFromCivil(-maxCalendarYear, 1, 1) * types.MsPerDay
	maxEpochMs = daysFromCivil(maxCalendarYear+1, 1, 1)*types.MsPerDay - 1
)

// newMakeDate is DuckDB's MAKE_DATE(year, month, day): the DATE, a data error when there is
// no such day (February 30, month 13) or the year is beyond ±200 million.
func newMakeDate(args []Expr) (Expr, error) {
	if err := argCount("make_date", args, 3, 3); err != nil {
		return nil, err
	}
	xs := make([]Expr, 3)
	for i, a := range args {
		x, err := intArg("function make_date", a)
		if err != nil {
			return nil, err
		}
		xs[i] = newCast(x, types.TBigInt, false, true)
	}
	return &kernelExpr{t: types.TDate, args: xs, text: callText("make_date", args), k: func(as []arrow.Array, n int) (arrow.Array, error) {
		ys, ms, ds := Int64s(as[0]), Int64s(as[1]), Int64s(as[2])
		valid, nulls := andValidity(n, as...)
		dst := make([]int64, n)
		for i := range dst {
			if !isValidAt(valid, i) {
				continue
			}
			y, m, d := ys[i], ms[i], ds[i]
			if y > maxCalendarYear || y < -maxCalendarYear {
				return nil, fmt.Errorf("function make_date: year %d is out of range", y)
			}
			if m < 1 || m > 12 || d < 1 || d > daysInMonth(y, m) {
				return nil, fmt.Errorf("function make_date: %d-%02d-%02d is not a valid date", y, m, d)
			}
			dst[i] = daysFromCivil(y, m, d)
		}
		return makeInt64(dst, valid, nulls), nil
	}}, nil
}

// newLastDay is LAST_DAY(t) (MySQL, Flink, DuckDB): the DATE of the last day of the month
// of the DATE or TIMESTAMP t.
func newLastDay(args []Expr) (Expr, error) {
	if err := argCount("last_day", args, 1, 1); err != nil {
		return nil, err
	}
	x, err := temporalArg("last_day", args[0])
	if err != nil {
		return nil, err
	}
	if x.Type().Kind == types.Timestamp {
		x = newCast(x, types.TDate, false, true)
	}
	return &kernelExpr{t: types.TDate, args: []Expr{x}, text: callText("last_day", args), k: func(as []arrow.Array, n int) (arrow.Array, error) {
		src := Int64s(as[0])
		dst := make([]int64, n)
		for i, days := range src {
			y, m, _ := civilFromDays(days)
			dst[i] = daysFromCivil(y, m, daysInMonth(y, m))
		}
		valid, nulls := andValidity(n, as[0])
		return makeInt64(dst, valid, nulls), nil
	}}, nil
}
