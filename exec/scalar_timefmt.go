package exec

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/streamsql/streamsql/types"
)

// Time formats of DATE_FORMAT, FROM_UNIXTIME, TO_TIMESTAMP, TO_DATE and UNIX_TIMESTAMP, in
// UTC. A format is Flink's (Java's) pattern — letters y M d D (day of the year) H h (1-12)
// a (AM/PM) E (the day's name) m s S, text in single quotes ('' is a quote), other
// characters as they are — or, when it contains '%', a strftime pattern as DuckDB's: %Y %y
// %m %d %j %H %I %p %a %A %M %S %g (milliseconds) %f (microseconds) %b %B %%.

// defaultTimeFormat is Flink's format of FROM_UNIXTIME, TO_TIMESTAMP and UNIX_TIMESTAMP.
const defaultTimeFormat = "yyyy-MM-dd HH:mm:ss"

// timeField is one element of a time layout: literal text, or a field of the time.
type timeField struct {
	letter byte   // 0 for literal text; else the Java letter y M d D H h a E m s S
	width  int    // digits (zero-padded); for M and E, 3 is the name's abbreviation and 4 the name
	text   string // the literal text
}

// timeLayout is a compiled time format.
type timeLayout []timeField

var monthNames = [...]string{"January", "February", "March", "April", "May", "June", "July",
	"August", "September", "October", "November", "December"}

// dayNames are the days of the week from Sunday.
var dayNames = [...]string{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"}

// strftimeFields are the strftime conversions, as the Java fields they stand for.
var strftimeFields = map[byte]timeField{
	'Y': {letter: 'y', width: 4}, 'y': {letter: 'y', width: 2}, 'm': {letter: 'M', width: 2},
	'd': {letter: 'd', width: 2}, 'H': {letter: 'H', width: 2}, 'M': {letter: 'm', width: 2},
	'S': {letter: 's', width: 2}, 'g': {letter: 'S', width: 3}, 'f': {letter: 'S', width: 6},
	'b': {letter: 'M', width: 3}, 'B': {letter: 'M', width: 4}, 'j': {letter: 'D', width: 3},
	'I': {letter: 'h', width: 2}, 'p': {letter: 'a', width: 1}, 'a': {letter: 'E', width: 3},
	'A': {letter: 'E', width: 4},
}

// compileTimeFormat compiles the format f of function fn.
func compileTimeFormat(fn, f string) (timeLayout, error) {
	if strings.Contains(f, "%") {
		return compileStrftime(fn, f)
	}
	var l timeLayout
	for i := 0; i < len(f); {
		c := f[i]
		switch {
		case c == '\'':
			text, n, ok := quotedText(f[i:])
			if !ok {
				return nil, fmt.Errorf("function %s: unterminated quoted text in format '%s'", fn, f)
			}
			l = l.literal(text)
			i += n
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			if !strings.ContainsRune("yMdDHhaEmsS", rune(c)) {
				return nil, fmt.Errorf("function %s: pattern letter '%c' in format '%s' is not supported (use y M d D H h a E m s S, and quote text as 'T')", fn, c, f)
			}
			n := 1
			for i+n < len(f) && f[i+n] == c {
				n++
			}
			width := n
			switch c {
			case 'M':
				width = min(n, 4)
			case 'E':
				width = max(3, min(n, 4)) // E, EE and EEE are the abbreviation
			}
			l = append(l, timeField{letter: c, width: width})
			i += n
		default:
			l = l.literal(string(c))
			i++
		}
	}
	return l, nil
}

// quotedText reads the quoted text at the start of f: its text (two quotes stand for one),
// the bytes read and whether the quote closes.
func quotedText(f string) (string, int, bool) {
	if strings.HasPrefix(f, "''") {
		return "'", 2, true
	}
	var sb strings.Builder
	for i := 1; i < len(f); i++ {
		if f[i] != '\'' {
			sb.WriteByte(f[i])
			continue
		}
		if i+1 < len(f) && f[i+1] == '\'' {
			sb.WriteByte('\'')
			i++
			continue
		}
		return sb.String(), i + 1, true
	}
	return "", 0, false
}

// compileStrftime compiles a strftime format.
func compileStrftime(fn, f string) (timeLayout, error) {
	var l timeLayout
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			l = l.literal(f[i : i+1])
			continue
		}
		if i+1 == len(f) {
			return nil, fmt.Errorf("function %s: format '%s' ends with %%", fn, f)
		}
		i++
		if f[i] == '%' {
			l = l.literal("%")
			continue
		}
		tf, ok := strftimeFields[f[i]]
		if !ok {
			return nil, fmt.Errorf("function %s: %%%c in format '%s' is not supported (use %%Y %%y %%m %%d %%j %%H %%I %%p %%a %%A %%M %%S %%g %%f %%b %%B %%%%)", fn, f[i], f)
		}
		l = append(l, tf)
	}
	return l, nil
}

// literal appends literal text, merged with literal text before it.
func (l timeLayout) literal(s string) timeLayout {
	if n := len(l); n > 0 && l[n-1].letter == 0 {
		l[n-1].text += s
		return l
	}
	return append(l, timeField{text: s})
}

// format writes the timestamp ms (UTC milliseconds) in the layout.
func (l timeLayout) format(ms int64) string {
	days := types.FloorDiv(ms, types.MsPerDay)
	inDay := ms - days*types.MsPerDay
	y, mo, d := civilFromDays(days)
	var b []byte
	for _, f := range l {
		var v int64
		switch f.letter {
		case 0:
			b = append(b, f.text...)
			continue
		case 'y':
			v = y
			if f.width == 2 {
				v = (y%100 + 100) % 100
			}
		case 'M':
			if f.width >= 3 {
				name := monthNames[mo-1]
				if f.width == 3 {
					name = name[:3]
				}
				b = append(b, name...)
				continue
			}
			v = mo
		case 'd':
			v = d
		case 'D':
			v = days - daysFromCivil(y, 1, 1) + 1
		case 'H':
			v = inDay / 3_600_000
		case 'h':
			v = (inDay/3_600_000+11)%12 + 1
		case 'a':
			b = append(b, halfDay(inDay)...)
			continue
		case 'E':
			name := dayNames[days-types.FloorDiv(days+4, 7)*7+4] // 1970-01-01 was a Thursday
			if f.width == 3 {
				name = name[:3]
			}
			b = append(b, name...)
			continue
		case 'm':
			v = inDay / 60_000 % 60
		case 's':
			v = inDay / 1000 % 60
		case 'S': // the fraction of the second, to width digits
			frac := fmt.Sprintf("%03d", inDay%1000) + strings.Repeat("0", max(0, f.width-3))
			b = append(b, frac[:f.width]...)
			continue
		}
		b = appendPadded(b, v, f.width)
	}
	return string(b)
}

// halfDay is AM or PM, for the milliseconds into a day.
func halfDay(inDay int64) string {
	if inDay < 12*3_600_000 {
		return "AM"
	}
	return "PM"
}

// appendPadded appends v in decimal, zero-padded to width digits.
func appendPadded(b []byte, v int64, width int) []byte {
	if v < 0 {
		b = append(b, '-')
		v = -v
	}
	s := strconv.FormatInt(v, 10)
	for i := len(s); i < width; i++ {
		b = append(b, '0')
	}
	return append(b, s...)
}

// parse reads s in the layout as a timestamp in UTC milliseconds; ok is false when s is not
// a valid time in it, wholly. Fields left out take their least value (1970-01-01 00:00:00).
// A number reads as many digits as there are, or its width when a number follows; a
// two-digit year yy is 1969-2068 (as POSIX's %y).
func (l timeLayout) parse(s string) (ms int64, ok bool) {
	y, mo, d := int64(1970), int64(1), int64(1)
	var h, mi, sec, frac, doy int64
	pm := int64(-1) // a: 0 AM, 1 PM
	for i, f := range l {
		var name int64
		switch {
		case f.letter == 0:
			if !strings.HasPrefix(s, f.text) {
				return 0, false
			}
			s = s[len(f.text):]
			continue
		case f.letter == 'M' && f.width >= 3:
			if mo, s = parseName(s, monthNames[:], f.width == 3); mo == 0 {
				return 0, false
			}
			continue
		case f.letter == 'E': // the day's name is read, not checked against the date
			if name, s = parseName(s, dayNames[:], f.width == 3); name == 0 {
				return 0, false
			}
			continue
		case f.letter == 'a':
			if pm, s = parseName(s, []string{"AM", "PM"}, false); pm == 0 {
				return 0, false
			}
			pm--
			continue
		}
		most := len(s)
		if i+1 < len(l) && l[i+1].letter != 0 {
			most = f.width
		}
		n := 0
		for n < most && n < 18 && n < len(s) && s[n] >= '0' && s[n] <= '9' {
			n++
		}
		if n == 0 {
			return 0, false
		}
		v, _ := strconv.ParseInt(s[:n], 10, 64)
		switch f.letter {
		case 'y':
			y = v
			if f.width == 2 && n == 2 {
				y = 1900 + v
				if v < 69 {
					y = 2000 + v
				}
			}
		case 'M':
			mo = v
		case 'd':
			d = v
		case 'D':
			doy = v
		case 'H', 'h':
			h = v
		case 'm':
			mi = v
		case 's':
			sec = v
		case 'S':
			digits := (s[:n] + "00")[:3]
			frac, _ = strconv.ParseInt(digits, 10, 64)
		}
		s = s[n:]
	}
	if pm >= 0 { // h is 1 to 12, 12 AM being midnight
		if h < 1 || h > 12 {
			return 0, false
		}
		h = h%12 + 12*pm
	}
	if s != "" || mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo) || h > 23 || mi > 59 || sec > 59 || y > 200_000_000 {
		return 0, false
	}
	days := daysFromCivil(y, mo, d)
	if doy > 0 { // a day of the year stands for the month and day
		if days = daysFromCivil(y, 1, 1) + doy - 1; doy > daysFromCivil(y+1, 1, 1)-daysFromCivil(y, 1, 1) {
			return 0, false
		}
	}
	return days*types.MsPerDay + h*3_600_000 + mi*60_000 + sec*1000 + frac, true
}

// parseName reads one of names (short: its first three letters) at the start of s, in any
// case; it returns its place from 1 (0: none) and the rest of s.
func parseName(s string, names []string, short bool) (int64, string) {
	for i, name := range names {
		if short {
			name = name[:3]
		}
		if len(s) >= len(name) && strings.EqualFold(s[:len(name)], name) {
			return int64(i + 1), s[len(name):]
		}
	}
	return 0, s
}
