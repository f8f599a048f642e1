package state

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestSpillOverlay: reads and scans see the checkpointed values overlaid with the staged
// changes, and a flush makes the staged changes the stored ones (a random model check).
func TestSpillOverlay(t *testing.T) {
	s, err := Open("", true, 64<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	p := s.Spill(7, 1)
	other := s.Spill(8, 1)
	other.Put([]byte("a"), []byte("other"))
	model := map[string]string{}
	rng := rand.New(rand.NewPCG(1, 2))
	check := func(stage string) {
		t.Helper()
		for i := 0; i < 40; i++ {
			k := fmt.Sprintf("k%02d", i)
			want, in := model[k]
			v, ok, err := p.Get([]byte(k))
			if err != nil || ok != in || string(v) != want {
				t.Fatalf("%s: Get(%s) = %q %v %v, want %q %v", stage, k, v, ok, err, want, in)
			}
		}
		got := map[string]string{}
		prev := ""
		if err := p.Each(func(k, v []byte) error {
			if string(k) <= prev && prev != "" {
				return fmt.Errorf("keys out of order: %q after %q", k, prev)
			}
			prev = string(k)
			got[string(k)] = string(v)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(model) {
			t.Fatalf("%s: Each = %v, want %v", stage, got, model)
		}
	}
	change := func(n int) {
		for i := 0; i < n; i++ {
			k := fmt.Sprintf("k%02d", rng.IntN(40))
			if rng.IntN(3) == 0 {
				p.Delete([]byte(k))
				delete(model, k)
			} else {
				v := fmt.Sprintf("v%d", rng.IntN(1000))
				p.Put([]byte(k), []byte(v))
				model[k] = v
			}
		}
	}
	for round := 0; round < 20; round++ {
		change(50)
		check(fmt.Sprintf("round %d staged", round))
		// The checkpoint: its own writes (listed, some of keys staged before) then the flush.
		p.Begin()
		change(30)
		b := s.NewBatch()
		_, done := p.Flush(b)
		if round%5 != 4 { // now and then a checkpoint batch that is not committed
			if err := s.Commit(b); err != nil {
				t.Fatal(err)
			}
			done()
			if p.Staged() != 0 {
				t.Fatalf("staged %d bytes after a flush", p.Staged())
			}
		} else {
			b.Discard()
			p.Keep()
		}
		check(fmt.Sprintf("round %d flushed", round))
	}
	b := s.NewBatch()
	p.Clear(b)
	if err := s.Commit(b); err != nil {
		t.Fatal(err)
	}
	model = map[string]string{}
	check("cleared")
	if v, ok, _ := other.Get([]byte("a")); !ok || string(v) != "other" {
		t.Fatalf("another operator's state was touched: %q %v", v, ok)
	}
}

// TestSpillFilter: Get finds every key written however it reached the store — committed by
// an earlier Spill of the same operator (a restart), staged before the first Get, listed
// during a checkpoint, written into a checkpoint's batch — and skips the store for the rest.
func TestSpillFilter(t *testing.T) {
	s, err := Open("", true, 64<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	commit := func(p *Spill, write func(b *Batch)) {
		t.Helper()
		p.Begin()
		b := s.NewBatch()
		if write != nil {
			write(b)
		}
		_, done := p.Flush(b)
		if err := s.Commit(b); err != nil {
			t.Fatal(err)
		}
		done()
	}
	before := s.Spill(3, 1)
	before.Put([]byte("old"), []byte("1"))
	commit(before, nil)

	p := s.Spill(3, 1) // as after a restart: the filter is built from the store
	p.Put([]byte("staged"), []byte("2"))
	want := map[string]string{"old": "1", "staged": "2"}
	get := func(stage string) {
		t.Helper()
		for _, k := range []string{"old", "staged", "listed", "written", "later", "never"} {
			v, ok, err := p.Get([]byte(k))
			if w, in := want[k]; err != nil || ok != in || string(v) != w {
				t.Fatalf("%s: Get(%s) = %q %v %v, want %q %v", stage, k, v, ok, err, w, in)
			}
		}
	}
	get("first Get")
	p.Begin()
	p.Put([]byte("listed"), []byte("3"))
	b := s.NewBatch()
	p.Write(b, []byte("written"), []byte("4"))
	_, done := p.Flush(b)
	if err := s.Commit(b); err != nil {
		t.Fatal(err)
	}
	done()
	want["listed"], want["written"] = "3", "4"
	get("after a checkpoint")
	p.Put([]byte("later"), []byte("5"))
	commit(p, nil)
	want["later"] = "5"
	get("after another")

	// The filter itself: no false negatives, and about 1% false positives.
	f := newKeyFilter()
	const n = 200_000
	for i := 0; i < n; i++ {
		f.add([]byte(fmt.Sprintf("key%d", i)))
	}
	fp := 0
	for i := 0; i < n; i++ {
		if !f.mayHave([]byte(fmt.Sprintf("key%d", i))) {
			t.Fatalf("key%d added but not found", i)
		}
		if f.mayHave([]byte(fmt.Sprintf("other%d", i))) {
			fp++
		}
	}
	if fp > n*3/100 {
		t.Errorf("%d false positives in %d lookups", fp, n)
	}
	t.Logf("%d layers, %d false positives in %d lookups", len(f.layers), fp, n)
}
