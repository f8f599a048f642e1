// Package exectest holds helpers for testing operators: an in-memory exec.KeyedStore.
package exectest

import (
	"slices"
	"sort"
)

// Store is an exec.KeyedStore in memory: each key's entry, a copy of the value put.
type Store map[string][]byte

// Get implements exec.KeyedStore.
func (s Store) Get(k []byte) ([]byte, bool, error) { v, ok := s[string(k)]; return v, ok, nil }

// Put implements exec.KeyedStore.
func (s Store) Put(k, v []byte) { s[string(k)] = slices.Clone(v) }

// Delete implements exec.KeyedStore.
func (s Store) Delete(k []byte) { delete(s, string(k)) }

// Each implements exec.KeyedStore: the entries in key order.
func (s Store) Each(fn func(k, v []byte) error) error {
	keys := make([]string, 0, len(s))
	for k := range s {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if err := fn([]byte(k), s[k]); err != nil {
			return err
		}
	}
	return nil
}

// Clone copies the store (the values are never changed in place, so they are shared).
func (s Store) Clone() Store {
	c := make(Store, len(s))
	for k, v := range s {
		c[k] = v
	}
	return c
}
