// Package state is streamsql's durable store: one Pebble database under the database path
// holding the catalog, the rows of every table and the engine's metadata, under disjoint key
// prefixes; large table segments are kept in a segment log beside it (seglog.go), each
// referenced by a pointer in Pebble.
//
// Invariant: every write goes through one Pebble batch per statement, made durable before
// Commit returns unless the database was opened with sync off, so that a crash applies all
// of a statement or none of it: a batch with no segments in the segment log is committed
// with a WAL sync; one with segments there is written into the log after them and the log
// synced (whatever the sync setting), then committed to Pebble without a sync, and Open
// applies it again from the log if Pebble lost it. So a committed pointer never outlives its
// bytes, and a large append costs one sync, not two.
package state

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// Key prefixes. Each prefix is followed by big-endian ids so that keys sort by id.
const (
	prefixCatalog = "c/" // c/<seq>: a catalog entry
	prefixSegment = "s/" // s/<table id><segment seq>: a segment of a table's rows
	prefixLogged  = "l/" // l/<table id><segment seq>: where a segment is in the segment log (seglog.go)
	prefixMeta    = "m/" // m/<name>: engine metadata
	// keyLogCommit (seglog.go), under "g/", is where the log's last statement is.
)

// Store is the Pebble database of one streamsql database.
type Store struct {
	db   *pebble.DB
	sync *pebble.WriteOptions
	mem  bool // in memory: Checkpoint copies keys to disk
	log  *segLog
	// commitMu orders commits: the statements in the log are in Pebble's commit order.
	commitMu sync.Mutex
	// unsynced (commitMu held): a batch without logged segments was committed to Pebble
	// without a sync (sync off) since Pebble's WAL was last synced. The next log commit
	// syncs the WAL first: Open applies a statement from the log whatever Pebble lost, so
	// an earlier statement only Pebble holds must not be lost while it is kept.
	unsynced bool
}

// Open opens (creating if needed) the store at path; path "" opens an in-memory store. A
// path that another process (or another DB in this process) holds fails with an error that
// says so. memory is what the store may use: it sizes Pebble's block cache and memtables.
func Open(path string, syncWrites bool, memory int64) (*Store, error) {
	if path == "" {
		s, err := openOn(vfs.NewMem(), "mem", syncWrites, memory)
		if s != nil {
			s.mem = true
		}
		return s, err
	}
	if err := os.MkdirAll(path, 0o755); err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return openOn(vfs.Default, path, syncWrites, memory)
}

// openOn opens the store at path on fs.
func openOn(fs vfs.FS, path string, syncWrites bool, memory int64) (*Store, error) {
	opts := &pebble.Options{
		FS:                 fs,
		FormatMajorVersion: pebble.FormatNewest,
		Cache:              pebble.NewCache(min(256<<20, memory/4)),
		MemTableSize:       uint64(min(32<<20, max(4<<20, memory/32))),
		Logger:             quietLogger{},
	}
	// Segments are columnar and mostly rewritten by compactions once: the newest levels
	// skip compression, which costs CPU on every flush; the bottom keeps Pebble's default.
	for i := 0; i < 3; i++ {
		opts.Levels[i].Compression = func() *sstable.CompressionProfile { return sstable.NoCompression }
	}
	// Spilled state (spill.go) is read by point lookups, most of them for keys not stored
	// yet: bloom filters answer those without reading blocks.
	for i := range opts.Levels {
		opts.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
	}
	defer opts.Cache.Unref()
	db, err := pebble.Open(path, opts)
	if err != nil {
		// Another process's lock is EWOULDBLOCK from flock; this process's, Pebble's own error.
		if strings.Contains(err.Error(), "lock") || errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("open %s: the database is in use by another process or DB (file lock held): %w", path, err)
		}
		if strings.Contains(err.Error(), "replaying WAL") {
			return nil, fmt.Errorf("open %s: the write-ahead log is damaged (a torn or corrupted write, not a crash Pebble can recover from); restore a BACKUP: %w", path, err)
		}
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	wo := pebble.Sync
	if !syncWrites {
		wo = pebble.NoSync
	}
	s := &Store{db: db, sync: wo}
	from, _, err := replayLog(fs, path, db)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	s.log, err = openLog(fs, path, from.file, func(fn func(p logPtr) error) error {
		return s.scan([]byte(prefixLogged), func(_, v []byte) error {
			p, err := decodeLogPtr(v)
			if err != nil {
				return err
			}
			return fn(p)
		})
	})
	if err == nil && s.log.garbage() {
		// Delete log files no pointer references only once the state that says so is
		// durable (with sync off, a crash may have left it in an unsynced WAL).
		if err = db.Flush(); err == nil {
			err = s.log.removeGarbage()
		}
	}
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return s, nil
}

// Close closes the store.
func (s *Store) Close() error {
	err := s.log.close()
	if cerr := s.db.Close(); err == nil {
		err = cerr
	}
	return err
}

// Checkpoint writes a consistent copy of the store into dir: Pebble's checkpoint (hard
// links where possible), or, for an in-memory store, a new store on disk holding every key.
func (s *Store) Checkpoint(dir string) error {
	// No commit between Pebble's checkpoint and the linking of the log files: a statement
	// written to a linked file after it would be replayed into the copy.
	s.commitMu.Lock()
	defer s.commitMu.Unlock()
	if s.mem {
		return s.copyTo(dir)
	}
	if err := s.db.Flush(); err != nil {
		return err
	}
	if err := s.db.Checkpoint(dir); err != nil {
		return err
	}
	// The checkpoint's pointers reference only bytes appended before it.
	if err := s.log.copyTo(dir); err != nil {
		os.RemoveAll(dir) // no half backup left behind
		return err
	}
	return nil
}

// copyTo writes every key of a point-in-time view of the store into a new store at dir.
func (s *Store) copyTo(dir string) error {
	dst, err := Open(dir, true, 64<<20)
	if err != nil {
		return err
	}
	it, err := s.db.NewIter(nil)
	if err != nil {
		dst.Close()
		return err
	}
	b := dst.NewBatch()
	for it.First(); it.Valid() && err == nil; it.Next() {
		var v []byte
		if v, err = it.ValueAndErr(); err != nil {
			break
		}
		if k := it.Key(); string(k) == keyLogCommit {
			// A place in this store's log, not the copy's.
		} else if bytes.HasPrefix(k, []byte(prefixLogged)) {
			// A logged segment is copied as a segment (into the copy's own log).
			var p logPtr
			if p, err = decodeLogPtr(v); err == nil {
				v, err = s.log.read(p)
			}
			k = k[len(prefixLogged):]
			b.PutSegment(binary.BigEndian.Uint64(k), binary.BigEndian.Uint64(k[8:]), v)
		} else {
			_ = b.b.Set(k, v, nil)
		}
		if b.b.Len() > 4<<20 {
			err = dst.Commit(b)
			b = dst.NewBatch()
		}
	}
	if err == nil {
		err = it.Error()
	}
	if err == nil {
		err = dst.Commit(b)
	} else {
		b.Discard()
	}
	it.Close()
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.RemoveAll(dir) // no half copy left behind
	}
	return err
}

// Batch collects the writes of one statement.
type Batch struct {
	s *Store
	b *pebble.Batch
	// err is a failed write to the segment log, which Commit returns; logged and freed are
	// the log bytes the batch's pointers reference and those of the tables it drops.
	err           error
	logged, freed []logPtr
}

// NewBatch starts a batch.
func (s *Store) NewBatch() *Batch { return &Batch{s: s, b: s.db.NewBatch()} }

// Commit applies the batch atomically, and durably unless sync is off. A batch with
// segments in the segment log is written there after them and the log synced, whatever the
// sync setting (a pointer must never outlive its bytes), then committed to Pebble without a
// sync: the log has it if Pebble loses it in a crash (replayLog).
func (s *Store) Commit(b *Batch) error {
	defer b.b.Close()
	if b.err != nil {
		return b.err
	}
	if b.b.Empty() {
		return nil
	}
	s.commitMu.Lock()
	defer s.commitMu.Unlock()
	if len(b.logged) == 0 {
		if err := b.b.Commit(s.sync); err != nil {
			return err
		}
		s.unsynced = s.unsynced || s.sync != pebble.Sync
		s.log.committed(nil, b.freed, s.sync == pebble.Sync)
		return nil
	}
	if s.unsynced {
		if err := s.db.LogData(nil, pebble.Sync); err != nil {
			return err
		}
		s.unsynced = false
	}
	if written, err := s.log.commit(b.b); err != nil {
		if written != nil {
			// The failed statement's frame may be whole in the log (a failed sync): the
			// place is recorded as applied, so that Open does not apply the statement after
			// the ones that commit once this one returned.
			v := s.db.NewBatch()
			_ = v.Set([]byte(keyLogCommit), written.encode(), nil)
			if verr := v.Commit(pebble.Sync); verr != nil {
				err = errors.Join(err, verr)
			} else {
				s.unsynced = false
			}
			v.Close()
		}
		return err
	}
	if err := b.b.Commit(pebble.NoSync); err != nil {
		return fmt.Errorf("%w (the statement is in the segment log: the next Open may apply it)", err)
	}
	s.log.committed(b.logged, b.freed, false)
	return nil
}

// Discard drops an uncommitted batch.
func (b *Batch) Discard() { b.b.Close() }

// PutCatalog records catalog entry seq.
func (b *Batch) PutCatalog(seq uint64, v []byte) { _ = b.b.Set(catalogKey(seq), v, nil) }

// DeleteCatalog removes catalog entry seq.
func (b *Batch) DeleteCatalog(seq uint64) { _ = b.b.Delete(catalogKey(seq), nil) }

// PutSegment writes segment seq of table id: in Pebble, or, from logMin bytes, in the
// segment log (now) with a pointer in Pebble (at the commit).
func (b *Batch) PutSegment(table, seq uint64, v []byte) {
	if len(v) < logMin {
		_ = b.b.Set(segmentKey(prefixSegment, table, seq), v, nil)
		return
	}
	if b.err != nil {
		return
	}
	p, err := b.s.log.append(v)
	if err != nil {
		b.err = err
		return
	}
	b.logged = append(b.logged, p)
	_ = b.b.Set(segmentKey(prefixLogged, table, seq), p.encode(), nil)
}

// DeleteTable removes every segment of table id; the log files only it used are deleted
// once the batch commits.
func (b *Batch) DeleteTable(table uint64) {
	err := b.s.scan(tablePrefix(prefixLogged, table), func(_, v []byte) error {
		p, err := decodeLogPtr(v)
		b.freed = append(b.freed, p)
		return err
	})
	if err != nil && b.err == nil {
		b.err = err
	}
	for _, prefix := range []string{prefixSegment, prefixLogged} {
		_ = b.b.DeleteRange(segmentKey(prefix, table, 0), segmentKey(prefix, table+1, 0), nil)
	}
}

// PutMeta records a metadata value.
func (b *Batch) PutMeta(name string, v []byte) { _ = b.b.Set([]byte(prefixMeta+name), v, nil) }

// Catalog calls fn for every catalog entry in seq order.
func (s *Store) Catalog(fn func(seq uint64, v []byte) error) error {
	return s.scan([]byte(prefixCatalog), func(k, v []byte) error {
		return fn(binary.BigEndian.Uint64(k[len(prefixCatalog):]), v)
	})
}

// Segments calls fn for every segment of table id in seq order: those in Pebble and those
// in the segment log, merged.
func (s *Store) Segments(table uint64, fn func(seq uint64, v []byte) error) error {
	var inline, logged *pebble.Iterator
	for _, it := range []struct {
		it     **pebble.Iterator
		prefix string
	}{{&inline, prefixSegment}, {&logged, prefixLogged}} {
		p := tablePrefix(it.prefix, table)
		var err error
		if *it.it, err = s.db.NewIter(&pebble.IterOptions{LowerBound: p, UpperBound: prefixEnd(p)}); err != nil {
			if inline != nil {
				inline.Close()
			}
			return err
		}
	}
	defer inline.Close()
	defer logged.Close()
	seqOf := func(it *pebble.Iterator) uint64 { return binary.BigEndian.Uint64(it.Key()[len(prefixSegment)+8:]) }
	inline.First()
	logged.First()
	for inline.Valid() || logged.Valid() {
		it := inline
		if !inline.Valid() || logged.Valid() && seqOf(logged) < seqOf(inline) {
			it = logged
		}
		seq := seqOf(it)
		v, err := it.ValueAndErr()
		if err == nil && it == logged {
			v, err = s.readLogged(v)
		}
		if err != nil {
			return fmt.Errorf("segment %d/%d: %w", table, seq, err)
		}
		if err := fn(seq, v); err != nil {
			return err
		}
		it.Next()
	}
	if err := inline.Error(); err != nil {
		return err
	}
	return logged.Error()
}

// readLogged reads the segment a pointer value points to.
func (s *Store) readLogged(ptr []byte) ([]byte, error) {
	p, err := decodeLogPtr(ptr)
	if err != nil {
		return nil, err
	}
	return s.log.read(p)
}

// Meta reads a metadata value; ok is false when absent.
func (s *Store) Meta(name string) (v []byte, ok bool, err error) {
	return s.get([]byte(prefixMeta + name))
}

// get reads a key's value (a copy); ok is false when absent.
func (s *Store) get(key []byte) (v []byte, ok bool, err error) {
	val, closer, err := s.db.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	defer closer.Close()
	return bytes.Clone(val), true, nil
}

// MetaPrefix calls fn, in key order, for every metadata entry whose name starts with
// prefix (name without the prefix).
func (s *Store) MetaPrefix(prefix string, fn func(name string, v []byte) error) error {
	p := []byte(prefixMeta + prefix)
	return s.scan(p, func(k, v []byte) error { return fn(string(k[len(p):]), v) })
}

func (s *Store) scan(prefix []byte, fn func(k, v []byte) error) error {
	upper := append(bytes.Clone(prefix), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff)
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: upper})
	if err != nil {
		return err
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		v, err := it.ValueAndErr()
		if err != nil {
			return err
		}
		if err := fn(it.Key(), v); err != nil {
			return err
		}
	}
	return it.Error()
}

func catalogKey(seq uint64) []byte {
	return binary.BigEndian.AppendUint64([]byte(prefixCatalog), seq)
}

// segmentKey is the key of segment seq of table id under prefix (prefixSegment or
// prefixLogged).
func segmentKey(prefix string, table, seq uint64) []byte {
	return binary.BigEndian.AppendUint64(tablePrefix(prefix, table), seq)
}

func tablePrefix(prefix string, table uint64) []byte {
	return binary.BigEndian.AppendUint64([]byte(prefix), table)
}

type quietLogger struct{}

func (quietLogger) Infof(string, ...any)  {}
func (quietLogger) Errorf(string, ...any) {}
func (quietLogger) Fatalf(format string, args ...any) {
	panic(fmt.Sprintf(format, args...))
}

// Sequence numbers everything the engine persists in acceptance order — catalog entries and
// table segments share it — so that a replay can interleave tables exactly as their rows
// were accepted. It is rebuilt at Open from the largest number stored.
type Sequence struct{ next uint64 }

// Next returns a new sequence number.
func (s *Sequence) Next() uint64 {
	if s.next == 0 {
		s.next = 1
	}
	n := s.next
	s.next++
	return n
}

// Observe records a stored number so that Next stays above it.
func (s *Sequence) Observe(n uint64) {
	if n >= s.next {
		s.next = n + 1
	}
}

// Segment reads segment seq of table id.
func (s *Store) Segment(table, seq uint64) ([]byte, error) {
	v, err := func() ([]byte, error) {
		if ptr, ok, err := s.get(segmentKey(prefixLogged, table, seq)); ok || err != nil {
			if err != nil {
				return nil, err
			}
			return s.readLogged(ptr)
		}
		v, ok, err := s.get(segmentKey(prefixSegment, table, seq))
		if err == nil && !ok {
			err = pebble.ErrNotFound
		}
		return v, err
	}()
	if err != nil {
		return nil, fmt.Errorf("segment %d/%d: %w", table, seq, err)
	}
	return v, nil
}

// Last returns the largest number handed out or observed (0 before any).
func (s *Sequence) Last() uint64 {
	if s.next == 0 {
		return 0
	}
	return s.next - 1
}

// DeleteMeta deletes one metadata entry.
func (b *Batch) DeleteMeta(name string) { _ = b.b.Delete([]byte(prefixMeta+name), nil) }

// DeleteMetaPrefix deletes every metadata entry whose name starts with prefix.
func (b *Batch) DeleteMetaPrefix(prefix string) {
	start := []byte(prefixMeta + prefix)
	end := append(bytes.Clone(start), 0xff)
	_ = b.b.DeleteRange(start, end, nil)
}
