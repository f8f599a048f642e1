package state

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
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
