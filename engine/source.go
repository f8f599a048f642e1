package engine

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/streamsql/streamsql/connector"
	"github.com/streamsql/streamsql/connector/file"
	"github.com/streamsql/streamsql/connector/kafka"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/watermark"
)

// sourceBatch is how many rows a connector hands over per commit.
const sourceBatch = 4096

// feeder runs a table's connector: it takes batches from the source and inserts them, each
// committed together with the source's position (and its bad records), so that after a
// crash the source resumes exactly after the last committed row: every row lands once.
type feeder struct {
	cancel context.CancelFunc
	done   chan struct{}
	// Under the engine's lock: why it stopped (if not by EOF or Close), whether the source
	// is exhausted, the last transient error while it retries, the committed offset (rows
	// or records taken) and the records the brokers hold beyond it (-1: not applicable).
	err    error
	eof    bool
	retry  error
	offset int64
	lag    int64
	// end is how far FLUSH waits for offset to reach (nil: it does not wait): a file
	// table's file size now, a bounded generator's row count. lasts, for a generator, is how
	// long it takes from an offset to its end at its rate limit.
	end   func() int64
	lasts func(off int64) time.Duration
}

func offsetKey(t *tableObj) string { return "offset/" + strconv.FormatUint(t.entry.ID, 10) }

// logSource is a connector that reads a partitioned log of records: a Kafka topic or a
// file (one partition). Positions are the connector's own encoding, committed with the rows.
type logSource interface {
	Poll(ctx context.Context, max int) (connector.Chunk, error)
	Partitions() int
	Offset() int64
	Lag() int64
	Restart()
	SetPaused(paused map[int32]bool)
	Close()
}

// tableSource is a table's opened connector: a generator or a log.
type tableSource struct {
	gen connector.Source
	log logSource
}

func (s tableSource) close() {
	if s.log != nil {
		s.log.Close()
	}
}

// openSource validates a table's connector options and positions it at the stored offset.
func (e *Engine) openSource(t *tableObj) (tableSource, error) {
	pos, _, err := e.store.Meta(offsetKey(t))
	if err != nil {
		return tableSource{}, err
	}
	switch strings.ToLower(strings.TrimSpace(t.options["connector"])) {
	case "kafka":
		src, err := kafka.OpenSource(t.options, t.cols, pos)
		if err != nil {
			return tableSource{}, err
		}
		return tableSource{log: src}, nil
	case "file":
		src, err := file.OpenSource(t.options, t.cols, pos)
		if err != nil {
			return tableSource{}, err
		}
		return tableSource{log: src}, nil
	}
	src, err := connector.Open(t.options, t.cols, e.clock)
	if err != nil {
		return tableSource{}, err
	}
	if len(pos) == 8 {
		if err := src.SeekTo(int64(binary.BigEndian.Uint64(pos))); err != nil {
			return tableSource{}, err
		}
	}
	return tableSource{gen: src}, nil
}

// failedFeeder is the feeder of a table whose connector could not be restored at Open (a
// file that is gone): stopped with err, at the committed position. A file table's FLUSH
// reports it, as it does a file that shrank.
func (e *Engine) failedFeeder(t *tableObj, err error) *feeder {
	f := &feeder{cancel: func() {}, done: make(chan struct{}), err: err, lag: -1}
	close(f.done)
	conn := strings.ToLower(strings.TrimSpace(t.options["connector"]))
	if pos, _, _ := e.store.Meta(offsetKey(t)); len(pos) >= 8 && conn != "kafka" { // Kafka's is per partition; a file's may end in a flag
		f.offset = int64(binary.BigEndian.Uint64(pos))
	}
	if conn == "file" {
		f.end = func() int64 { return f.offset }
	}
	return f
}

// startFeeder starts ingesting from a table's connector in the background.
func (e *Engine) startFeeder(t *tableObj, src tableSource) {
	ctx, cancel := context.WithCancel(context.Background())
	f := &feeder{cancel: cancel, done: make(chan struct{}), lag: -1}
	if src.log != nil {
		f.offset = src.log.Offset()
		if fs, ok := src.log.(*file.Source); ok {
			f.end = fs.Size
		}
	} else {
		f.offset = src.gen.Offset()
		if n := src.gen.Total(); n >= 0 {
			f.end, f.lasts = func() int64 { return n }, src.gen.Lasts
		}
	}
	t.feeder = f
	go func() {
		defer close(f.done)
		defer src.close()
		var err error
		if src.log != nil {
			err = e.feedLog(ctx, t, f, src.log)
		} else {
			err = e.feedGenerator(ctx, t, f, src.gen)
		}
		e.mu.Lock()
		defer e.mu.Unlock()
		switch {
		case errors.Is(err, io.EOF):
			f.eof = true
		case err != nil && ctx.Err() == nil && !e.closed:
			f.err = err
		}
	}()
}

// feedGenerator inserts a generator's rows until it ends (io.EOF), fails or ctx is done.
func (e *Engine) feedGenerator(ctx context.Context, t *tableObj, f *feeder, src connector.Source) error {
	for {
		b, err := src.Next(ctx, sourceBatch)
		if err != nil {
			return err
		}
		pos := binary.BigEndian.AppendUint64(nil, uint64(src.Offset()))
		if err := e.insertFrom(ctx, t, connector.Chunk{Rows: b, Pos: pos}); err != nil {
			return err
		}
		e.mu.Lock()
		f.offset = src.Offset()
		e.mu.Unlock()
	}
}

// logPoll is how long one poll waits for records before the feeder re-evaluates idleness
// and alignment.
const logPoll = 100 * time.Millisecond

// feedLog inserts a log's records until ctx is done or the table cannot take them. An
// unreachable log (brokers, a file) is retried (system.sources shows why); every poll
// re-evaluates the partitions' idleness (the table's watermark may advance without rows) and
// alignment (partitions running ahead are paused).
func (e *Engine) feedLog(ctx context.Context, t *tableObj, f *feeder, src logSource) error {
	backoff := logPoll
	for ctx.Err() == nil {
		wait := logPoll
		if src.Partitions() == 0 { // a Kafka source starting: its look-up takes round trips
			wait = kafkaCheckTimeout
		}
		pctx, cancel := context.WithTimeout(ctx, wait)
		ch, err := src.Poll(pctx, sourceBatch)
		cancel()
		var fatal *connector.Fatal
		if errors.As(err, &fatal) {
			return err
		}
		if err != nil {
			e.mu.Lock()
			f.retry = err
			e.mu.Unlock()
			select {
			case <-ctx.Done():
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, 5*time.Second)
			continue
		}
		e.mu.Lock()
		f.retry = ch.Err
		if t.parts == nil && src.Partitions() > 0 {
			if err := e.restorePartitions(t, src.Partitions()); err != nil {
				e.mu.Unlock()
				return err
			}
		}
		e.mu.Unlock()
		if ch.Rows != nil || len(ch.Bad) > 0 {
			if err := e.insertFrom(ctx, t, ch); err != nil {
				return err
			}
		}
		if ch.Err != nil {
			// A partition failed to fetch: what came is committed; fetch again from there.
			select {
			case <-ctx.Done():
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, 5*time.Second)
			src.Restart()
		} else {
			backoff = logPoll
		}
		e.mu.Lock()
		f.offset, f.lag = src.Offset(), src.Lag()
		paused := map[int32]bool{}
		if t.parts != nil {
			if err := e.tickWatermark(t); err != nil {
				e.mu.Unlock()
				return err
			}
			for p := range src.Partitions() {
				paused[int32(p)] = t.parts.Paused(p)
			}
		}
		e.mu.Unlock()
		src.SetPaused(paused)
	}
	return ctx.Err()
}

// insertFrom inserts a connector's rows (ch.Rows may be nil when every record was bad) with
// the source's position and bad records in the same commit. ch.Parts gives each row's
// partition (nil: one partition). A row the table cannot take (its WATERMARK expression
// fails on it) becomes a bad record instead of stopping the source.
func (e *Engine) insertFrom(ctx context.Context, t *tableObj, ch connector.Chunk) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.awaitRoom(ctx); err != nil {
		return err
	}
	extra := func(wb batchWriter) {
		wb.PutMeta(offsetKey(t), ch.Pos)
		for _, r := range ch.Bad {
			wb.PutMeta(badKey(t, r), encodeBad(r))
		}
	}
	var err error
	if ch.Rows == nil {
		err = e.commitMeta(extra)
	} else {
		err = e.insertBatchWith(t, ch.Rows, ch.Parts, extra)
		var we wmError
		if errors.As(err, &we) && ch.Parts != nil {
			// Nothing was applied: set aside the rows the WATERMARK expression fails on
			// (extra sees the new chunk) and insert the rest.
			if ch = t.setAsideBad(ch); ch.Rows == nil {
				err = e.commitMeta(extra)
			} else {
				err = e.insertBatchWith(t, ch.Rows, ch.Parts, extra)
			}
		}
	}
	if err != nil {
		return fmt.Errorf("connector of %s stopped: %w", t.name, err)
	}
	for _, r := range ch.Bad {
		e.bad = append(e.bad, badRecord{table: t.name, BadRecord: r})
	}
	return nil
}

// setAsideBad moves the rows whose WATERMARK expression fails to the chunk's bad records.
func (t *tableObj) setAsideBad(ch connector.Chunk) connector.Chunk {
	var keep []int32
	for i := 0; i < ch.Rows.N; i++ {
		row := exec.Take(ch.Rows, []int32{int32(i)}, t.types())
		if _, err := t.wmValues(row); err != nil {
			ch.Bad = append(ch.Bad, connector.BadRecord{Partition: ch.Parts[i], Offset: ch.Offs[i], Err: err.Error(), Value: ch.Vals[i]})
			continue
		}
		keep = append(keep, int32(i))
	}
	out := connector.Chunk{Bad: ch.Bad, Pos: ch.Pos, Err: ch.Err}
	if len(keep) > 0 {
		out.Rows = exec.Take(ch.Rows, keep, t.types())
		for _, i := range keep {
			out.Parts = append(out.Parts, ch.Parts[i])
			out.Offs = append(out.Offs, ch.Offs[i])
			out.Vals = append(out.Vals, ch.Vals[i])
		}
	}
	return out
}

// restorePartitions starts a partitioned table's watermark bookkeeping with the partitions'
// watermarks stored with its last rows. The engine's lock is held.
func (e *Engine) restorePartitions(t *tableObj, n int) error {
	t.parts = watermark.NewPartitions(n, t.idle, t.drift, e.clock)
	v, ok, err := e.store.Meta(wmPartsKey(t))
	if err != nil || !ok {
		return err
	}
	r := &exec.StateReader{Buf: v}
	marks := make([]int64, r.Len())
	for i := range marks {
		marks[i] = r.Int()
	}
	if err := r.Err(); err != nil {
		return fmt.Errorf("stored partition watermarks of %s: %w", t.name, err)
	}
	t.parts.Restore(marks, t.wm.W)
	return nil
}

func wmPartsKey(t *tableObj) string { return "wmparts/" + strconv.FormatUint(t.entry.ID, 10) }

// tickWatermark advances a partitioned table's watermark when idleness alone moves it, and
// stores it so that it never goes back across a restart. The engine's lock is held.
func (e *Engine) tickWatermark(t *tableObj) error {
	w := t.parts.Tick()
	if w <= t.wm.W {
		return nil
	}
	if err := e.commitMeta(func(wb batchWriter) { wb.PutMeta(tickKey(t), binary.BigEndian.AppendUint64(nil, uint64(w))) }); err != nil {
		return err
	}
	prev := t.wm.W
	t.wm.Set(w)
	e.enqueue(t, nil, false, prev, e.seq.Last())
	return nil
}

func tickKey(t *tableObj) string { return "wmtick/" + strconv.FormatUint(t.entry.ID, 10) }

// stop ends the feeder and waits for it; the engine's lock must not be held.
func (f *feeder) stop() {
	f.cancel()
	<-f.done
}

// status describes a table's connector for system.sources.
func (f *feeder) status() string {
	switch {
	case f == nil:
		return ""
	case f.err != nil:
		return "failed: " + f.err.Error()
	case f.eof:
		return "finished"
	case f.retry != nil:
		return "retrying: " + f.retry.Error()
	}
	return "running"
}

// flushSourceWait bounds how long FLUSH waits for file tables to read their files and
// bounded generators to end; a generator whose rate limit keeps it going longer than
// flushGeneratorWait is not waited for.
const (
	flushSourceWait    = 30 * time.Second
	flushGeneratorWait = 10 * time.Second
)

// awaitSources waits until every file table has read its file as far as the file stood when
// it was called, and every bounded generator ('number-of-rows', 'events.max') that its rate
// lets end within flushGeneratorWait has ended (or the source stopped), so FLUSH makes what
// a file or a bounded generator holds reach the views, as it does rows that INSERT wrote.
// The engine's lock is not held: the feeders need it.
func (e *Engine) awaitSources(ctx context.Context, s *sql.Stmt) error {
	type wait struct {
		t      *tableObj
		f      *feeder
		target int64
	}
	var waits []wait
	if err := e.lock(ctx); err != nil {
		return err
	}
	for _, t := range e.tables {
		if f := t.feeder; f != nil && f.end != nil && (f.lasts == nil || f.lasts(f.offset) <= flushGeneratorWait) {
			waits = append(waits, wait{t, f, f.end()})
		}
	}
	e.mu.Unlock()
	deadline := time.Now().Add(flushSourceWait)
	for _, w := range waits {
		for {
			if err := e.lock(ctx); err != nil {
				return err
			}
			done := w.f.offset >= w.target || w.f.err != nil || w.f.eof || e.closed
			failed := w.f.err
			e.mu.Unlock()
			if failed != nil {
				return s.ErrorAtPos(s.Pos, "FLUSH: table %s stopped reading its source: %v", w.t.name, failed)
			}
			if done {
				break
			}
			if time.Now().After(deadline) {
				return s.ErrorAtPos(s.Pos, "FLUSH: table %s has not read its source to its end after %s (system.sources says why)", w.t.name, flushSourceWait)
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(5 * time.Millisecond):
			}
		}
	}
	return nil
}

// kafkaCheckTimeout bounds how long CREATE TABLE or CREATE SINK waits for the brokers.
const kafkaCheckTimeout = 10 * time.Second

// checkKafka runs a Kafka connector's check (the topic exists and the brokers answer) with
// a deadline, so a wrong address fails the statement instead of hanging it.
func checkKafka(check func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), kafkaCheckTimeout)
	defer cancel()
	return check(ctx)
}
