package connector

import (
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/types"
)

// mix is the splitmix64 finaliser: a bijective avalanche of a 64-bit word.
func mix(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

const golden = 0x9e3779b97f4a7c15

// rng is a splitmix64 stream. Every stream is keyed by (seed, row, salt) and starts afresh
// for each row, which is what makes a row computable without its predecessors.
type rng struct{ s uint64 }

func newRng(seed, row, salt uint64) rng {
	return rng{s: mix(seed ^ mix(row*golden+mix(salt+golden)))}
}

func (r *rng) next() uint64 {
	r.s += golden
	return mix(r.s)
}

// intn returns a value in [0, n) for n > 0 (multiply-shift; bias below 2^-32 for our n).
func (r *rng) intn(n int64) int64 {
	hi, _ := bits.Mul64(r.next(), uint64(n))
	return int64(hi)
}

// float returns a value in [0, 1).
func (r *rng) float() float64 { return float64(r.next()>>11) / (1 << 53) }

// between returns a value in [lo, hi] (inclusive), for lo <= hi.
func (r *rng) between(lo, hi int64) int64 {
	span := uint64(hi - lo)
	if span == ^uint64(0) {
		return int64(r.next())
	}
	h, _ := bits.Mul64(r.next(), span+1)
	return lo + int64(h)
}

// lower is the alphabet of Nexmark's free text: letters, vowels again and a space, so the
// text looks word-like; 32 entries, so one 64-bit draw yields 12 characters.
const lower = "abcdefghijklmnopqrstuvwxyzaeiou "

// letters is datagen's alphabet for random strings.
const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"

// strCol accumulates a string column as Arrow offsets and bytes, without a Go string per
// value.
type strCol struct {
	offs []int32
	data []byte
}

func (s *strCol) end() { s.offs = append(s.offs, int32(len(s.data))) }

func (s *strCol) add(v string) {
	s.data = append(s.data, v...)
	s.end()
}

// text appends n characters of the 32-letter alphabet drawn from r (no end()).
func (s *strCol) text(r *rng, n int) {
	at := len(s.data)
	s.data = append(s.data, make([]byte, n)...)
	d := s.data[at:]
	for len(d) > 0 {
		x := r.next()
		k := min(len(d), 12)
		for j := 0; j < k; j++ {
			d[j] = lower[x&31]
			x >>= 5
		}
		d = d[k:]
	}
}

// lowerLetters is the alphabet of names in e-mail addresses and URLs.
const lowerLetters = "abcdefghijklmnopqrstuvwxyz"

// chars appends n characters of alphabet drawn from r (no end()).
func (s *strCol) chars(r *rng, n int, alphabet string) {
	for n > 0 {
		x := r.next()
		for k := 0; k < 2 && n > 0; k++ {
			s.data = append(s.data, alphabet[(uint64(uint32(x))*uint64(len(alphabet)))>>32])
			x >>= 32
			n--
		}
	}
}

// digits appends v as exactly w decimal digits, zero-padded (v >= 0).
func (s *strCol) digits(v int64, w int) {
	var buf [20]byte
	for i := w - 1; i >= 0; i-- {
		buf[i] = byte('0' + v%10)
		v /= 10
	}
	s.data = append(s.data, buf[:w]...)
}

// int appends v in decimal.
func (s *strCol) int(v int64) {
	var buf [20]byte
	i := len(buf)
	u := uint64(v)
	if v < 0 {
		u = uint64(-v)
	}
	for {
		i--
		buf[i] = byte('0' + u%10)
		u /= 10
		if u == 0 {
			break
		}
	}
	if v < 0 {
		i--
		buf[i] = '-'
	}
	s.data = append(s.data, buf[i:]...)
}

// out is one output column under construction, in its physical representation.
type out struct {
	phys  types.Phys
	ints  []int64
	f64   []float64
	bools []bool
	str   strCol
}

// newOuts prepares output columns for n rows; width, when not nil, is each column's expected
// bytes per string value.
func newOuts(cols []types.T, n int, width []int) []out {
	o := make([]out, len(cols))
	for i, t := range cols {
		o[i].phys = t.Phys()
		switch o[i].phys {
		case types.PhysInt64:
			o[i].ints = make([]int64, 0, n)
		case types.PhysFloat64:
			o[i].f64 = make([]float64, 0, n)
		case types.PhysBool:
			o[i].bools = make([]bool, 0, n)
		case types.PhysString:
			o[i].str.offs = make([]int32, 1, n+1)
			w := 16
			if width != nil {
				w = width[i]
			}
			o[i].str.data = make([]byte, 0, w*n)
		}
	}
	return o
}

// finish turns the columns into a batch of n rows (all non-null, weight +1, no WM).
func finish(o []out, n int) *exec.Batch {
	b := &exec.Batch{N: n, Cols: make([]arrow.Array, len(o))}
	for i := range o {
		c := &o[i]
		switch c.phys {
		case types.PhysInt64:
			b.Cols[i] = exec.NewInt64(c.ints, nil)
		case types.PhysFloat64:
			b.Cols[i] = exec.NewFloat64(c.f64, nil)
		case types.PhysBool:
			bm := make([]byte, (n+7)/8)
			for j, v := range c.bools {
				if v {
					bm[j>>3] |= 1 << (j & 7)
				}
			}
			b.Cols[i] = array.NewBooleanData(array.NewData(arrow.FixedWidthTypes.Boolean, n,
				[]*memory.Buffer{nil, memory.NewBufferBytes(bm)}, nil, 0, 0))
		case types.PhysString:
			b.Cols[i] = array.NewStringData(array.NewData(arrow.BinaryTypes.String, n,
				[]*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(c.str.offs)),
					memory.NewBufferBytes(c.str.data)}, nil, 0, 0))
		}
	}
	return b
}
