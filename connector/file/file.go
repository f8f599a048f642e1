// Package file reads a table from a file of records, one per line: JSON objects (format
// 'json', the default) or CSV lines (format 'csv', the columns in order). The file is read
// to its end and then followed: lines appended later are read as they come, so a log file a
// program appends to streams into the table.
//
// The position is the byte offset after the last record taken; the engine commits it with
// the rows, so after a crash reading resumes exactly after the last committed record. A
// record that cannot become a row is handed over as a bad record (its offset is its line's
// byte offset) and reading goes on; so is a line longer than 4 MiB. A last line without its
// newline is taken once the file has not changed for a second: it is then whole, not a line
// being written.
package file

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/connector"
)

// Options lists the valid WITH options, for errors.
const Options = "'connector', 'path', 'format' ('json' or 'csv')"

// poll is how often a file that has no new lines is looked at again.
const poll = 50 * time.Millisecond

// Source reads one file. It is used by one goroutine at a time.
type Source struct {
	path string
	csv  bool
	dec  *connector.Decoder
	f    *os.File
	off  int64 // the offset of the next record
	size int64 // the file's size when last looked at
	buf  []byte
	// changed is when the file's size last changed; skipping is set while the rest of a line
	// too long to read is skipped.
	changed  time.Time
	skipping bool
}

// OpenSource checks the options and the file and positions the source at pos (from a
// previous run's commit; nil: the file's start).
func OpenSource(opts map[string]string, cols []catalog.Column, pos []byte) (*Source, error) {
	o := connector.NewOptions("file", opts)
	o.Take("connector")
	path, ok := o.Take("path")
	if !ok || strings.TrimSpace(path) == "" {
		return nil, fmt.Errorf("file: option 'path' is required: the file to read")
	}
	format, err := o.Choice("format", "json", "json", "csv")
	if err != nil {
		return nil, err
	}
	s := &Source{path: path, dec: connector.NewDecoder(cols), csv: format == "csv"}
	if err := o.RejectUnused(Options); err != nil {
		return nil, err
	}
	// A FIFO or a device would block the open, or the reads, of a statement: only a regular
	// file is read.
	st, err := os.Stat(path)
	switch {
	case err != nil:
		return nil, fmt.Errorf("file: %w", err)
	case st.IsDir():
		return nil, fmt.Errorf("file: %s is a directory", path)
	case !st.Mode().IsRegular():
		return nil, fmt.Errorf("file: %s is not a regular file (a pipe, socket or device cannot be followed)", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("file: %w", err)
	}
	s.f = f
	if len(pos) >= 8 {
		s.off = int64(binary.BigEndian.Uint64(pos))
		s.skipping = len(pos) == 9 && pos[8] == 1
	}
	return s, nil
}

// Size is the file's size now (0 if it cannot be read). Unlike the rest of Source it may be
// called from any goroutine.
func (s *Source) Size() int64 {
	st, err := os.Stat(s.path)
	if err != nil {
		return 0
	}
	return st.Size()
}

// Partitions is 1: a file is one ordered log.
func (s *Source) Partitions() int { return 1 }

// Offset is the byte offset of the next record.
func (s *Source) Offset() int64 { return s.off }

// Lag is how many bytes of the file are not read yet.
func (s *Source) Lag() int64 { return max(0, s.size-s.off) }

// Position encodes the offset for the engine to commit.
func (s *Source) Position() []byte {
	pos := binary.BigEndian.AppendUint64(nil, uint64(s.off))
	if s.skipping { // the offset is inside a line too long, whose rest is skipped
		pos = append(pos, 1)
	}
	return pos
}

// Restart does nothing: a read that failed is simply tried again.
func (s *Source) Restart() {}

// SetPaused does nothing: one partition is never ahead of another.
func (s *Source) SetPaused(map[int32]bool) {}

// Close closes the file.
func (s *Source) Close() { s.f.Close() }

// Poll waits until lines are there or ctx is done, and returns up to max records decoded. A
// done ctx returns an empty chunk and no error.
func (s *Source) Poll(ctx context.Context, max int) (connector.Chunk, error) {
	for {
		lines, offs, bad, err := s.read(max)
		if err != nil {
			return connector.Chunk{}, fmt.Errorf("file %s: %w", s.path, err)
		}
		if len(lines) > 0 || len(bad) > 0 {
			return s.decode(lines, offs, bad), nil
		}
		select {
		case <-ctx.Done():
			return connector.Chunk{}, nil
		case <-time.After(poll):
		}
	}
}

// maxLine is the longest line read; a longer one is a bad record (its start kept).
const maxLine = 4 << 20

// tailWait is how long the file must stay unchanged before a last line without its newline
// is taken: a writer that flushes a line in pieces has had its chance to finish it.
const tailWait = time.Second

// read returns up to max whole lines from the offset (without their line ends), each with
// its offset, and the lines too long to read as bad records, and moves the offset past them.
func (s *Source) read(max int) (lines [][]byte, offs []int64, bad []connector.BadRecord, err error) {
	st, err := s.f.Stat()
	if err != nil {
		return nil, nil, nil, err
	}
	if st.Size() < s.off {
		return nil, nil, nil, &connector.Fatal{Err: fmt.Errorf("the file shrank below the position read (%d bytes): it was truncated or replaced", s.off)}
	}
	if st.Size() != s.size {
		s.size, s.changed = st.Size(), time.Now()
	}
	if s.size == s.off {
		return nil, nil, nil, nil
	}
	n := min(s.size-s.off, maxLine+1) // a line of maxLine bytes, and its newline
	if int64(cap(s.buf)) < n {
		s.buf = make([]byte, n)
	}
	buf := s.buf[:n]
	if _, err := s.f.ReadAt(buf, s.off); err != nil && err != io.EOF {
		return nil, nil, nil, err
	}
	for len(lines) < max && len(buf) > 0 {
		i := bytes.IndexByte(buf, '\n')
		switch {
		case i >= 0:
		case len(buf) == maxLine+1:
			// No newline in a whole window: the line is too long. Skip it (the rest of it
			// follows as the next window's start, skipped too until its newline).
			if !s.skipping {
				bad = append(bad, connector.BadRecord{Offset: s.off, Err: fmt.Sprintf("a line longer than %d bytes", maxLine), Value: bytes.Clone(buf[:4096])})
			}
			s.skipping = true
			s.off += int64(len(buf))
			return lines, offs, bad, nil
		case s.off+int64(len(buf)) < s.size:
			return lines, offs, bad, nil // the rest comes with the next read
		case time.Since(s.changed) < tailWait:
			return lines, offs, bad, nil // a last line without its newline: maybe being written
		default:
			i = len(buf)
		}
		line := bytes.TrimSuffix(buf[:i], []byte{'\r'})
		if s.skipping {
			s.skipping = false // the end of a line too long
		} else if len(line) > 0 && (s.csv || len(bytes.TrimSpace(line)) > 0) {
			// An empty line is no record; nor, in JSON, is one of white space only (in CSV
			// it is a field of it).
			lines = append(lines, bytes.Clone(line))
			offs = append(offs, s.off)
		}
		s.off += int64(min(i+1, len(buf)))
		buf = buf[min(i+1, len(buf)):]
	}
	return lines, offs, bad, nil
}

// decode turns lines into a chunk: rows, and the lines that are not rows as bad records
// (after bad, the lines too long to read).
func (s *Source) decode(lines [][]byte, offs []int64, bad []connector.BadRecord) connector.Chunk {
	ch := connector.Chunk{Bad: bad}
	var rows [][]any
	for i, line := range lines {
		var row []any
		var err error
		if s.csv {
			var fields []string
			if fields, err = csv.NewReader(bytes.NewReader(line)).Read(); err == nil {
				row, err = s.dec.DecodeCSV(fields)
			}
		} else {
			row, err = s.dec.DecodeJSON(line)
		}
		if err != nil {
			ch.Bad = append(ch.Bad, connector.BadRecord{Offset: offs[i], Err: err.Error(), Value: line})
			continue
		}
		rows = append(rows, row)
		ch.Parts = append(ch.Parts, 0)
		ch.Offs = append(ch.Offs, offs[i])
		ch.Vals = append(ch.Vals, line)
	}
	if len(rows) > 0 {
		ch.Rows = s.dec.Batch(rows)
	}
	ch.Pos = s.Position()
	return ch
}
