package sql

import (
	"sort"
	"sync"
	"unicode/utf8"
)

// source is the text given to Parse, with an index of it built on first use, so that
// turning an offset into a line and column costs a binary search and a count of at most
// runeStep bytes — not a scan from the text's start, which made a statement with many
// expressions (an INSERT of thousands of rows, each asking for its place) quadratic.
// It may be used from several goroutines (a prepared statement's executions).
type source struct {
	text  string
	once  sync.Once
	lines []int // the offset each line starts at, ascending
	runes []int // runes[i]: the runes of text[:i*runeStep]; nil when text is not UTF-8
	ascii bool  // every byte is ASCII: a column is a byte count
}

// runeStep is the stride of source.runes.
const runeStep = 256

func (s *source) index() {
	s.lines = []int{0}
	valid := utf8.ValidString(s.text)
	s.ascii = true
	n := 0
	for i := 0; i <= len(s.text); i++ {
		if valid && i%runeStep == 0 {
			s.runes = append(s.runes, n)
		}
		if i == len(s.text) {
			break
		}
		c := s.text[i]
		if c == '\n' {
			s.lines = append(s.lines, i+1)
		}
		if c&0xC0 != 0x80 { // not a continuation byte: a rune starts here
			n++
		}
		s.ascii = s.ascii && c < utf8.RuneSelf
	}
}

// runesBefore returns the runes of text[:off], which is UTF-8.
func (s *source) runesBefore(off int) int {
	k := off / runeStep
	n := s.runes[k]
	for _, c := range []byte(s.text[k*runeStep : off]) {
		if c&0xC0 != 0x80 {
			n++
		}
	}
	return n
}

// pos converts a byte offset of the text (clamped to it) into a 1-based line and column.
func (s *source) pos(off int) Pos {
	off = min(max(off, 0), len(s.text))
	s.once.Do(s.index)
	line := sort.SearchInts(s.lines, off+1) // lines starting at or before off
	start := s.lines[line-1]
	switch {
	case s.ascii:
		return Pos{Line: line, Col: off - start + 1}
	case s.runes == nil || off-start <= runeStep:
		return Pos{Line: line, Col: utf8.RuneCountInString(s.text[start:off]) + 1}
	}
	return Pos{Line: line, Col: s.runesBefore(off) - s.runesBefore(start) + 1}
}

// posAt converts a byte offset of text into a 1-based line and column (once: a place
// asked for more than once should come from a source).
func posAt(text string, off int) Pos { return (&source{text: text}).pos(off) }
