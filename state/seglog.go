package state

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
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
// file, numbered past every file and pointer seen), so bytes no committed pointer references
// — a statement that failed or crashed before its commit — are never read; the log is synced
// before the Pebble batch holding its pointers commits, so a committed pointer's bytes are
// durable; live counts, per file, the bytes committed pointers reference. A file with none
// is deleted only when that is durable: after a synced commit (DROP TABLE with sync on), or
// at Open once the store is flushed; never the file being written.
type segLog struct {
	fs  vfs.FS
	dir string
	// removeNow: commits are synced, so a file can go as soon as its last pointer does.
	removeNow bool

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
// learns which files are live (removeGarbage deletes the others).
func openLog(fs vfs.FS, dir string, syncWrites bool, pointers func(fn func(p logPtr) error) error) (*segLog, error) {
	l := &segLog{fs: fs, dir: fs.PathJoin(dir, logDir), removeNow: syncWrites,
		readers: map[uint64]vfs.File{}, live: map[uint64]int64{}}
	if err := fs.MkdirAll(l.dir, 0o755); err != nil {
		return nil, err
	}
	if err := syncDir(fs, dir); err != nil { // the log directory's own name
		return nil, err
	}
	err := pointers(func(p logPtr) error {
		l.live[p.file] += p.len
		l.num = max(l.num, p.file)
		return nil
	})
	if err != nil {
		return nil, err
	}
	names, err := l.files()
	if err != nil {
		return nil, err
	}
	for _, num := range names {
		l.num = max(l.num, num)
	}
	return l, nil
}

// files lists the numbers of the log's files.
func (l *segLog) files() ([]uint64, error) {
	names, err := l.fs.List(l.dir)
	if err != nil {
		return nil, err
	}
	var nums []uint64
	for _, name := range names {
		if num, ok := parseLogName(name); ok {
			nums = append(nums, num)
		}
	}
	return nums, nil
}

// garbage reports whether a file holds no live bytes (before anything is written).
func (l *segLog) garbage() bool {
	nums, err := l.files()
	if err != nil {
		return true // let removeGarbage report it
	}
	for _, n := range nums {
		if l.live[n] == 0 {
			return true
		}
	}
	return false
}

// removeGarbage deletes the files no committed pointer references; the store's state that
// says so must be durable.
func (l *segLog) removeGarbage() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	nums, err := l.files()
	if err != nil {
		return err
	}
	for _, n := range nums {
		if l.live[n] == 0 && (l.w == nil || n != l.num) {
			if err := l.fs.Remove(l.fs.PathJoin(l.dir, logName(n))); err != nil {
				return err
			}
		}
	}
	return nil
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

// finish syncs and closes the file written to, if any (mu held): the next append starts a
// new file.
func (l *segLog) finish() error {
	if l.w == nil {
		return nil
	}
	err := l.syncLocked()
	if l.w != nil { // a failed sync closed it
		if cerr := l.w.Close(); err == nil {
			err = cerr
		}
		l.w = nil
	}
	return err
}

// roll syncs and closes the file written to and starts a new one (mu held).
func (l *segLog) roll() error {
	if err := l.finish(); err != nil {
		return err
	}
	l.num++
	f, err := l.fs.Create(l.fs.PathJoin(l.dir, logName(l.num)), vfs.WriteCategoryUnspecified)
	if err != nil {
		return fmt.Errorf("segment log: %w", err)
	}
	// The new file's name must be durable before a pointer to it is.
	if err := syncDir(l.fs, l.dir); err != nil {
		f.Close()
		return fmt.Errorf("segment log: %w", err)
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
		// What the file holds is unknown now (a failed fsync may drop dirty pages): the
		// next append starts a new file.
		l.w.Close()
		l.w = nil
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
			if errors.Is(err, os.ErrNotExist) {
				return nil, fmt.Errorf("segment log file %s is missing: the database is damaged; restore a BACKUP", logName(p.file))
			}
			return nil, fmt.Errorf("segment log: %w", err)
		}
		l.readers[p.file] = f
	}
	l.mu.Unlock()
	v := make([]byte, p.len)
	if _, err := f.ReadAt(v, p.off); errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, fmt.Errorf("segment log file %s is damaged: it ends before offset %d (truncated)", logName(p.file), p.off+p.len)
	} else if err != nil {
		return nil, fmt.Errorf("segment log file %s: %w", logName(p.file), err)
	}
	if crc32.Checksum(v, castagnoli) != p.crc {
		return nil, fmt.Errorf("segment log file %s is damaged at offset %d (checksum mismatch)", logName(p.file), p.off)
	}
	return v, nil
}

// committed records that a batch's pointers committed (added) and that the pointers of
// dropped tables are gone (freed); with synced commits, files left with no live bytes are
// deleted (else the next Open deletes them).
func (l *segLog) committed(added, freed []logPtr) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, p := range added {
		l.live[p.file] += p.len
	}
	for _, p := range freed {
		l.live[p.file] -= p.len
		if l.live[p.file] > 0 || l.w != nil && p.file == l.num || !l.removeNow {
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
	if err := l.finish(); err != nil {
		return err
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
		name := l.fs.PathJoin(dst, logName(n))
		if err := vfs.LinkOrCopy(l.fs, l.fs.PathJoin(l.dir, logName(n)), name); err != nil {
			return err
		}
		if err := syncFile(l.fs, name); err != nil { // a copy (not a link) is not synced yet
			return err
		}
	}
	// The files' bytes are synced (above, or when written); their names in the copy must be
	// durable too.
	return syncDir(l.fs, dst)
}

// close closes the log's files.
func (l *segLog) close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	err := l.finish()
	for n, f := range l.readers {
		f.Close()
		delete(l.readers, n)
	}
	return err
}

func syncFile(fs vfs.FS, name string) error {
	f, err := fs.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

func syncDir(fs vfs.FS, dir string) error {
	d, err := fs.OpenDir(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
