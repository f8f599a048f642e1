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
		for k, want := range model {
			v, ok, err := p.Get([]byte(k))
			if err != nil || !ok || string(v) != want {
				t.Fatalf("%s: Get(%s) = %q %v %v, want %q", stage, k, v, ok, err, want)
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
