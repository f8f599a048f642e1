package sql

import (
	"math/big"
	"strings"
)

// Interval literals: INTERVAL 'n' UNIT, and PostgreSQL's text form INTERVAL '1 day 2 hours'.

// intervalUnits maps interval units (singular) to milliseconds.
var intervalUnits = map[string]int64{
	"MILLISECOND": 1, "SECOND": 1000, "MINUTE": 60_000, "HOUR": 3_600_000,
	"DAY": 86_400_000, "WEEK": 7 * 86_400_000,
}

const unitList = "MILLISECOND, SECOND, MINUTE, HOUR, DAY, WEEK (singular or plural)"

// unitMillis is the length of interval unit word (singular or plural, any case).
func unitMillis(word string) (int64, bool) {
	unit := strings.ToUpper(word)
	ms, ok := intervalUnits[unit]
	if !ok && strings.HasSuffix(unit, "S") {
		ms, ok = intervalUnits[unit[:len(unit)-1]]
	}
	return ms, ok
}

// parseInterval parses `INTERVAL ['+'|'-'] (number | 'number') unit` at i and
// returns the interval in milliseconds and the index after it.
func (r *rewriter) parseInterval(i int) (int64, int, *Error) {
	k := i + 1
	sign := ""
	if t := r.at(k); t.op("-") || t.op("+") {
		sign = t.raw
		k++
	}
	v := r.at(k)
	if v.kind != tkString && v.kind != tkNumber {
		return 0, 0, r.errAt(i, "INTERVAL needs a literal value, as in INTERVAL '10' SECOND")
	}
	if v.kind == tkString {
		// PostgreSQL's form, the units in the string: INTERVAL '10 seconds', '1 day 2 hours'.
		ms, whole, ok, unknown := intervalText(v.val)
		if _, isUnit := unitMillis(r.at(k + 1).raw); unknown != "" && !isUnit {
			return 0, 0, r.errAt(i, "invalid interval unit %s in %s; expected one of %s", unknown, v.raw, unitList)
		}
		if ok {
			if !whole {
				return 0, 0, r.errAt(i, "interval %s is not a whole number of milliseconds, or out of range", v.raw)
			}
			if sign == "-" {
				ms = -ms
			}
			return ms, k + 1, nil
		}
	}
	u := r.at(k + 1)
	if u.kind != tkIdent {
		return 0, 0, r.errAt(i, "expected an interval unit after INTERVAL %s; expected one of %s", v.raw, unitList)
	}
	ums, ok := unitMillis(u.raw)
	if !ok {
		return 0, 0, r.errAt(i, "invalid interval unit %s; expected one of %s", u.raw, unitList)
	}
	if to := r.at(k + 2); to.is("TO") && v.kind == tkString {
		// SQL's compound form (Flink, Calcite): INTERVAL '1:30' MINUTE TO SECOND,
		// '2 03:04:05.006' DAY TO SECOND. Text that is not one (INTERVAL '1' HOUR inside
		// FLOOR(t + ... TO DAY)) is read as before, leaving TO to what follows.
		if ms, ok := compoundInterval(v.val, strings.ToUpper(u.raw), strings.ToUpper(r.at(k+3).raw)); ok {
			if sign == "-" {
				ms = -ms
			}
			return ms, k + 4, nil
		}
	}
	neg := sign == "-"
	text := strings.TrimSpace(v.val)
	if strings.HasPrefix(text, "-") {
		neg, text = !neg, text[1:]
	} else if strings.HasPrefix(text, "+") {
		text = text[1:]
	}
	q, ok := new(big.Rat).SetString(text)
	if !ok || text == "" || strings.ContainsAny(text, "/eExX") {
		return 0, 0, r.errAt(i, "invalid interval value %s", v.raw)
	}
	q.Mul(q, new(big.Rat).SetInt64(ums))
	if !q.IsInt() {
		return 0, 0, r.errAt(i, "interval %s %s is not a whole number of milliseconds", v.raw, u.raw)
	}
	if !q.Num().IsInt64() {
		return 0, 0, r.errAt(i, "interval %s %s is out of range: an interval is at most 9223372036854775807 milliseconds", v.raw, u.raw)
	}
	ms := q.Num().Int64()
	if neg {
		ms = -ms
	}
	return ms, k + 2, nil
}

// intervalText reads an interval written as PostgreSQL does, the units in the text: one or
// more pairs of a number and a unit ('10 seconds', '1 day 2 hours', '-1.5 minutes'), in
// milliseconds (whole false: it is not a whole number of them, or too large). ok is false
// for any other text (a bare number, as in INTERVAL '10' SECOND); unknown is the word that
// stood where a unit should, if that is why.
func intervalText(text string) (ms int64, whole, ok bool, unknown string) {
	// Pairs of a number and a unit, spaced or not ('1h30m', '2 weeks 1 ms').
	var f []string
	for _, w := range strings.Fields(text) {
		for w != "" {
			n := strings.IndexFunc(w, func(c rune) bool { return c != '.' && c != '-' && c != '+' && (c < '0' || c > '9') })
			switch n {
			case -1:
				f, w = append(f, w), ""
			case 0:
				u := strings.IndexFunc(w, func(c rune) bool { return c >= '0' && c <= '9' || c == '.' || c == '-' || c == '+' })
				if u < 0 {
					u = len(w)
				}
				f, w = append(f, w[:u]), w[u:]
			default:
				f, w = append(f, w[:n]), w[n:]
			}
		}
	}
	if len(f) == 0 || len(f)%2 != 0 {
		return 0, false, false, ""
	}
	total := new(big.Rat)
	for j := 0; j < len(f); j += 2 {
		num, unit := f[j], f[j+1]
		ums, ok := unitMillis(unit)
		if !ok {
			ums, ok = intervalAbbrevs[strings.ToLower(unit)]
		}
		q, isNum := new(big.Rat).SetString(num)
		if !isNum || strings.ContainsAny(num, "/eExX") {
			return 0, false, false, ""
		}
		if !ok {
			return 0, false, false, f[j+1]
		}
		total.Add(total, q.Mul(q, new(big.Rat).SetInt64(ums)))
	}
	if !total.IsInt() || !total.Num().IsInt64() {
		return 0, false, true, ""
	}
	return total.Num().Int64(), true, true, ""
}

// intervalAbbrevs are the short units PostgreSQL and DuckDB take in an interval's text.
var intervalAbbrevs = map[string]int64{
	"ms": 1, "msec": 1, "msecs": 1, "s": 1000, "sec": 1000, "secs": 1000,
	"m": 60_000, "min": 60_000, "mins": 60_000, "h": 3_600_000, "hr": 3_600_000, "hrs": 3_600_000,
	"d": 86_400_000, "w": 7 * 86_400_000,
}

// IntervalTextMillis reads an interval written with its units ('1 hour 30 min', '90s'), as
// INTERVAL '...' takes it, in milliseconds; ok is false for any other text.
func IntervalTextMillis(text string) (ms int64, ok bool) {
	ms, whole, ok, _ := intervalText(text)
	return ms, ok && whole
}

// compoundFields lists, for each `start TO end` pair of SQL's compound day-time intervals,
// the units of the fields its text holds, largest first.
var compoundFields = map[[2]string][]int64{
	{"DAY", "HOUR"}:      {86_400_000, 3_600_000},
	{"DAY", "MINUTE"}:    {86_400_000, 3_600_000, 60_000},
	{"DAY", "SECOND"}:    {86_400_000, 3_600_000, 60_000, 1000},
	{"HOUR", "MINUTE"}:   {3_600_000, 60_000},
	{"HOUR", "SECOND"}:   {3_600_000, 60_000, 1000},
	{"MINUTE", "SECOND"}: {60_000, 1000},
}

// compoundInterval reads the text of INTERVAL 'text' start TO end: '[-]d hh:mm:ss.fff' with the
// fields the pair names (days apart by a space, the rest by colons; only seconds take a
// fraction, of at most three digits), in milliseconds.
func compoundInterval(text, start, end string) (int64, bool) {
	start = strings.TrimSuffix(start, "S")
	end = strings.TrimSuffix(end, "S")
	units, ok := compoundFields[[2]string{start, end}]
	if !ok {
		return 0, false
	}
	text = strings.TrimSpace(text)
	neg := strings.HasPrefix(text, "-")
	text = strings.TrimPrefix(strings.TrimPrefix(text, "-"), "+")
	var fields []string
	if start == "DAY" {
		d, rest, found := strings.Cut(text, " ")
		if !found {
			return 0, false
		}
		fields = append([]string{d}, strings.Split(strings.TrimSpace(rest), ":")...)
	} else {
		fields = strings.Split(text, ":")
	}
	if len(fields) != len(units) {
		return 0, false
	}
	var ms int64
	for j, f := range fields {
		whole, frac, hasFrac := strings.Cut(f, ".")
		if hasFrac && (units[j] != 1000 || len(frac) == 0 || len(frac) > 3) {
			return 0, false
		}
		if whole == "" || len(whole) > 9 {
			return 0, false
		}
		var n int64
		for _, c := range whole + frac {
			if c < '0' || c > '9' {
				return 0, false
			}
		}
		for _, c := range whole {
			n = n*10 + int64(c-'0')
		}
		ms += n * units[j]
		if hasFrac {
			f := frac + strings.Repeat("0", 3-len(frac))
			var m int64
			for _, c := range f {
				m = m*10 + int64(c-'0')
			}
			ms += m
		}
	}
	if neg {
		ms = -ms
	}
	return ms, true
}
