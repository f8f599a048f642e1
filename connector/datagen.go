package connector

import (
	"fmt"
	"hash/fnv"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/types"
)

// datagen generates each column independently, by its kind:
//
//	sequence   start, start+1, ... end, or the type's last value (the source then ends); numbers and strings
//	random     numbers uniform in [min, max]; strings of 'length' letters; booleans
//	timestamp  mode 'event': start + row*step.ms, minus a disorder in [0, max.out.of.order.ms];
//	           mode 'now': the Clock's time when the row is generated (not deterministic)
//
// Row r's value in column c is a function of (seed, r, c's name) alone.
const datagenOptions = "'connector', 'rows.per.second' (alias 'rows-per-second'), 'number-of-rows', 'seed' and " +
	"'fields.<column>.<attribute>' with attributes 'kind' ('sequence', 'random' or 'timestamp'), " +
	"'start', 'end' (sequence), 'min', 'max', 'length' (random), " +
	"'mode' ('event' or 'now'), 'start', 'step.ms', 'max.out.of.order.ms' (timestamp)"

type dgKind uint8

const (
	dgSequence dgKind = iota
	dgRandom
	dgTimestamp
)

var dgKindNames = map[string]dgKind{"sequence": dgSequence, "random": dgRandom, "timestamp": dgTimestamp}

func (k dgKind) String() string { return [...]string{"'sequence'", "'random'", "'timestamp'"}[k] }

type dgCol struct {
	t        types.T
	kind     dgKind
	salt     uint64
	lo, hi   int64   // sequence start/end (values), random int64 bounds (physical)
	flo, fhi float64 // random DOUBLE bounds
	length   int     // random VARCHAR length
	now      bool    // timestamp mode 'now'
	step     int64   // timestamp event mode: start is lo
	ooo      int64
}

type datagen struct {
	width []int // expected bytes per string value, by column
	cols  []dgCol
	types []types.T
	seed  uint64
	rows  int64
}

// attrs is the options of one column: attribute -> full option key.
type attrs map[string]string

func openDatagen(o *Options, cols []catalog.Column) (generator, int64, error) {
	g := &datagen{rows: -1, types: make([]types.T, len(cols))}
	rateKey, err := o.alias("rows.per.second", "rows-per-second") // ours, Flink's
	if err != nil {
		return nil, 0, err
	}
	rate, err := o.rate(rateKey)
	if err != nil {
		return nil, 0, err
	}
	if g.rows, err = o.int("number-of-rows", -1, 0, math.MaxInt64, "a non-negative integer number of rows"); err != nil {
		return nil, 0, err
	}
	if g.seed, err = o.seed(); err != nil {
		return nil, 0, err
	}
	perCol, err := columnAttrs(o, cols)
	if err != nil {
		return nil, 0, err
	}
	for i, col := range cols {
		c, err := parseColumn(o, col, perCol[i])
		if err != nil {
			return nil, 0, err
		}
		n := int64(-1) // the rows the column has values for (-1: no end)
		switch {
		case c.kind == dgSequence:
			n = math.MaxInt64 // at most (hi - lo + 1 may overflow)
			if span := uint64(c.hi) - uint64(c.lo); span < math.MaxInt64 {
				n = int64(span) + 1
			}
		case c.kind == dgTimestamp && !c.now && c.step > 0:
			n = (maxTimestamp-c.lo)/c.step + 1 // event times end with year 9999
		}
		if n >= 0 && (g.rows < 0 || n < g.rows) {
			g.rows = n
		}
		g.cols = append(g.cols, c)
		g.width = append(g.width, max(c.length, 20))
		g.types[i] = col.Type
	}
	return g, rate, nil
}

// columnAttrs sorts the 'fields.' options by column (the longest column name that prefixes
// the key wins, so names may contain dots).
func columnAttrs(o *Options, cols []catalog.Column) ([]attrs, error) {
	out := make([]attrs, len(cols))
	for i := range out {
		out[i] = attrs{}
	}
	for _, k := range slices.Sorted(maps.Keys(o.m)) {
		rest, ok := strings.CutPrefix(k, "fields.")
		if !ok {
			continue
		}
		best, bestLen := -1, 0
		for i, c := range cols {
			name := strings.ToLower(c.Name) + "."
			if strings.HasPrefix(rest, name) && len(name) > bestLen {
				best, bestLen = i, len(name)
			}
		}
		if best < 0 {
			names := make([]string, len(cols))
			for i, c := range cols {
				names[i] = c.Name
			}
			return nil, fmt.Errorf("datagen: option '%s' names no column of the table: expected 'fields.<column>.<attribute>' with a column among %s",
				k, strings.Join(names, ", "))
		}
		o.used[k] = true
		out[best][rest[bestLen:]] = k
	}
	return out, nil
}

func parseColumn(o *Options, col catalog.Column, a attrs) (dgCol, error) {
	t := col.Type
	c := dgCol{t: t, kind: dgRandom, salt: nameSalt(col.Name)}
	if t.Kind == types.Timestamp {
		c.kind = dgTimestamp
	}
	allowed := []dgKind{dgRandom}
	switch t.Kind {
	case types.Int, types.BigInt, types.Decimal, types.Double, types.Interval, types.Varchar:
		allowed = []dgKind{dgSequence, dgRandom}
	case types.Timestamp:
		allowed = []dgKind{dgTimestamp, dgRandom}
	}
	if key, ok := a["kind"]; ok {
		k, known := dgKindNames[strings.ToLower(strings.TrimSpace(o.m[key]))]
		if !known || !slices.Contains(allowed, k) {
			names := make([]string, len(allowed))
			for i, k := range allowed {
				names[i] = k.String()
			}
			return c, o.errorf(key, fmt.Sprintf("%s for %s column %s", strings.Join(names, " or "), t, col.Name))
		}
		c.kind = k
		delete(a, "kind")
	}
	var err error
	switch c.kind {
	case dgSequence:
		err = c.sequence(o, col, a)
	case dgRandom:
		err = c.random(o, col, a)
	case dgTimestamp:
		err = c.timestamp(o, a)
	}
	if err != nil {
		return c, err
	}
	for _, attr := range slices.Sorted(maps.Keys(a)) {
		key := a[attr]
		return c, fmt.Errorf("datagen: option '%s': attribute '%s' does not apply to kind %s of %s column %s",
			key, attr, c.kind, t, col.Name)
	}
	return c, nil
}

// sequenceRange is the range of sequence values a type can hold.
func sequenceRange(t types.T) (int64, int64) {
	switch t.Kind {
	case types.Int:
		return math.MinInt32, math.MaxInt32
	case types.Decimal:
		m := types.Pow10[t.Precision-t.Scale] - 1
		return -m, m
	}
	return math.MinInt64, math.MaxInt64 - 1
}

func (c *dgCol) sequence(o *Options, col catalog.Column, a attrs) error {
	lo, hi := sequenceRange(c.t)
	expected := fmt.Sprintf("an integer in [%d, %d] for %s column %s", lo, hi, c.t, col.Name)
	var err error
	c.lo, c.hi = 0, hi
	if key, ok := a["start"]; ok {
		if c.lo, err = o.int(key, 0, lo, hi, expected); err != nil {
			return err
		}
		delete(a, "start")
	}
	if key, ok := a["end"]; ok {
		if c.hi, err = o.int(key, 0, c.lo, hi, expected+", not below 'start'"); err != nil {
			return err
		}
		delete(a, "end")
	}
	return nil
}

func (c *dgCol) random(o *Options, col catalog.Column, a attrs) error {
	t := c.t
	switch t.Kind {
	case types.Bool:
		return nil
	case types.Varchar:
		c.length = 10
		if key, ok := a["length"]; ok {
			n, err := o.int(key, 10, 0, 1<<20, "a string length, an integer in [0, 1048576]")
			if err != nil {
				return err
			}
			c.length = int(n)
			delete(a, "length")
		}
		return nil
	case types.Double:
		c.flo, c.fhi = 0, 1000
		for _, b := range []struct {
			attr string
			v    *float64
		}{{"min", &c.flo}, {"max", &c.fhi}} {
			if key, ok := a[b.attr]; ok {
				f, err := strconv.ParseFloat(strings.TrimSpace(o.m[key]), 64)
				if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
					return o.errorf(key, "a finite DOUBLE")
				}
				*b.v = f
				delete(a, b.attr)
			}
		}
		if c.flo > c.fhi {
			return fmt.Errorf("datagen: column %s: 'min' %v is above 'max' %v", col.Name, c.flo, c.fhi)
		}
		return nil
	}
	// Everything else is an int64 physically: bounds are literals of the column's type.
	var expected string
	var parse func(string) (int64, error)
	switch t.Kind {
	case types.Int, types.BigInt, types.Interval:
		c.lo, c.hi = 0, 999
		lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
		if t.Kind == types.Int {
			lo, hi = math.MinInt32, math.MaxInt32
		}
		expected = fmt.Sprintf("an integer in [%d, %d]", lo, hi)
		if t.Kind == types.Interval {
			expected = "an integer number of milliseconds"
		}
		parse = func(s string) (int64, error) {
			v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
			if err == nil && (v < lo || v > hi) {
				err = fmt.Errorf("out of range")
			}
			return v, err
		}
	case types.Decimal:
		c.lo, c.hi = 0, min(1000*types.Pow10[t.Scale], types.Pow10[t.Precision])-1
		expected = "a number that fits " + t.String()
		parse = func(s string) (int64, error) { return types.ParseDecimal(s, t.Precision, t.Scale) }
	case types.Date:
		c.lo, c.hi = defaultStart/types.MsPerDay, defaultStart/types.MsPerDay+365
		expected = "a date 'YYYY-MM-DD'"
		parse = types.ParseDate
	case types.Timestamp:
		c.lo, c.hi = defaultStart, defaultStart+types.MsPerDay-1
		expected = "a timestamp 'YYYY-MM-DD HH:MM:SS[.fff]'"
		parse = types.ParseTimestamp
	default:
		return fmt.Errorf("datagen: column %s: type %s is not supported", col.Name, t)
	}
	for _, b := range []struct {
		attr string
		v    *int64
	}{{"min", &c.lo}, {"max", &c.hi}} {
		if key, ok := a[b.attr]; ok {
			v, err := parse(o.m[key])
			if err != nil {
				return o.errorf(key, expected)
			}
			*b.v = v
			delete(a, b.attr)
		}
	}
	if c.lo > c.hi {
		return fmt.Errorf("datagen: column %s: 'min' %s is above 'max' %s", col.Name,
			types.Display(c.lo, t), types.Display(c.hi, t))
	}
	return nil
}

func (c *dgCol) timestamp(o *Options, a attrs) error {
	if key, ok := a["mode"]; ok {
		switch strings.ToLower(strings.TrimSpace(o.m[key])) {
		case "event":
		case "now":
			c.now = true
		default:
			return o.errorf(key, "'event' or 'now'")
		}
		delete(a, "mode")
	}
	if c.now {
		return nil
	}
	const msExpected = "a non-negative integer number of milliseconds"
	var err error
	c.lo, c.step = defaultStart, 1
	if key, ok := a["start"]; ok {
		if c.lo, err = o.timestamp(key, defaultStart); err != nil {
			return err
		}
		delete(a, "start")
	}
	if key, ok := a["step.ms"]; ok {
		if c.step, err = o.int(key, 1, 0, 1<<40, msExpected); err != nil {
			return err
		}
		delete(a, "step.ms")
	}
	if key, ok := a["max.out.of.order.ms"]; ok {
		if c.ooo, err = o.int(key, 0, 0, 1<<40, msExpected); err != nil {
			return err
		}
		delete(a, "max.out.of.order.ms")
	}
	return nil
}

func nameSalt(name string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(strings.ToLower(name)))
	return h.Sum64()
}

func (g *datagen) total() int64              { return g.rows }
func (g *datagen) tick(r int64) int64        { return r }
func (g *datagen) rowsThrough(t int64) int64 { return max(t+1, 0) }

func (g *datagen) fill(from int64, n int, now int64) *exec.Batch {
	o := newOuts(g.types, n, g.width)
	for ci := range g.cols {
		c, out := &g.cols[ci], &o[ci]
		for i := 0; i < n; i++ {
			row := from + int64(i)
			switch c.kind {
			case dgSequence:
				v := c.lo + row
				switch out.phys {
				case types.PhysInt64:
					if c.t.Kind == types.Decimal {
						v *= types.Pow10[c.t.Scale]
					}
					out.ints = append(out.ints, v)
				case types.PhysFloat64:
					out.f64 = append(out.f64, float64(v))
				case types.PhysString:
					out.str.int(v)
					out.str.end()
				}
			case dgRandom:
				r := newRng(g.seed, uint64(row), c.salt)
				switch out.phys {
				case types.PhysInt64:
					out.ints = append(out.ints, r.between(c.lo, c.hi))
				case types.PhysFloat64:
					u := r.float() // weighted, as fhi - flo may overflow
					out.f64 = append(out.f64, c.flo*(1-u)+c.fhi*u)
				case types.PhysBool:
					out.bools = append(out.bools, r.next()&1 == 1)
				case types.PhysString:
					out.str.chars(&r, c.length, letters)
					out.str.end()
				}
			case dgTimestamp:
				v := now
				if !c.now {
					v = c.lo + row*c.step
					if c.ooo > 0 {
						r := newRng(g.seed, uint64(row), c.salt)
						v -= r.intn(c.ooo + 1)
					}
				}
				out.ints = append(out.ints, v)
			}
		}
	}
	return finish(o, n)
}
