package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/connector/kafka"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// sinkObj writes a view's changelog to a Kafka topic as upserts by key (package kafka).
// It is fed with the view's subscribers, in the same order, starting with a snapshot of the
// view's rows. A checkpoint and FLUSH wait for its records to be acknowledged, and Open
// wires it before replaying the changes after the last checkpoint, so every change reaches
// the topic at least once and each key's last record is the view's row.
type sinkObj struct {
	entry *catalog.Entry
	name  string
	view  *viewObj
	k     *kafka.Sink
	names []string
	types []types.T
	// keyNames and keyTypes are those of the key columns (k.Key).
	keyNames []string
	keyTypes []types.T
	// pending are the view's changes of the delivery under way (publish), written together
	// when it ends (writeSinks): a row's new version and its old one's retraction can come
	// in separate batches, from different operators, in either order.
	pending []Change
}

// createSink runs CREATE SINK name FROM view WITH (connector = 'kafka', ...).
func (e *Engine) createSink(s *sql.Stmt) (*Result, error) {
	if taken, err := e.nameTaken(s, s.Name, s.IfNotExists); err != nil {
		return nil, err
	} else if taken {
		return &Result{}, nil
	}
	wb := e.store.NewBatch()
	ent := e.cat.Add(wb, catalog.KindSink, s.Name, s.Text)
	k, err := e.defineSink(s, ent)
	if err == nil {
		err = checkKafka(k.k.Check)
		if err != nil {
			err = optionError(s, err)
		}
	}
	if err == nil {
		rows := snapshotChanges(k.view)
		if err = k.view.store.takeErr(); err == nil {
			k.write(rows)
			err = checkKafka(k.k.Flush)
		}
	}
	if err == nil {
		err = e.store.Commit(wb)
	} else {
		wb.Discard()
	}
	if err != nil {
		e.cat.Forget(s.Name)
		if k != nil {
			k.detach()
		}
		return nil, err
	}
	return &Result{}, nil
}

// defineSink validates a sink and wires it to its view.
func (e *Engine) defineSink(s *sql.Stmt, ent *catalog.Entry) (*sinkObj, error) {
	v, ok := e.views[strings.ToLower(s.From)]
	if !ok {
		if _, isTable := e.tables[strings.ToLower(s.From)]; isTable {
			return nil, s.ErrorAt(s.From, "a sink reads a materialized view, and %s is a table: CREATE MATERIALIZED VIEW v AS SELECT * FROM %s, then CREATE SINK ... FROM v", s.From, s.From)
		}
		if _, isView := e.logical[strings.ToLower(s.From)]; isView {
			return nil, s.ErrorAt(s.From, "a sink reads a materialized view, and %s is a view that is not materialized (it keeps no changes): CREATE MATERIALIZED VIEW m AS SELECT * FROM %s, then CREATE SINK ... FROM m", s.From, s.From)
		}
		return nil, s.ErrorAt(s.From, "materialized view %s does not exist", s.From)
	}
	opts := map[string]string{}
	for _, o := range s.Options {
		opts[o.Key] = o.Value
	}
	if c := strings.ToLower(strings.TrimSpace(opts["connector"])); c != "kafka" {
		return nil, s.ErrorAtPos(s.Pos, "CREATE SINK needs WITH (connector = 'kafka', topic = '...', 'properties.bootstrap.servers' = '...')")
	}
	k := &sinkObj{entry: ent, name: s.Name, view: v}
	for _, c := range v.cols {
		k.names = append(k.names, c.Name)
		k.types = append(k.types, c.Type)
	}
	var err error
	if k.k, err = kafka.OpenSink(opts, k.names); err != nil {
		return nil, optionError(s, err)
	}
	for _, col := range k.k.Key {
		k.keyNames, k.keyTypes = append(k.keyNames, k.names[col]), append(k.keyTypes, k.types[col])
	}
	v.sinks = append(v.sinks, k)
	return k, nil
}

// write hands a delivery's changes to the topic as one record per sink key, what they leave
// of it: the row of the key's latest insertion that no later change retracted, else a
// tombstone when they retracted one of its rows. So the order of a retraction and an
// insertion under one key does not matter (an outer join emits a row's new version before
// the old one's retraction when the row moves from padded to matched, a UNION ALL when it
// moves between branches), nor do changes that cancel out. With the default key, all
// columns, a retracted row the view still holds (it had duplicates) keeps its record. The
// view's store has applied the changes.
func (k *sinkObj) write(cs []Change) {
	// A row's encoding holds its key columns, so one count per row serves every key.
	type keyState struct {
		key             []byte
		last, retracted int // the latest change that inserted or retracted a row for good; -1: none
	}
	var order []*keyState
	byKey := map[string]*keyState{}
	states := make([]*keyState, len(cs))
	rows := make([]string, len(cs))
	net := map[string]int64{} // a row's insertions minus retractions in cs
	var rk []byte
	for i, c := range cs {
		key := k.key(c.Row)
		st := byKey[string(key)]
		if st == nil {
			st = &keyState{key: key, last: -1, retracted: -1}
			byKey[string(key)] = st
			order = append(order, st)
		}
		rk = exec.AppendValuesKey(rk[:0], c.Row)
		states[i], rows[i] = st, string(rk)
		net[rows[i]] += opWeight(c.Op)
	}
	for i := len(cs) - 1; i >= 0; i-- {
		switch st, n := states[i], net[rows[i]]; {
		case st.last < 0 && n > 0 && opWeight(cs[i].Op) > 0:
			st.last = i
		case st.retracted < 0 && n < 0 && opWeight(cs[i].Op) < 0:
			st.retracted = i
		}
	}
	for _, st := range order {
		switch {
		case st.last >= 0:
			k.k.Write(st.key, []byte(rowJSON(k.names, k.types, cs[st.last].Row)))
		case st.retracted >= 0:
			if len(k.k.Key) == len(k.names) {
				if held, err := k.view.store.holds([]byte(rows[st.retracted])); err == nil && held {
					continue // another copy of the row remains: its record stands
				}
			}
			k.k.Write(st.key, nil)
		}
	}
}

// opWeight is +1 for a changelog insertion (+I, +U) and -1 for a retraction (-U, -D).
func opWeight(op string) int64 {
	if op[0] == '+' {
		return 1
	}
	return -1
}

// key encodes a row's key columns as a JSON object.
func (k *sinkObj) key(row []any) []byte {
	vals := make([]any, len(k.k.Key))
	for i, col := range k.k.Key {
		vals[i] = row[col]
	}
	return []byte(rowJSON(k.keyNames, k.keyTypes, vals))
}

// detach unwires the sink from its view and closes its client.
func (k *sinkObj) detach() {
	k.unwire()
	k.k.Close()
}

// unwire takes the sink off its view.
func (k *sinkObj) unwire() {
	for i, x := range k.view.sinks {
		if x == k {
			k.view.sinks = slices.Delete(k.view.sinks, i, i+1)
			break
		}
	}
}

// flushSinks waits until every sink's records are acknowledged (FLUSH, checkpoints).
func (e *Engine) flushSinks(ctx context.Context) error {
	e.writeSinks()
	for _, v := range e.views {
		for _, k := range v.sinks {
			if err := k.k.Flush(ctx); err != nil {
				return fmt.Errorf("sink %s: %w", k.name, err)
			}
		}
	}
	return nil
}

// writeSinks writes each sink's pending changes, as one batch. It runs where a delivery
// ends (deliver, a restart's replay) and before sinks are flushed; like publish, under the
// flow lock or with no delivery under way.
func (e *Engine) writeSinks() {
	for _, v := range e.views {
		for _, k := range v.sinks {
			if len(k.pending) > 0 {
				k.write(k.pending)
				k.pending = nil
			}
		}
	}
}

// dropSink runs DROP SINK.
func (e *Engine) dropSink(s *sql.Stmt) (*Result, error) {
	k := e.sink(s.Name)
	if k == nil {
		if s.IfExists {
			return &Result{}, nil
		}
		return nil, s.ErrorAt(s.Name, "sink %s does not exist", s.Name)
	}
	wb := e.store.NewBatch()
	e.cat.Remove(wb, k.name)
	if err := e.store.Commit(wb); err != nil {
		e.cat.Restore(k.entry)
		return nil, err
	}
	k.detach()
	return &Result{}, nil
}

func (e *Engine) sink(name string) *sinkObj {
	for _, v := range e.views {
		for _, k := range v.sinks {
			if strings.EqualFold(k.name, name) {
				return k
			}
		}
	}
	return nil
}

// optionError places a connector's error at the option it names first (quoted, as
// connectors name options), else at the first option.
func optionError(s *sql.Stmt, err error) error {
	msg, pos, at := err.Error(), s.Options[0].Pos, -1
	for _, o := range s.Options {
		if i := strings.Index(msg, "'"+o.Key+"'"); i >= 0 && (at < 0 || i < at) {
			at, pos = i, o.Pos
		}
	}
	return s.ErrorAtPos(pos, "%s", err)
}
