package engine

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// A subscriber is dropped when it falls SubscriberBuffer change batches or SubscriberChanges
// changes behind (a batch may hold any number): a slow reader never makes the engine's memory
// grow without bound. A batch larger than SubscriberChanges still goes to a subscriber that
// has read everything before it (it is a snapshot, or one statement's changes).
const (
	SubscriberBuffer  = 1024
	SubscriberChanges = 1 << 18
)

// Change is one row of a view's changelog.
type Change struct {
	Op  string // +I, -U, +U, -D
	Row []any
}

// Subscription is a view's changelog: an optional snapshot (as +I rows), then every change.
type Subscription struct {
	Cols []Column
	C    <-chan []Change // the reader calls Took with each batch it takes
	c    chan []Change
	// queued counts the changes sent on c and not yet taken (Took); snapshot those of the
	// snapshot until it is taken, which do not count against SubscriberChanges.
	queued, snapshot atomic.Int64
	mu               sync.Mutex
	err              error
	view             *viewObj
	eng              *Engine
}

// Err reports why the subscription ended, once C is closed.
func (s *Subscription) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Took tells the subscription that its reader took batch from C.
func (s *Subscription) Took(batch []Change) {
	s.queued.Add(-int64(len(batch)))
	s.snapshot.Store(0) // the first batch taken is the snapshot, if there is one
}

// send queues batch for the reader, or reports that the reader is too far behind.
func (s *Subscription) send(batch []Change) bool {
	if q := s.queued.Load() - s.snapshot.Load(); q > 0 && q+int64(len(batch)) > SubscriberChanges {
		return false
	}
	select {
	case s.c <- batch:
		s.queued.Add(int64(len(batch)))
		return true
	default:
		return false
	}
}

// Close detaches the subscription and drops the changes still queued, so that a closed
// subscription the caller keeps holds no memory. It takes the flow lock, which guards the
// subscribers (see ingest.go), and not the engine's: a subscription whose context is
// cancelled ends at once, not when the statement running then ends.
func (s *Subscription) Close() {
	s.eng.flow.Lock() // publish may be sending to it
	defer s.eng.flow.Unlock()
	s.view.removeSub(s, nil)
	for b := range s.c { // closed by removeSub, now or when the subscriber was dropped
		s.Took(b)
	}
}

func (e *Engine) subscribe(st *sql.Stmt) (*Result, error) {
	v, ok := e.views[strings.ToLower(st.Name)]
	if !ok {
		if _, isTable := e.tables[strings.ToLower(st.Name)]; isTable {
			return nil, st.ErrorAt(st.Name, "SUBSCRIBE reads a materialized view, and %s is a table: CREATE MATERIALIZED VIEW v AS SELECT * FROM %s, then SUBSCRIBE v", st.Name, st.Name)
		}
		if _, isView := e.logical[strings.ToLower(st.Name)]; isView {
			return nil, st.ErrorAt(st.Name, "SUBSCRIBE reads a materialized view, and %s is a view that is not materialized (it keeps no changes): CREATE MATERIALIZED VIEW m AS SELECT * FROM %s, then SUBSCRIBE m", st.Name, st.Name)
		}
		return nil, st.ErrorAt(st.Name, "materialized view %s does not exist", st.Name)
	}
	snapshot := true
	for _, o := range st.Options {
		switch o.Key {
		case "snapshot":
			switch strings.ToLower(o.Value) {
			case "true":
			case "false":
				snapshot = false
			default:
				return nil, st.ErrorAtPos(o.Pos, "snapshot must be true or false, got '%s'", o.Value)
			}
		default:
			return nil, st.ErrorAtPos(o.Pos, "unknown SUBSCRIBE option '%s'", o.Key)
		}
	}
	sub := &Subscription{view: v, eng: e, c: make(chan []Change, SubscriberBuffer)}
	sub.C = sub.c
	sub.Cols = append(sub.Cols, Column{Name: "op", Type: types.TVarchar})
	for _, c := range v.cols {
		sub.Cols = append(sub.Cols, Column{Name: c.Name, Type: c.Type})
	}
	if snapshot {
		rows := snapshotChanges(v)
		if err := v.store.takeErr(); err != nil {
			return nil, err
		}
		if len(rows) > 0 {
			sub.snapshot.Store(int64(len(rows)))
			sub.send(rows)
		}
	}
	e.flow.Lock() // Subscription.Close holds flow alone
	v.subs = append(v.subs, sub)
	e.flow.Unlock()
	return &Result{Cols: sub.Cols, Sub: sub}, nil
}

// snapshotChanges is a view's rows as insertions.
func snapshotChanges(v *viewObj) []Change {
	var rows []Change
	v.store.each(func(r []any, n int64) {
		for k := int64(0); k < n; k++ {
			rows = append(rows, Change{Op: "+I", Row: r})
		}
	})
	return rows
}

// publish sends a change batch to the view's subscribers and sinks. A retraction
// immediately followed by an insertion is an update (-U, +U); other retractions are -D and
// other insertions +I.
func (v *viewObj) publish(b *exec.Batch, ts []types.T) {
	if len(v.subs) == 0 && len(v.sinks) == 0 || b.N == 0 {
		return
	}
	rows := make([][]any, b.N)
	for i := range rows {
		rows[i] = b.Row(i)
	}
	// A retraction right before an insertion of a row with the same key is an update.
	update := func(i int) bool {
		if !v.keyed || b.Weight(i) >= 0 || i+1 >= b.N || b.Weight(i+1) <= 0 {
			return false
		}
		for _, c := range v.key {
			if exec.CompareValues(rows[i][c], rows[i+1][c]) != 0 {
				return false
			}
		}
		return true
	}
	var out []Change
	for i := 0; i < b.N; i++ {
		w := b.Weight(i)
		op := "+I"
		switch {
		case update(i):
			op = "-U"
		case w < 0:
			op = "-D"
		case i > 0 && update(i-1):
			op = "+U"
		}
		if w < 0 {
			w = -w
		}
		for k := int64(0); k < w; k++ {
			out = append(out, Change{Op: op, Row: rows[i]})
		}
	}
	for _, k := range v.sinks {
		k.pending = append(k.pending, out...)
	}
	for _, s := range append([]*Subscription{}, v.subs...) {
		if !s.send(out) {
			v.removeSub(s, fmt.Errorf("subscriber to %s fell more than %d changes or %d change batches behind and was dropped; read faster or subscribe again", v.name, SubscriberChanges, SubscriberBuffer))
		}
	}
}

func (v *viewObj) removeSub(s *Subscription, err error) {
	for i, x := range v.subs {
		if x == s {
			v.subs = slices.Delete(v.subs, i, i+1) // clears the vacated slot: s may hold many changes
			s.mu.Lock()
			s.err = err
			s.mu.Unlock()
			close(s.c)
			return
		}
	}
}

// closeSubscribers ends every subscription to v with err; the flow lock is held.
func (v *viewObj) closeSubscribers(err error) {
	for len(v.subs) > 0 {
		v.removeSub(v.subs[0], err)
	}
}
