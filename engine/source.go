package engine

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/streamsql/streamsql/connector"
	"github.com/streamsql/streamsql/exec"
)

// sourceBatch is how many rows a connector hands over per commit.
const sourceBatch = 4096

// feeder runs a table's connector: it takes batches from the source and inserts them, each
// committed together with the source's offset, so that after a crash the source resumes
// exactly after the last committed row (every row lands exactly once).
type feeder struct {
	src    connector.Source
	cancel context.CancelFunc
	done   chan struct{}
	err    error // why it stopped, if not by EOF or Close (under the engine's lock)
	eof    bool  // the source is exhausted (under the engine's lock)
	// offset is the committed offset (read under the engine's lock).
	offset int64
}

func offsetKey(t *tableObj) string { return "offset/" + strconv.FormatUint(t.entry.ID, 10) }

// openSource validates a table's connector options and positions it at the stored offset.
func (e *Engine) openSource(t *tableObj) (connector.Source, error) {
	src, err := connector.Open(t.options, t.cols, e.clock)
	if err != nil {
		return nil, err
	}
	v, ok, err := e.store.Meta(offsetKey(t))
	if err != nil {
		return nil, err
	}
	if ok && len(v) == 8 {
		if err := src.SeekTo(int64(binary.BigEndian.Uint64(v))); err != nil {
			return nil, err
		}
	}
	return src, nil
}

// startFeeder starts ingesting from a table's connector in the background.
func (e *Engine) startFeeder(t *tableObj, src connector.Source) {
	ctx, cancel := context.WithCancel(context.Background())
	f := &feeder{src: src, cancel: cancel, done: make(chan struct{}), offset: src.Offset()}
	t.feeder = f
	// stopped records why the feeder ended; status readers hold the engine's lock.
	stopped := func(eof bool, err error) {
		e.mu.Lock()
		f.eof, f.err = eof, err
		e.mu.Unlock()
	}
	go func() {
		defer close(f.done)
		for {
			b, err := src.Next(ctx, sourceBatch)
			if errors.Is(err, io.EOF) {
				stopped(true, nil)
				return
			}
			if err != nil {
				if ctx.Err() == nil {
					stopped(false, err)
				}
				return
			}
			e.mu.Lock()
			if e.closed || ctx.Err() != nil {
				e.mu.Unlock()
				return
			}
			err = e.insertFrom(t, b, src.Offset())
			if err != nil {
				f.err = fmt.Errorf("connector of %s stopped: %w", t.name, err)
			}
			e.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
}

// stop ends the feeder and waits for it; the engine's lock must not be held.
func (f *feeder) stop() {
	f.cancel()
	<-f.done
}

// insertFrom inserts a connector's batch with its offset in the same commit.
func (e *Engine) insertFrom(t *tableObj, b *exec.Batch, offset int64) error {
	v := binary.BigEndian.AppendUint64(nil, uint64(offset))
	if err := e.insertBatchWith(t, b, func(wb batchWriter) { wb.PutMeta(offsetKey(t), v) }); err != nil {
		return err
	}
	t.feeder.offset = offset
	return nil
}

// feederStatus describes a table's connector for system.sources.
func (f *feeder) status() string {
	switch {
	case f == nil:
		return ""
	case f.err != nil:
		return "failed: " + f.err.Error()
	case f.eof:
		return "finished"
	}
	return "running"
}
