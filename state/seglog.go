package state

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// logMin is the size from which a table segment goes to the segment log instead of Pebble:
// a large append is then written once, instead of into Pebble's WAL, memtable and sstables.
// Smaller segments (single-row statements) stay in Pebble, whose WAL sync they share.
const logMin = 64 << 10

// logFileMax is the size at which the log starts a new file.
const logFileMax = 64 << 20

// logDir is the segment log's directory under the database path.
const logDir = "seglog"

// segLog is the segment log: append-only files of table segments, each segment referenced
// by one pointer in Pebble, written in the same batch as the rest of its statement.
//
// Invariants: a file is only appended to by the process that created it (Open starts a new
// file), so bytes no committed pointer references — a statement that failed or crashed
// before its commit — are never read; the log is synced before the Pebble batch holding
// its pointers commits, so a committed pointer's bytes are durable; live counts, per file,
// the bytes committed pointers reference, and a file with none (not the one written to) is
// deleted.
type segLog struct {
	fs  vfs.FS
	dir string

	mu       sync.Mutex
	w        vfs.File // the file written to (nil: none yet)
	num      uint64   // its number, or the last one used
	off      int64    // its size
	unsynced bool     // w holds bytes not synced
	readers  map[uint64]vfs.File
	live     map[uint64]int64
}

// logPtr is where a logged segment's bytes are, with their checksum.
type logPtr struct {
	file     uint64
	off, len int64
	crc      uint32
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func (p logPtr) encode() []byte {
	b := binary.AppendUvarint(nil, p.file)
	b = binary.AppendUvarint(b, uint64(p.off))
	b = binary.AppendUvarint(b, uint64(p.len))
	return binary.BigEndian.AppendUint32(b, p.crc)
}

func decodeLogPtr(b []byte) (logPtr, error) {
	var p logPtr
	var vals [3]uint64
	for i := range vals {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			return p, errors.New("damaged segment pointer")
		}
		vals[i], b = v, b[n:]
	}
	if len(b) != 4 {
		return p, errors.New("damaged segment pointer")
	}
	return logPtr{file: vals[0], off: int64(vals[1]), len: int64(vals[2]), crc: binary.BigEndian.Uint32(b)}, nil
}

func logName(num uint64) string { return fmt.Sprintf("%06d.log", num) }

// openLog opens the log under dir; pointers lists every committed pointer, from which it
// learns which files are live. Files no pointer references are deleted.
func openLog(fs vfs.FS, dir string, pointers func(fn func(p logPtr) error) error) (*segLog, error) {
	l := &segLog{fs: fs, dir: fs.PathJoin(dir, logDir), readers: map[uint64]vfs.File{}, live: map[uint64]int64{}}
	if err := fs.MkdirAll(l.dir, 0o755); err != nil {
		return nil, err
	}
	err := pointers(func(p logPtr) error {
		l.live[p.file] += p.len
		return nil
	})
	if err != nil {
		return nil, err
	}
	names, err := fs.List(l.dir)
	if err != nil {
		return nil, err
	}
	for _, name := range names {
		num, ok := parseLogName(name)
		if !ok {
			continue
		}
		l.num = max(l.num, num)
		if l.live[num] == 0 {
			if err := fs.Remove(fs.PathJoin(l.dir, name)); err != nil {
				return nil, err
			}
		}
	}
	return l, nil
}

func parseLogName(name string) (uint64, bool) {
	s, ok := strings.CutSuffix(name, ".log")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseUint(s, 10, 64)
	return n, err == nil
}

// append writes v at the end of the log and returns where it is.
func (l *segLog) append(v []byte) (logPtr, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.w == nil || l.off+int64(len(v)) > logFileMax && l.off > 0 {
		if err := l.roll(); err != nil {
			return logPtr{}, err
		}
	}
	p := logPtr{file: l.num, off: l.off, len: int64(len(v)), crc: crc32.Checksum(v, castagnoli)}
	if _, err := l.w.Write(v); err != nil {
		// The file's end is unknown now: the next append starts a new one.
		l.w.Close()
		l.w = nil
		return logPtr{}, fmt.Errorf("segment log: %w", err)
	}
	l.off += int64(len(v))
	l.unsynced = true
	return p, nil
}

// roll syncs and closes the file written to and starts a new one (mu held).
func (l *segLog) roll() error {
	if l.w != nil {
		if err := l.syncLocked(); err != nil {
			return err
		}
		if err := l.w.Close(); err != nil {
			return err
		}
		l.w = nil
	}
	l.num++
	f, err := l.fs.Create(l.fs.PathJoin(l.dir, logName(l.num)), vfs.WriteCategoryUnspecified)
	if err != nil {
		return fmt.Errorf("segment log: %w", err)
	}
	// The new file's name must be durable before a pointer to it is.
	if d, err := l.fs.OpenDir(l.dir); err == nil {
		err = d.Sync()
		d.Close()
		if err != nil {
			f.Close()
			return fmt.Errorf("segment log: %w", err)
		}
	}
	l.w, l.off = f, 0
	return nil
}

// sync makes what was appended durable.
func (l *segLog) sync() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.syncLocked()
}

func (l *segLog) syncLocked() error {
	if l.w == nil || !l.unsynced {
		return nil
	}
	if err := l.w.Sync(); err != nil {
		return fmt.Errorf("segment log: %w", err)
	}
	l.unsynced = false
	return nil
}

// read returns the bytes p points to, checked against their checksum.
func (l *segLog) read(p logPtr) ([]byte, error) {
	l.mu.Lock()
	f, ok := l.readers[p.file]
	if !ok {
		var err error
		if f, err = l.fs.Open(l.fs.PathJoin(l.dir, logName(p.file))); err != nil {
			l.mu.Unlock()
			return nil, fmt.Errorf("segment log: %w", err)
		}
		l.readers[p.file] = f
	}
	l.mu.Unlock()
	v := make([]byte, p.len)
	if _, err := f.ReadAt(v, p.off); err != nil {
		return nil, fmt.Errorf("segment log file %s: %w", logName(p.file), err)
	}
	if crc32.Checksum(v, castagnoli) != p.crc {
		return nil, fmt.Errorf("segment log file %s is damaged at offset %d (checksum mismatch)", logName(p.file), p.off)
	}
	return v, nil
}

// committed records that a batch's pointers committed (added) and that the pointers of
// dropped tables are gone (freed); files left with no live bytes are deleted.
func (l *segLog) committed(added, freed []logPtr) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, p := range added {
		l.live[p.file] += p.len
	}
	for _, p := range freed {
		l.live[p.file] -= p.len
		if l.live[p.file] > 0 || l.w != nil && p.file == l.num {
			continue
		}
		delete(l.live, p.file)
		if f, ok := l.readers[p.file]; ok {
			f.Close()
			delete(l.readers, p.file)
		}
		_ = l.fs.Remove(l.fs.PathJoin(l.dir, logName(p.file))) // a leftover goes at the next Open
	}
}

// copyTo links (or copies) every live file into dir's log, after closing the file written
// to, so that the files linked never change again.
func (l *segLog) copyTo(dir string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.w != nil {
		if err := l.syncLocked(); err != nil {
			return err
		}
		if err := l.w.Close(); err != nil {
			return err
		}
		l.w = nil
	}
	dst := l.fs.PathJoin(dir, logDir)
	if err := l.fs.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	nums := make([]uint64, 0, len(l.live))
	for n, b := range l.live {
		if b > 0 {
			nums = append(nums, n)
		}
	}
	slices.Sort(nums)
	for _, n := range nums {
		if err := vfs.LinkOrCopy(l.fs, l.fs.PathJoin(l.dir, logName(n)), l.fs.PathJoin(dst, logName(n))); err != nil {
			return err
		}
	}
	return nil
}

// close closes the log's files.
func (l *segLog) close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	var err error
	if l.w != nil {
		err = l.syncLocked()
		if cerr := l.w.Close(); err == nil {
			err = cerr
		}
		l.w = nil
	}
	for n, f := range l.readers {
		f.Close()
		delete(l.readers, n)
	}
	return err
}
