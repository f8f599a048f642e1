package state

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/cockroachdb/pebble/v2"
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

// segLog is the segment log: append-only files of frames (see frame), holding table
// segments, each referenced by one pointer in Pebble, and the Pebble batches of the
// statements that wrote segments (Store.Commit).
//
// Invariants: a file is only appended to by the process that created it (Open starts a new
// file, numbered past every file and pointer seen), so bytes no committed pointer references
// — a statement that failed or crashed before its commit — are never read; a statement's
// segments and then its batch are written and the log synced before the batch is committed
// to Pebble (without waiting for Pebble's WAL), so a committed pointer's bytes are durable,
// and a statement whose batch Pebble lost in a crash is applied again from the log at Open
// (replayLog); live counts, per file, the bytes committed pointers reference. A file with
// none is deleted only when that is durable: after a synced commit that freed them (DROP
// TABLE with sync on), or at Open once the store is flushed; never the file being written.
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

// Frames. Every write to a log file is a frame: a header of frameHeader bytes (frameMagic,
// the frame's kind, the payload's length and its CRC-32C, little-endian) and the payload. A
// file starts with a frameFile frame (no payload); a frameSegment frame holds a table
// segment, whose pointer gives its payload's place; a frameCommit frame holds the Pebble
// batch of a statement whose segments precede it. Files written before frames existed
// hold bare segments: their pointers still read them, and replayLog skips them (they do
// not start with a frameFile frame; every batch that points into them was synced).
const (
	frameMagic  = 0x47_4c_51_53 // "SQLG"
	frameHeader = 16

	frameFile    = 1
	frameSegment = 2
	frameCommit  = 3
)

// keyLogCommit holds where the frame of the last statement committed through the log is
// (a logPos): its batch sets it, so a replay starts after the last batch Pebble holds.
const keyLogCommit = "g/commit"

// logPos is a frame's place in the log.
type logPos struct {
	file uint64
	off  int64
}

func (p logPos) encode() []byte {
	return binary.AppendUvarint(binary.AppendUvarint(nil, p.file), uint64(p.off))
}

func decodeLogPos(b []byte) (logPos, error) {
	file, n := binary.Uvarint(b)
	if n <= 0 {
		return logPos{}, errors.New("damaged segment log position")
	}
	off, m := binary.Uvarint(b[n:])
	if m <= 0 || n+m != len(b) {
		return logPos{}, errors.New("damaged segment log position")
	}
	return logPos{file: file, off: int64(off)}, nil
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
// learns which files are live (removeGarbage deletes the others). used is the file of the
// place the store's last log commit records (keyLogCommit): that file may be gone, but a
// new file must not take its number, or replayLog would look for statements written to the
// new file at that place in it.
func openLog(fs vfs.FS, dir string, used uint64, pointers func(fn func(p logPtr) error) error) (*segLog, error) {
	l := &segLog{fs: fs, dir: fs.PathJoin(dir, logDir), num: used, readers: map[uint64]vfs.File{}, live: map[uint64]int64{}}
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

// append writes segment v at the end of the log and returns where it is.
func (l *segLog) append(v []byte) (logPtr, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.w == nil || l.off+frameHeader+int64(len(v)) > logFileMax && l.off > frameHeader {
		if err := l.roll(); err != nil {
			return logPtr{}, err
		}
	}
	return l.writeFrame(frameSegment, v)
}

// commit writes the Pebble batch b of a statement whose segments were appended, after them,
// and syncs the log: once it returns, the statement is durable, and b can be committed to
// Pebble without a sync of its own. b first records its frame's place (keyLogCommit). If
// it fails once the frame was written, written is where: the frame may be whole in the file
// although the statement failed.
func (l *segLog) commit(b *pebble.Batch) (written *logPos, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.w == nil {
		return nil, errors.New("segment log: the file holding the statement's segments failed")
	}
	pos := logPos{file: l.num, off: l.off}
	if err := b.Set([]byte(keyLogCommit), pos.encode(), nil); err != nil {
		return nil, err
	}
	// A copy: vfs.File.Write may change the bytes it is given (Pebble's in-memory FS does in
	// race builds), and b is committed to Pebble after.
	_, err = l.writeFrame(frameCommit, slices.Clone(b.Repr()))
	if err == nil {
		err = l.syncLocked()
	}
	if err != nil && l.w == nil {
		// A failed write or sync closed the file (nothing is written to it again), maybe
		// with the frame whole in it.
		return &pos, err
	}
	return nil, err
}

// writeFrame writes a frame of kind holding v at the end of the file written to (mu held,
// w open) and returns where v is.
func (l *segLog) writeFrame(kind byte, v []byte) (logPtr, error) {
	if int64(len(v)) > math.MaxUint32 {
		return logPtr{}, fmt.Errorf("segment log: a %d-byte write is too large", len(v))
	}
	p := logPtr{file: l.num, off: l.off + frameHeader, len: int64(len(v)), crc: crc32.Checksum(v, castagnoli)}
	var h [frameHeader]byte
	binary.LittleEndian.PutUint32(h[0:], frameMagic)
	h[4] = kind
	binary.LittleEndian.PutUint32(h[8:], uint32(len(v)))
	binary.LittleEndian.PutUint32(h[12:], p.crc)
	_, err := l.w.Write(h[:])
	if err == nil && len(v) > 0 {
		_, err = l.w.Write(v)
	}
	if err != nil {
		// The file's end is unknown now: the next append starts a new one.
		l.w.Close()
		l.w = nil
		return logPtr{}, fmt.Errorf("segment log: %w", err)
	}
	l.off += frameHeader + int64(len(v))
	l.unsynced = true
	return p, nil
}

// readFrame reads the frame at off of f, which is size bytes long: its kind and payload, ok
// false if there is none there, whole and intact (the end of the file, or a torn or damaged
// write).
func readFrame(f vfs.File, size, off int64) (kind byte, v []byte, ok bool) {
	var h [frameHeader]byte
	if _, err := f.ReadAt(h[:], off); err != nil || binary.LittleEndian.Uint32(h[0:]) != frameMagic {
		return 0, nil, false
	}
	n := int64(binary.LittleEndian.Uint32(h[8:]))
	if off+frameHeader+n > size {
		return 0, nil, false
	}
	v = make([]byte, n)
	if _, err := f.ReadAt(v, off+frameHeader); err != nil && n > 0 {
		return 0, nil, false
	}
	if crc32.Checksum(v, castagnoli) != binary.LittleEndian.Uint32(h[12:]) {
		return 0, nil, false
	}
	return h[4], v, true
}

// replayLog applies to db, in order, the statement batches the log holds after the last one
// db holds (keyLogCommit; a crash may have lost batches committed without waiting for
// Pebble's WAL), and flushes db if it applied any. In each file it reads frames until the
// first one that is not whole: a torn write ends the file (the process that wrote it
// crashed, so nothing follows it), and a statement whose frames are not all whole was never
// durable, so it is not applied. A file damaged before that (where it was synced) is left
// to the reads of its segments, which report it.
//
// It returns the place it started after (the zero logPos if db holds none).
func replayLog(fs vfs.FS, dir string, db *pebble.DB) (from logPos, applied int, err error) {
	found := false
	v, closer, err := db.Get([]byte(keyLogCommit))
	switch {
	case err == nil:
		from, err = decodeLogPos(v)
		closer.Close()
		if err != nil {
			return from, 0, err
		}
		found = true
	case !errors.Is(err, pebble.ErrNotFound):
		return from, 0, err
	}
	l := &segLog{fs: fs, dir: fs.PathJoin(dir, logDir)}
	nums, err := l.files()
	if errors.Is(err, os.ErrNotExist) {
		return from, 0, nil
	} else if err != nil {
		return from, 0, err
	}
	slices.Sort(nums)
	for _, num := range nums {
		if found && num < from.file {
			continue
		}
		n, err := replayFile(l, num, from, found, db)
		applied += n
		if err != nil {
			return from, applied, err
		}
	}
	if applied > 0 {
		err = db.Flush()
	}
	return from, applied, err
}

// replayFile applies the statement batches of log file num (see replayLog), those after
// from's if from is in it.
func replayFile(l *segLog, num uint64, from logPos, found bool, db *pebble.DB) (int, error) {
	f, err := l.fs.Open(l.fs.PathJoin(l.dir, logName(num)))
	if err != nil {
		return 0, fmt.Errorf("segment log: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("segment log file %s: %w", logName(num), err)
	}
	size := st.Size()
	if kind, _, ok := readFrame(f, size, 0); !ok || kind != frameFile {
		return 0, nil // a file from before frames, or one torn before its first frame
	}
	off := int64(frameHeader)
	if found && num == from.file {
		kind, v, ok := readFrame(f, size, from.off)
		if !ok || kind != frameCommit {
			// The file is damaged where it was synced: the reads of its segments say so.
			return 0, nil
		}
		off = from.off + frameHeader + int64(len(v))
	}
	n := 0
	for {
		kind, v, ok := readFrame(f, size, off)
		if !ok {
			return n, nil
		}
		off += frameHeader + int64(len(v))
		if kind != frameCommit {
			continue
		}
		b := db.NewBatch()
		if err := b.SetRepr(v); err != nil {
			return n, fmt.Errorf("segment log file %s: a damaged statement: %w", logName(num), err)
		}
		if err := db.Apply(b, pebble.NoSync); err != nil {
			return n, err
		}
		n++
	}
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
	_, err = l.writeFrame(frameFile, nil)
	return err
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
// dropped tables are gone (freed); if the commit is durable, files left with no live bytes
// are deleted (else the next Open deletes them).
func (l *segLog) committed(added, freed []logPtr, durable bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, p := range added {
		l.live[p.file] += p.len
	}
	for _, p := range freed {
		l.live[p.file] -= p.len
		if l.live[p.file] > 0 || l.w != nil && p.file == l.num || !durable {
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
