package state

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

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
		s, err := openOn(fs, "db", false, 64<<20)
		if err != nil {
			t.Fatal(err)
		}
		return s
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

// TestSegmentLogRecoversCommits: a batch with logged segments is durable through its commit
// record alone; a crash that loses Pebble's unsynced WAL tail loses none of it (Open applies
// the records), in order, after a restart too; a statement in flight (segments, no record),
// a record whose segment is damaged (and all after it) and an aborted record are not
// applied.
func TestSegmentLogRecoversCommits(t *testing.T) {
	fs := vfs.NewCrashableMem()
	open := func(fs vfs.FS) *Store {
		t.Helper()
		if err := fs.MkdirAll("db", 0o755); err != nil {
			t.Fatal(err)
		}
		s, err := openOn(fs, "db", true, 64<<20)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	commit := func(s *Store, seq uint64, n int) {
		t.Helper()
		b := s.NewBatch()
		b.PutSegment(1, seq, segValue(seq, n))
		b.PutMeta(fmt.Sprint("last/", seq%2), []byte(fmt.Sprint(seq)))
		if err := s.Commit(b); err != nil {
			t.Fatal(err)
		}
	}
	meta := func(s *Store, name, want string) {
		t.Helper()
		v, _, err := s.Meta(name)
		if err != nil || string(v) != want {
			t.Fatalf("meta %s: %q, %v; want %q", name, v, err, want)
		}
	}
	s := open(fs)
	commit(s, 1, logMin)
	commit(s, 2, 10) // in Pebble: synced there, with what came before
	commit(s, 3, logMin+1)
	commit(s, 4, logMin+2)
	// In flight: a segment appended, no commit record.
	b := s.NewBatch()
	b.PutSegment(1, 5, segValue(5, logMin))
	crashed := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0})
	b.Discard()
	c := open(crashed)
	all := map[uint64]int{1: logMin, 2: 10, 3: logMin + 1, 4: logMin + 2}
	wantSegments(t, c, 1, all)
	meta(c, "last/0", "4")
	meta(c, "last/1", "3")
	// Go on, crash again: the records after the recovered ones, in the new file, go in too.
	commit(c, 6, logMin+3)
	c2 := open(c.log.fs.(*vfs.MemFS).CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0}))
	all[6] = logMin + 3
	wantSegments(t, c2, 1, all)
	meta(c2, "last/0", "6")
	if err := c2.Close(); err != nil {
		t.Fatal(err)
	}

	// A damaged segment: its record and those after it stay out.
	commit(c, 7, logMin+4)
	commit(c, 8, logMin+5)
	damaged := c.log.fs.(*vfs.MemFS).CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0})
	names, err := damaged.List(damaged.PathJoin("db", logDir))
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	last := damaged.PathJoin("db", logDir, names[len(names)-1])
	f, err := damaged.OpenReadWrite(last, vfs.WriteCategoryUnspecified)
	if err != nil {
		t.Fatal(err)
	}
	// Segment 7 is the file's second segment: past the first frame and its record.
	ptr, _, err := c.get(segmentKey(prefixLogged, 1, 7))
	if err != nil {
		t.Fatal(err)
	}
	p, err := decodeLogPtr(ptr)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{0xff, 0xff}, p.off+3); err != nil {
		t.Fatal(err)
	}
	f.Close()
	d := open(damaged)
	delete(all, 7)
	wantSegments(t, d, 1, all)
	meta(d, "last/0", "6")
	d.Close()

	// An aborted record (its Pebble batch failed) is skipped; the next goes in.
	b = c.NewBatch()
	b.PutSegment(1, 9, segValue(9, logMin))
	c.logMu.Lock()
	n := c.commits + 1
	if err := c.log.commit(func(uint64, int64) []byte { return encodeCommit(n, b.logged, b.b.Repr()) }); err != nil {
		t.Fatal(err)
	}
	c.commits = n
	if err := c.log.abort(n); err != nil {
		t.Fatal(err)
	}
	c.logMu.Unlock()
	b.Discard()
	commit(c, 10, logMin+6)
	e := open(c.log.fs.(*vfs.MemFS).CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0}))
	defer e.Close()
	all[7], all[8], all[10] = logMin+4, logMin+5, logMin+6
	wantSegments(t, e, 1, all)
	meta(e, "last/0", "10")
}

// TestSegmentLogRecoversPastAFailedCommit: on a new store whose every commit went through
// the log (so Pebble holds no marker after the crash: the log is read from its start), a
// commit whose record never reached the log (its write failed) leaves its counter unused;
// the records after it are still applied, and the store goes on past every counter the log
// holds.
func TestSegmentLogRecoversPastAFailedCommit(t *testing.T) {
	fs := vfs.NewCrashableMem()
	if err := fs.MkdirAll("db", 0o755); err != nil {
		t.Fatal(err)
	}
	s, err := openOn(fs, "db", true, 64<<20)
	if err != nil {
		t.Fatal(err)
	}
	put := func(s *Store, seq uint64) {
		t.Helper()
		b := s.NewBatch()
		b.PutSegment(1, seq, segValue(seq, logMin))
		if err := s.Commit(b); err != nil {
			t.Fatal(err)
		}
	}
	put(s, 1)
	s.commits++ // as a commit whose record write failed leaves it
	put(s, 2)
	c, err := openOn(fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0}), "db", true, 64<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	wantSegments(t, c, 1, map[uint64]int{1: logMin, 2: logMin})
	if c.commits != s.commits {
		t.Fatalf("reopened at counter %d, want %d (the log's last)", c.commits, s.commits)
	}
}

// openCrashable opens the store at "db" on fs.
func openCrashable(t *testing.T, fs vfs.FS, sync bool) *Store {
	t.Helper()
	if err := fs.MkdirAll("db", 0o755); err != nil {
		t.Fatal(err)
	}
	s, err := openOn(fs, "db", sync, 64<<20)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// putLogged commits one logged segment.
func putLogged(t *testing.T, s *Store, table, seq uint64, n int) {
	t.Helper()
	b := s.NewBatch()
	b.PutSegment(table, seq, segValue(seq, n))
	if err := s.Commit(b); err != nil {
		t.Fatal(err)
	}
}

// TestSegmentLogSyncOffKeepsAPrefix: with sync off a crash may lose Pebble's last batches,
// a small one (CREATE TABLE's catalog entry) included; a large one after it must not be
// kept on its own, or a table's rows would outlive its creation (found by review).
func TestSegmentLogSyncOffKeepsAPrefix(t *testing.T) {
	fs := vfs.NewCrashableMem()
	s := openCrashable(t, fs, true)
	putLogged(t, s, 9, 1, logMin) // a marker, made durable by the clean close
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openCrashable(t, fs, false)
	b := s.NewBatch()
	b.PutCatalog(5, []byte("CREATE TABLE t5"))
	if err := s.Commit(b); err != nil {
		t.Fatal(err)
	}
	putLogged(t, s, 5, 6, logMin)
	c := openCrashable(t, fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0}), false)
	defer c.Close()
	var cat int
	if err := c.Catalog(func(uint64, []byte) error { cat++; return nil }); err != nil {
		t.Fatal(err)
	}
	var segs int
	if err := c.Segments(5, func(uint64, []byte) error { segs++; return nil }); err != nil {
		t.Fatal(err)
	}
	if cat == 0 && segs > 0 {
		t.Fatalf("table 5 has %d segments after a crash that lost its creation: not a prefix", segs)
	}
}

// TestSegmentLogNeverReusesTheMarkersFile: the file of the marker's record may go as
// garbage (its table dropped); a later session must not number a new file as it, or the
// marker would point into the new file's bytes and its records would be missed after a
// crash (found by review).
func TestSegmentLogNeverReusesTheMarkersFile(t *testing.T) {
	fs := vfs.NewCrashableMem()
	s := openCrashable(t, fs, true)
	putLogged(t, s, 1, 1, logMin) // file 1
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openCrashable(t, fs, true)
	putLogged(t, s, 2, 2, logMin+100) // file 2: the marker's
	b := s.NewBatch()
	b.DeleteTable(2) // file 2 is left with no live bytes
	if err := s.Commit(b); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openCrashable(t, fs, true) // deletes file 2, writes nothing
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openCrashable(t, fs, true)
	putLogged(t, s, 3, 3, logMin+5000)
	c := openCrashable(t, fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0}), true)
	defer c.Close()
	wantSegments(t, c, 1, map[uint64]int{1: logMin})
	wantSegments(t, c, 3, map[uint64]int{3: logMin + 5000})
}
