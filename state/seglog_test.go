package state

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// segValue is a deterministic segment of n bytes.
func segValue(seq uint64, n int) []byte {
	v := make([]byte, n)
	for i := range v {
		v[i] = byte(seq*31 + uint64(i)*7)
	}
	return v
}

// wantSegments checks that table holds exactly segments seqs (in order), read both by a
// scan and one by one.
func wantSegments(t *testing.T, s *Store, table uint64, want map[uint64]int) {
	t.Helper()
	var got []uint64
	err := s.Segments(table, func(seq uint64, v []byte) error {
		if !bytes.Equal(v, segValue(seq, want[seq])) {
			return fmt.Errorf("segment %d: %d bytes, not the ones written", seq, len(v))
		}
		got = append(got, seq)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("table %d: segments %v, want %d of them", table, got, len(want))
	}
	for i := 1; i < len(got); i++ {
		if got[i] <= got[i-1] {
			t.Fatalf("table %d: segments out of order: %v", table, got)
		}
	}
	for seq, n := range want {
		v, err := s.Segment(table, seq)
		if err != nil || !bytes.Equal(v, segValue(seq, n)) {
			t.Fatalf("Segment(%d, %d): %d bytes, %v", table, seq, len(v), err)
		}
	}
}

func logFiles(t *testing.T, dir string) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, logDir, "*.log"))
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// TestSegmentLog: large segments go to the log and small ones to Pebble; a scan merges
// them in sequence order; what a discarded batch appended is never read and is deleted with
// the file at the next open once nothing references it; dropping the tables frees the log.
func TestSegmentLog(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, true, 64<<20)
	if err != nil {
		t.Fatal(err)
	}
	want := map[uint64]map[uint64]int{1: {}, 2: {}}
	b := s.NewBatch()
	for seq := uint64(1); seq <= 12; seq++ {
		table := 1 + seq%2
		n := 100
		if seq%3 != 0 {
			n = logMin + int(seq)*1000
		}
		b.PutSegment(table, seq, segValue(seq, n))
		want[table][seq] = n
	}
	if err := s.Commit(b); err != nil {
		t.Fatal(err)
	}
	discarded := s.NewBatch()
	discarded.PutSegment(1, 13, segValue(13, logMin))
	discarded.Discard()
	if len(logFiles(t, dir)) != 1 {
		t.Fatalf("log files %v, want one", logFiles(t, dir))
	}
	for table, segs := range want {
		wantSegments(t, s, table, segs)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s, err = Open(dir, true, 64<<20)
	if err != nil {
		t.Fatal(err)
	}
	for table, segs := range want {
		wantSegments(t, s, table, segs)
	}
	// A new open writes a new file; dropping table 1 frees nothing while table 2 uses the
	// first file.
	b = s.NewBatch()
	b.PutSegment(1, 14, segValue(14, logMin))
	want[1][14] = logMin
	if err := s.Commit(b); err != nil {
		t.Fatal(err)
	}
	if files := logFiles(t, dir); len(files) != 2 {
		t.Fatalf("log files after reopen: %v, want two", files)
	}
	b = s.NewBatch()
	b.DeleteTable(1)
	if err := s.Commit(b); err != nil {
		t.Fatal(err)
	}
	wantSegments(t, s, 1, nil)
	wantSegments(t, s, 2, want[2])
	if files := logFiles(t, dir); len(files) != 2 {
		t.Fatalf("log files: %v, want two (the first one table 2 uses, the one written to)", files)
	}
	b = s.NewBatch()
	b.DeleteTable(2)
	if err := s.Commit(b); err != nil {
		t.Fatal(err)
	}
	if files := logFiles(t, dir); len(files) != 1 || !strings.HasSuffix(files[0], logName(2)) {
		t.Fatalf("log files with no table left: %v, want only the one written to", files)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(dir, true, 64<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if files := logFiles(t, dir); len(files) != 0 {
		t.Fatalf("log files after reopening with no table: %v, want none", files)
	}
}

// TestSegmentLogDamaged: a log segment whose bytes changed is reported, not returned.
func TestSegmentLogDamaged(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, true, 64<<20)
	if err != nil {
		t.Fatal(err)
	}
	b := s.NewBatch()
	b.PutSegment(1, 1, segValue(1, logMin))
	if err := s.Commit(b); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	name := logFiles(t, dir)[0]
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	data[100] ^= 1
	if err := os.WriteFile(name, data, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err = Open(dir, true, 64<<20)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Segment(1, 1); err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Fatalf("Segment of a damaged log: %v, want a damage error", err)
	}
	if err := s.Segments(1, func(uint64, []byte) error { return nil }); err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Fatalf("Segments of a damaged log: %v, want a damage error", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// A file cut short.
	if err := os.WriteFile(name, data[:len(data)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	s, err = Open(dir, true, 64<<20)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Segment(1, 1); err == nil || !strings.Contains(err.Error(), "damaged") || !strings.Contains(err.Error(), "truncated") {
		t.Fatalf("Segment of a truncated log: %v, want a damage error", err)
	}
	// A file gone.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(name); err != nil {
		t.Fatal(err)
	}
	s, err = Open(dir, true, 64<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Segment(1, 1); err == nil || !strings.Contains(err.Error(), "missing") || !strings.Contains(err.Error(), "damaged") {
		t.Fatalf("Segment of a missing log file: %v, want a damage error", err)
	}
}

// TestSegmentLogBackup: a copy (BACKUP) of a store on disk or in memory holds the logged
// segments, and the original goes on writing without changing the copy.
func TestSegmentLogBackup(t *testing.T) {
	for _, path := range []string{"", filepath.Join(t.TempDir(), "db")} {
		s, err := Open(path, true, 64<<20)
		if err != nil {
			t.Fatal(err)
		}
		want := map[uint64]int{1: logMin, 2: 10, 3: logMin + 5}
		b := s.NewBatch()
		for seq, n := range want {
			b.PutSegment(7, seq, segValue(seq, n))
		}
		if err := s.Commit(b); err != nil {
			t.Fatal(err)
		}
		backup := filepath.Join(t.TempDir(), "backup")
		if err := s.Checkpoint(backup); err != nil {
			t.Fatal(err)
		}
		b = s.NewBatch()
		b.PutSegment(7, 4, segValue(4, logMin))
		if err := s.Commit(b); err != nil {
			t.Fatal(err)
		}
		wantSegments(t, s, 7, map[uint64]int{1: logMin, 2: 10, 3: logMin + 5, 4: logMin})
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		c, err := Open(backup, true, 64<<20)
		if err != nil {
			t.Fatal(err)
		}
		wantSegments(t, c, 7, want)
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSegmentLogDropSyncOffCrash: with sync off, DROP TABLE's commit is not durable when it
// returns, so its log file must outlive it: after a crash that loses the DROP, the table's
// segments still read; the file goes at an Open that finds it unreferenced.
func TestSegmentLogDropSyncOffCrash(t *testing.T) {
	fs := vfs.NewCrashableMem()
	open := func(fs vfs.FS) *Store {
		t.Helper()
		if err := fs.MkdirAll("db", 0o755); err != nil {
			t.Fatal(err)
		}
		return mustOpen(t, fs, "db", false)
	}
	s := open(fs)
	b := s.NewBatch()
	b.PutSegment(1, 1, segValue(1, logMin+10))
	if err := s.Commit(b); err != nil {
		t.Fatal(err)
	}
	if err := s.db.LogData(nil, pebble.Sync); err != nil { // the table is durable
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = open(fs) // the file is no longer the one written to
	b = s.NewBatch()
	b.DeleteTable(1) // not synced
	if err := s.Commit(b); err != nil {
		t.Fatal(err)
	}
	// Whatever the log did to its directory is durable (a process crash keeps an unlink,
	// and a journaling file system commits it within seconds); the DROP's WAL record is not.
	if err := syncDir(fs, fs.PathJoin("db", logDir)); err != nil {
		t.Fatal(err)
	}
	crashed := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0})
	c := open(crashed)
	wantSegments(t, c, 1, map[uint64]int{1: logMin + 10})
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	// Without a crash the DROP stands, and the next Open deletes the file.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = open(fs)
	defer s.Close()
	wantSegments(t, s, 1, nil)
	if names, err := fs.List(fs.PathJoin("db", logDir)); err != nil || len(names) != 0 {
		t.Fatalf("log files after reopening with the table dropped: %v %v", names, err)
	}
}

// stmtKey is the metadata key statement i of the crash tests writes beside its segment.
func stmtKey(i int) string { return fmt.Sprintf("stmt/%04d", i) }

// commitStmt commits statement i: a logged segment (seq i+1 of table 1) and a metadata key
// in one batch, or, for every third, a metadata key alone (a synced Pebble commit).
func commitStmt(s *Store, i int) error {
	b := s.NewBatch()
	if i%3 != 2 {
		b.PutSegment(1, uint64(i+1), segValue(uint64(i+1), logMin+i))
	}
	b.PutMeta(stmtKey(i), []byte{byte(i)})
	return s.Commit(b)
}

// stmtsPresent returns how many statements the store holds (a prefix of 0, 1, ...), failing
// if one is there in part (its key without its segment, or the reverse) or after a gap.
func stmtsPresent(t *testing.T, s *Store, n int) int {
	t.Helper()
	got := 0
	for i := 0; i < n; i++ {
		_, hasKey, err := s.Meta(stmtKey(i))
		if err != nil {
			t.Fatal(err)
		}
		hasSeg := false
		if i%3 != 2 {
			v, err := s.Segment(1, uint64(i+1))
			if err == nil && !bytes.Equal(v, segValue(uint64(i+1), logMin+i)) {
				t.Fatalf("statement %d: its segment holds other bytes", i)
			}
			hasSeg = err == nil
		} else {
			hasSeg = hasKey
		}
		if hasKey != hasSeg {
			t.Fatalf("statement %d applied in part: key %v, segment %v", i, hasKey, hasSeg)
		}
		if hasKey && got < i {
			t.Fatalf("statement %d applied, but not statement %d before it", i, got)
		}
		if hasKey {
			got++
		}
	}
	return got
}

// mustOpen opens the store at path on fs, with syncs on or off.
func mustOpen(t *testing.T, fs vfs.FS, path string, syncWrites bool) *Store {
	t.Helper()
	s, err := openOn(fs, path, syncWrites, 64<<20)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// crash returns fs's files as a crash now would leave them (what was synced), and closes s.
func crash(t *testing.T, fs *vfs.MemFS, s *Store) *vfs.MemFS {
	t.Helper()
	crashed := fs.CrashClone(vfs.CrashCloneCfg{})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return crashed
}

// TestLogCommitReplayed: a statement with logged segments is durable once Commit returns
// although Pebble's WAL is not synced for it: after a crash that loses everything not synced,
// Pebble alone lacks the statements, and Open applies them again from the log.
func TestLogCommitReplayed(t *testing.T) {
	fs := vfs.NewCrashableMem()
	s := mustOpen(t, fs, "db", true)
	const n = 8
	for i := range n {
		if err := commitStmt(s, i); err != nil {
			t.Fatal(err)
		}
	}
	crashed, raw := fs.CrashClone(vfs.CrashCloneCfg{}), fs.CrashClone(vfs.CrashCloneCfg{})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// Pebble's own state after the crash: the last statements (after the last synced commit,
	// statement 5) are not in it.
	db, err := pebble.Open("db", &pebble.Options{FS: raw, Logger: quietLogger{}})
	if err != nil {
		t.Fatal(err)
	}
	if _, closer, err := db.Get([]byte(prefixMeta + stmtKey(n-1))); err == nil {
		closer.Close()
		t.Fatalf("Pebble kept statement %d through the crash: the test does not test the replay", n-1)
	}
	db.Close()
	s = mustOpen(t, crashed, "db", true)
	if got := stmtsPresent(t, s, n); got != n {
		t.Fatalf("%d of %d committed statements after the crash", got, n)
	}
	// The replayed state is durable, and the store goes on from it.
	if err := commitStmt(s, n); err != nil {
		t.Fatal(err)
	}
	again := crash(t, crashed, s)
	s = mustOpen(t, again, "db", true)
	defer s.Close()
	if got := stmtsPresent(t, s, n+1); got != n+1 {
		t.Fatalf("%d of %d committed statements after the second crash", got, n+1)
	}
}

// TestLogCommitCrashAnywhere crashes (a crash clone of the files, keeping a random share of
// what was not synced) at random instants while statements commit, and reopens: every
// statement that returned is there, whole, and the one in flight is there whole or not at
// all. With sync off, statements that returned may be lost, but only the last ones: what is
// there is still a prefix of them, each whole.
func TestLogCommitCrashAnywhere(t *testing.T) {
	for seed := range int64(100) {
		syncOn := seed%2 == 0
		rng := rand.New(rand.NewPCG(uint64(seed), 7))
		fs := vfs.NewCrashableMem()
		s, err := openOn(fs, "db", syncOn, 64<<20)
		if err != nil {
			t.Fatal(err)
		}
		const n = 30
		var returned atomic.Int64
		done := make(chan error, 1)
		go func() {
			for i := range n {
				if err := commitStmt(s, i); err != nil {
					done <- err
					return
				}
				returned.Add(1)
			}
			done <- nil
		}()
		for returned.Load() < int64(rng.IntN(n)) {
			runtime.Gosched()
		}
		for until := time.Now().Add(time.Duration(rng.IntN(200)) * time.Microsecond); time.Now().Before(until); {
		}
		before := int(returned.Load())
		crashed := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: rng.IntN(101), RNG: rng})
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		s, err = openOn(crashed, "db", true, 64<<20)
		if err != nil {
			t.Fatalf("seed %d: open after the crash: %v", seed, err)
		}
		if got := stmtsPresent(t, s, n); got < before && syncOn {
			t.Fatalf("seed %d: %d statements after the crash, but %d had returned", seed, got, before)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestLogCommitTornStatement: a crash after a statement's batch reached the log but before
// all of its segment did (the log not yet synced; the statement had not returned): Open does
// not apply it, and applies the ones before it.
func TestLogCommitTornStatement(t *testing.T) {
	fs := vfs.NewCrashableMem()
	s := mustOpen(t, fs, "db", true)
	const n = 5 // statements 3 and 4 are in the log only (2 is a synced Pebble commit)
	for i := range n {
		if err := commitStmt(s, i); err != nil {
			t.Fatal(err)
		}
	}
	v, _, err := s.get(segmentKey(prefixLogged, 1, n))
	if err != nil {
		t.Fatal(err)
	}
	p, err := decodeLogPtr(v)
	if err != nil {
		t.Fatal(err)
	}
	crashed := crash(t, fs, s)
	f, err := crashed.OpenReadWrite(crashed.PathJoin("db", logDir, logName(p.file)), vfs.WriteCategoryUnspecified)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(make([]byte, 4096), p.off+p.len/2); err != nil { // a block never written
		t.Fatal(err)
	}
	f.Close()
	s = mustOpen(t, crashed, "db", true)
	defer s.Close()
	if got := stmtsPresent(t, s, n); got != n-1 {
		t.Fatalf("%d statements after the crash, want the %d before the torn one", got, n-1)
	}
}

// TestLogCommitFileNumberReused: the place of the last statement Pebble holds (g/commit)
// may name a log file that is gone (its table dropped, the file deleted); a later Open must
// not create a new file under that number, or a crash that loses the new file's statements
// from Pebble has the replay look for them at the old place and skip them.
func TestLogCommitFileNumberReused(t *testing.T) {
	fs := vfs.NewCrashableMem()
	s := mustOpen(t, fs, "db", true)
	b := s.NewBatch()
	b.PutSegment(1, 1, segValue(1, logMin+10)) // g/commit: its frame in file 1
	if err := s.Commit(b); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = mustOpen(t, fs, "db", true)
	b = s.NewBatch()
	b.DeleteTable(1) // a synced commit: file 1 is deleted now, g/commit still names it
	if err := s.Commit(b); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = mustOpen(t, fs, "db", true)
	b = s.NewBatch()
	b.PutSegment(2, 2, segValue(2, logMin+10))
	b.PutMeta("after", []byte{1})
	if err := s.Commit(b); err != nil { // returned: durable
		t.Fatal(err)
	}
	crashed := crash(t, fs, s) // Pebble loses the unsynced batch
	c := mustOpen(t, crashed, "db", true)
	defer c.Close()
	if _, ok, err := c.Meta("after"); err != nil || !ok {
		t.Fatalf("a statement that returned is lost after the crash (%v)", err)
	}
	wantSegments(t, c, 2, map[uint64]int{2: logMin + 10})
	wantSegments(t, c, 1, nil)
}

// TestLogCommitBackupFileNumber: a BACKUP holds the place of the last statement (g/commit)
// but only the log files with live segments; when that place's file is not among them, the
// backup, once opened, must not write a new file under its number (see
// TestLogCommitFileNumberReused): a statement that returned there survives a crash.
func TestLogCommitBackupFileNumber(t *testing.T) {
	fs := vfs.NewCrashableMem()
	s := mustOpen(t, fs, "db", true)
	b := s.NewBatch()
	b.PutSegment(1, 1, segValue(1, logMin+10))
	if err := s.Commit(b); err != nil {
		t.Fatal(err)
	}
	b = s.NewBatch()
	b.DeleteTable(1) // file 1 is the one written to: it stays, with no live bytes
	if err := s.Commit(b); err != nil {
		t.Fatal(err)
	}
	if err := s.Checkpoint("backup"); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	c := mustOpen(t, fs, "backup", true)
	b = c.NewBatch()
	b.PutSegment(2, 2, segValue(2, logMin+10))
	b.PutMeta("after", []byte{1})
	if err := c.Commit(b); err != nil {
		t.Fatal(err)
	}
	crashed := crash(t, fs, c)
	c = mustOpen(t, crashed, "backup", true)
	defer c.Close()
	if _, ok, err := c.Meta("after"); err != nil || !ok {
		t.Fatalf("a statement that returned in the opened backup is lost after a crash (%v)", err)
	}
	wantSegments(t, c, 2, map[uint64]int{2: logMin + 10})
}

// TestLogCommitSyncOffKeepsOrder: with sync off a crash may lose the last statements, but
// only a suffix of them: a statement committed to Pebble without a sync (a small INSERT,
// CREATE TABLE) is not lost while a later one, replayed from the segment log, is kept, which
// would leave, say, a table's rows without its catalog entry.
func TestLogCommitSyncOffKeepsOrder(t *testing.T) {
	fs := vfs.NewCrashableMem()
	s := mustOpen(t, fs, "db", false)
	const n = 6 // statements 2 and 5 are Pebble commits without a sync
	for i := range n {
		if err := commitStmt(s, i); err != nil {
			t.Fatal(err)
		}
	}
	crashed := crash(t, fs, s)
	s = mustOpen(t, crashed, "db", false)
	defer s.Close()
	// Statements 3 and 4 are in the synced log: kept, and so everything before them.
	if got := stmtsPresent(t, s, n); got != n-1 {
		t.Fatalf("%d of %d statements after the crash, want the %d up to the last in the log", got, n, n-1)
	}
}

// failSyncFS fails Sync of the segment log's files while fail is set.
type failSyncFS struct {
	vfs.FS
	fail *atomic.Bool
}

func (fs failSyncFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.Create(name, c)
	if err != nil || !strings.Contains(name, logDir) {
		return f, err
	}
	return failSyncFile{f, fs.fail}, nil
}

type failSyncFile struct {
	vfs.File
	fail *atomic.Bool
}

func (f failSyncFile) Sync() error {
	if f.fail.Load() {
		return errors.New("injected sync failure")
	}
	return f.File.Sync()
}

// TestLogCommitFailedSync: a statement whose log sync failed returned an error; whether a
// later Open applies it or not, it must not be applied after (over) the statements that
// committed after it returned.
func TestLogCommitFailedSync(t *testing.T) {
	var fail atomic.Bool
	fs := failSyncFS{vfs.NewMem(), &fail}
	s := mustOpen(t, fs, "db", true)
	stmt := func(seq uint64, v string) error {
		b := s.NewBatch()
		if seq > 0 {
			b.PutSegment(1, seq, segValue(seq, logMin))
		}
		b.PutMeta("k", []byte(v))
		return s.Commit(b)
	}
	if err := stmt(1, "a"); err != nil {
		t.Fatal(err)
	}
	fail.Store(true)
	if err := stmt(2, "b"); err == nil {
		t.Fatal("a commit whose log sync failed returned no error")
	}
	fail.Store(false)
	if err := stmt(0, "c"); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = mustOpen(t, fs, "db", true)
	defer s.Close()
	if v, _, err := s.Meta("k"); err != nil || string(v) != "c" {
		t.Fatalf("after a reopen k = %q (%v), want the last committed value \"c\"", v, err)
	}
}

// scribbleFS's files change the bytes passed to Write after writing them, as vfs.File
// allows (Pebble's in-memory FS does so in race and invariants builds).
type scribbleFS struct{ vfs.FS }

func (fs scribbleFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.Create(name, c)
	if err != nil {
		return f, err
	}
	return scribbleFile{f}, nil
}

type scribbleFile struct{ vfs.File }

func (f scribbleFile) Write(p []byte) (int, error) {
	n, err := f.File.Write(p)
	for i := range p {
		p[i] ^= 0xff
	}
	return n, err
}

// TestLogCommitWriteMayChangeBuffer: the log does not hand vfs.File.Write a buffer it uses
// afterwards (the statement's batch, committed to Pebble once written to the log): with a
// file that changes what it was given, the statement still commits and reads back, before
// and after a reopen.
func TestLogCommitWriteMayChangeBuffer(t *testing.T) {
	fs := scribbleFS{vfs.NewMem()}
	s := mustOpen(t, fs, "db", true)
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("commit: %v", r)
			}
		}()
		b := s.NewBatch()
		b.PutSegment(1, 1, segValue(1, logMin+10))
		b.PutMeta("k", []byte("v"))
		if err := s.Commit(b); err != nil {
			t.Fatal(err)
		}
	}()
	for range 2 {
		wantSegments(t, s, 1, map[uint64]int{1: logMin + 10})
		if v, _, err := s.Meta("k"); err != nil || string(v) != "v" {
			t.Fatalf("k = %q (%v), want \"v\"", v, err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		s = mustOpen(t, fs, "db", true)
	}
	s.Close()
}
