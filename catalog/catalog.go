// Package catalog keeps the definitions of a database's tables, views and sinks, and
// persists them in the state store.
//
// A definition is stored as the user's CREATE statement text plus the ids the engine gave
// it; Open replays the statements in creation order, so the catalog can never disagree with
// what the parser and binder of this version make of a statement.
//
// Invariant: names are unique across kinds, case-insensitively; entry sequence numbers and
// table ids come from the store's one Sequence and are never reused.
package catalog

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// Kind is the kind of a catalog object.
type Kind string

// Object kinds. A view (KindView) is materialized; a logical view (CREATE VIEW) is a name
// for a query, stored as its statement only.
const (
	KindTable       Kind = "table"
	KindView        Kind = "view"
	KindLogicalView Kind = "logical_view"
	KindSink        Kind = "sink"
)

// Entry is one persisted definition.
type Entry struct {
	Seq  uint64 `json:"seq"`
	Kind Kind   `json:"kind"`
	Name string `json:"name"`
	ID   uint64 `json:"id"`
	SQL  string `json:"sql"`
}

// Column is a column of a table or view.
type Column struct {
	Name    string
	Type    types.T
	NotNull bool
}

// Catalog is the set of entries, keyed by lower-cased name.
type Catalog struct {
	entries map[string]*Entry
	seq     *state.Sequence
}

// Load reads every entry from the store.
func Load(s *state.Store, seq *state.Sequence) (*Catalog, error) {
	c := &Catalog{entries: map[string]*Entry{}, seq: seq}
	err := s.Catalog(func(seq uint64, v []byte) error {
		var e Entry
		if err := json.Unmarshal(v, &e); err != nil {
			return fmt.Errorf("catalog entry %d is corrupt: %w", seq, err)
		}
		c.entries[strings.ToLower(e.Name)] = &e
		c.seq.Observe(seq)
		return nil
	})
	return c, err
}

// Entries returns every entry in creation order.
func (c *Catalog) Entries() []*Entry {
	out := make([]*Entry, 0, len(c.entries))
	for _, e := range c.entries {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Seq < out[j].Seq })
	return out
}

// Lookup finds an entry by name.
func (c *Catalog) Lookup(name string) (*Entry, bool) {
	e, ok := c.entries[strings.ToLower(name)]
	return e, ok
}

// Add records a new definition in b; its Seq is assigned, and for tables ID = Seq.
func (c *Catalog) Add(b *state.Batch, kind Kind, name, sql string) *Entry {
	n := c.seq.Next()
	e := &Entry{Seq: n, Kind: kind, Name: name, ID: n, SQL: sql}
	v, _ := json.Marshal(e)
	b.PutCatalog(e.Seq, v)
	c.entries[strings.ToLower(name)] = e
	return e
}

// Remove deletes a definition in b.
func (c *Catalog) Remove(b *state.Batch, name string) {
	if e, ok := c.entries[strings.ToLower(name)]; ok {
		b.DeleteCatalog(e.Seq)
		delete(c.entries, strings.ToLower(name))
	}
}

// Forget drops an entry from memory only (undoing Add when its batch is discarded).
func (c *Catalog) Forget(name string) { delete(c.entries, strings.ToLower(name)) }

// Restore puts back an entry removed from memory (undoing Remove when its batch is discarded).
func (c *Catalog) Restore(e *Entry) { c.entries[strings.ToLower(e.Name)] = e }

// Names returns the names of entries of a kind, sorted.
func (c *Catalog) Names(kind Kind) []string {
	var out []string
	for _, e := range c.entries {
		if e.Kind == kind {
			out = append(out, e.Name)
		}
	}
	sort.Strings(out)
	return out
}

// Similar returns the known name closest to name (edit distance <= 2), or "".
func Similar(name string, candidates []string) string {
	best, bestD := "", 3
	for _, c := range candidates {
		if d := editDistance(strings.ToLower(name), strings.ToLower(c)); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
