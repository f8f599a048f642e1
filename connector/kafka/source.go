package kafka

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/connector"
)

// Source reads a topic's partitions. It is used by one goroutine at a time.
//
// Invariant: next[p] is the offset after the last record of partition p returned by Poll
// (or the start position), so Position after a Poll is exactly where a restart resumes.
type Source struct {
	cl     *kgo.Client
	topic  string
	latest bool // start partitions without a position at their end, not their start
	dec    *connector.Decoder
	parts  int32           // partitions, 0 until discovered
	next   map[int32]int64 // next offset per partition, once known
	high   map[int32]int64 // each partition's high watermark, from the last fetch
	paused map[int32]bool
}

const sourceOptions = "connector, topic, properties.bootstrap.servers, format, scan.startup.mode"

// OpenSource validates a table's Kafka options (keys lower-case) and returns a source that
// resumes at pos (a Position from an earlier run; nil: a fresh start). It does not contact
// the brokers; Check and Poll do.
func OpenSource(opts map[string]string, cols []catalog.Column, pos []byte) (*Source, error) {
	o := connector.NewOptions("kafka", opts)
	topic, brokers, err := common(o)
	if err != nil {
		return nil, err
	}
	mode, err := o.Choice("scan.startup.mode", "earliest-offset", "earliest-offset", "latest-offset")
	if err != nil {
		return nil, err
	}
	s := &Source{topic: topic, dec: connector.NewDecoder(cols), next: map[int32]int64{}, high: map[int32]int64{},
		paused: map[int32]bool{}, latest: mode == "latest-offset"}
	if err := o.RejectUnused(sourceOptions); err != nil {
		return nil, err
	}
	if err := s.seek(pos); err != nil {
		return nil, err
	}
	// Read committed: records of transactions that are open or aborted are not the stream.
	// Their markers are kept, so that the position passes them (see Poll).
	s.cl, err = kgo.NewClient(append(clientOpts(brokers), kgo.FetchMaxWait(defaultFetchWait),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.KeepControlRecords())...)
	if err != nil {
		return nil, fmt.Errorf("kafka: %w", err)
	}
	return s, nil
}

// defaultFetchWait bounds how long a broker holds a fetch open when there is nothing new,
// so that an idle source still returns to its feeder (idleness ticks) often.
const defaultFetchWait = 200_000_000 // 200 ms

// seek decodes a position: a count, then (partition, next offset) pairs.
func (s *Source) seek(pos []byte) error {
	if len(pos) == 0 {
		return nil
	}
	n, k := binary.Uvarint(pos)
	pos = pos[max(k, 0):]
	for i := uint64(0); i < n && k > 0; i++ {
		var p, off int64
		if p, k = binary.Varint(pos); k > 0 {
			pos = pos[k:]
			if off, k = binary.Varint(pos); k > 0 {
				pos = pos[k:]
				s.next[int32(p)] = off
			}
		}
	}
	if k <= 0 || len(pos) != 0 {
		return errors.New("kafka: stored source position is corrupt")
	}
	return nil
}

// Position encodes every known partition's next offset.
func (s *Source) Position() []byte {
	ps := s.sortedParts()
	b := binary.AppendUvarint(nil, uint64(len(ps)))
	for _, p := range ps {
		b = binary.AppendVarint(b, int64(p))
		b = binary.AppendVarint(b, s.next[p])
	}
	return b
}

func (s *Source) sortedParts() []int32 {
	ps := make([]int32, 0, len(s.next))
	for p := range s.next {
		ps = append(ps, p)
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
	return ps
}

// Offset is the number of records taken so far: the sum of the partitions' next offsets.
func (s *Source) Offset() int64 {
	var n int64
	for _, o := range s.next {
		n += o
	}
	return n
}

// Lag is how many records the brokers held beyond the source's position at the last fetch.
func (s *Source) Lag() int64 {
	var n int64
	for p, h := range s.high {
		if d := h - s.next[p]; d > 0 {
			n += d
		}
	}
	return n
}

// Partitions is the topic's partition count, 0 before the first successful Check or Poll.
func (s *Source) Partitions() int { return int(s.parts) }

// Check looks the topic up and starts consuming it: an unreachable cluster or a missing
// topic is an error naming it.
func (s *Source) Check(ctx context.Context) error {
	if s.parts > 0 {
		return nil
	}
	parts, err := partitions(ctx, s.cl, s.topic)
	if err != nil {
		return err
	}
	for _, p := range parts {
		s.parts = max(s.parts, p+1)
	}
	// Every partition gets a concrete position now, so that the first commit (CREATE TABLE
	// commits Position) pins it: 'latest-offset' means the end at creation, not at each start.
	if err := s.resolveStart(ctx, parts); err != nil {
		s.parts = 0
		return err
	}
	s.consume()
	return nil
}

// resolveStart sets next for the partitions without a position: their start, or with
// 'latest-offset' their end, as the brokers report them.
func (s *Source) resolveStart(ctx context.Context, parts []int32) error {
	req := kmsg.NewPtrListOffsetsRequest()
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = s.topic
	for _, p := range parts {
		if _, ok := s.next[p]; ok {
			continue
		}
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Partition, rp.Timestamp = p, -2 // earliest
		if s.latest {
			rp.Timestamp = -1
		}
		rt.Partitions = append(rt.Partitions, rp)
	}
	if len(rt.Partitions) == 0 {
		return nil
	}
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, s.cl)
	if err != nil {
		return fmt.Errorf("kafka: topic '%s': listing offsets: %w", s.topic, err)
	}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				return fmt.Errorf("kafka: topic '%s' partition %d: listing offsets: %w", s.topic, p.Partition, err)
			}
			s.next[p.Partition] = p.Offset
		}
	}
	return nil
}

// consume (re)starts fetching every partition at its position.
func (s *Source) consume() {
	start := map[int32]kgo.Offset{}
	for p, off := range s.next {
		start[p] = kgo.NewOffset().At(off)
	}
	s.cl.AddConsumePartitions(map[string]map[int32]kgo.Offset{s.topic: start})
}

// Restart drops what the client buffered and fetches every partition again from its
// position: after a partition error, which franz-go does not retry by itself.
func (s *Source) Restart() {
	if s.parts == 0 {
		return
	}
	all := make([]int32, 0, len(s.next))
	for p := range s.next {
		all = append(all, p)
	}
	s.cl.RemoveConsumePartitions(map[string][]int32{s.topic: all})
	s.consume()
	// s.paused stands: franz-go keeps partitions paused across removing and adding them, so
	// forgetting them here left one paused for good when it was to resume.
}

// Poll waits until records arrive or ctx is done, and returns up to max of them decoded.
// A done ctx returns an empty chunk and no error, so callers can poll with a deadline. The
// first Poll (before Check succeeded) only starts the source: its error is Check's (the
// brokers or the topic cannot be reached, or did not answer by ctx's deadline); fetch
// errors come in the chunk with the records that did arrive.
func (s *Source) Poll(ctx context.Context, max int) (connector.Chunk, error) {
	if s.parts == 0 {
		// Starting (the look-up takes round trips: callers give it time): a deadline that
		// passes is an error, the brokers do not answer; a cancelled ctx is none. The next
		// Poll fetches.
		if err := s.Check(ctx); err != nil && !errors.Is(ctx.Err(), context.Canceled) {
			return connector.Chunk{}, err
		}
		return connector.Chunk{}, nil
	}
	fs := s.cl.PollRecords(ctx, max)
	var rows [][]any
	var ch connector.Chunk
	fs.EachPartition(func(p kgo.FetchTopicPartition) {
		if p.Err != nil && !errors.Is(p.Err, context.Canceled) && !errors.Is(p.Err, context.DeadlineExceeded) && ch.Err == nil {
			ch.Err = fmt.Errorf("kafka: topic '%s' partition %d: %w", s.topic, p.Partition, p.Err)
		}
		if p.Topic != s.topic {
			return
		}
		s.high[p.Partition] = p.HighWatermark
		for _, r := range p.Records {
			s.next[r.Partition] = r.Offset + 1
			if r.Attrs.IsControl() {
				// A transaction's marker holds an offset and no data: passed, not read (a
				// partition ending with one would otherwise keep a lag of 1).
				continue
			}
			var row []any
			var err error
			if r.Value == nil {
				err = errors.New("not a JSON object: a tombstone (a record with a null value)")
			} else {
				row, err = s.dec.DecodeJSON(r.Value)
			}
			if err != nil {
				ch.Bad = append(ch.Bad, connector.BadRecord{Partition: r.Partition, Offset: r.Offset, Err: err.Error(), Value: r.Value})
				continue
			}
			rows = append(rows, row)
			ch.Parts = append(ch.Parts, r.Partition)
			ch.Offs = append(ch.Offs, r.Offset)
			ch.Vals = append(ch.Vals, r.Value)
		}
	})
	if len(rows) > 0 {
		ch.Rows = s.dec.Batch(rows)
	}
	if len(rows) > 0 || len(ch.Bad) > 0 {
		ch.Pos = s.Position()
	}
	return ch, nil
}

// SetPaused pauses the partitions in paused and resumes every other: alignment, so a
// partition running ahead is not read (nor buffered) until the others catch up.
func (s *Source) SetPaused(paused map[int32]bool) {
	var pause, resume []int32
	for p := int32(0); p < s.parts; p++ {
		switch {
		case paused[p] && !s.paused[p]:
			pause = append(pause, p)
		case !paused[p] && s.paused[p]:
			resume = append(resume, p)
		}
	}
	if len(pause) > 0 {
		s.cl.PauseFetchPartitions(map[string][]int32{s.topic: pause})
	}
	if len(resume) > 0 {
		s.cl.ResumeFetchPartitions(map[string][]int32{s.topic: resume})
	}
	s.paused = map[int32]bool{}
	for p, on := range paused {
		if on {
			s.paused[p] = true
		}
	}
}

// Close releases the client.
func (s *Source) Close() { s.cl.Close() }
