package kafka

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/streamsql/streamsql/connector"
)

// Sink produces upsert records to a topic. Write may be called by one goroutine at a time;
// delivery errors are kept and returned by the next Flush.
type Sink struct {
	cl    *kgo.Client
	topic string
	// Key are the indexes of the key columns among the view's columns.
	Key []int

	mu  sync.Mutex
	err error
	// stuck is when the Flushes that have failed since the last one that succeeded began.
	stuck time.Time
}

const sinkOptions = "connector, topic, properties.bootstrap.servers, format, key"

// deliveryTimeout bounds how long a record may wait for the brokers before the sink fails:
// a cluster that is down stops the sink with an error instead of blocking writers forever.
const deliveryTimeout = 30 * time.Second

// OpenSink validates a sink's Kafka options (keys lower-case) for a view with columns names.
// 'key' is a comma-separated list of the view's columns (default: all of them). It does not
// contact the brokers; Check does.
func OpenSink(opts map[string]string, names []string) (*Sink, error) {
	o := connector.NewOptions("kafka", opts)
	topic, brokers, err := common(o)
	if err != nil {
		return nil, err
	}
	s := &Sink{topic: topic}
	if k, ok := o.Take("key"); ok {
		for _, n := range strings.Split(k, ",") {
			n = strings.TrimSpace(n)
			i := indexFold(names, n)
			if i < 0 {
				return nil, fmt.Errorf("kafka: option 'key': the view has no column '%s' (columns: %s)", n, strings.Join(names, ", "))
			}
			s.Key = append(s.Key, i)
		}
	} else {
		for i := range names {
			s.Key = append(s.Key, i)
		}
	}
	if err := o.RejectUnused(sinkOptions); err != nil {
		return nil, err
	}
	s.cl, err = kgo.NewClient(append(clientOpts(brokers), kgo.DefaultProduceTopic(topic), kgo.RecordDeliveryTimeout(deliveryTimeout))...)
	if err != nil {
		return nil, fmt.Errorf("kafka: %w", err)
	}
	return s, nil
}

func indexFold(names []string, n string) int {
	for i, x := range names {
		if strings.EqualFold(x, n) {
			return i
		}
	}
	return -1
}

// Check verifies that the topic exists.
func (s *Sink) Check(ctx context.Context) error {
	_, err := partitions(ctx, s.cl, s.topic)
	return err
}

// Write hands a record over; value nil is a tombstone. It blocks while the client's buffer
// is full (backpressure), at most until records time out.
func (s *Sink) Write(key, value []byte) {
	s.cl.Produce(context.Background(), &kgo.Record{Key: key, Value: value}, func(_ *kgo.Record, err error) {
		if err != nil {
			s.mu.Lock()
			if s.err == nil {
				s.err = fmt.Errorf("kafka sink to topic '%s': %w", s.topic, err)
			}
			s.mu.Unlock()
		}
	})
}

// Flush waits until every record written is acknowledged and returns the first delivery
// error since the sink opened (a failed sink stays failed: records may be missing). It waits
// at most deliveryTimeout, and the sink fails once its Flushes have failed for that long:
// brokers that went away (whose records the client may hold without timing them out) end in
// an error, not in FLUSH and checkpoints waiting forever.
func (s *Sink) Flush(ctx context.Context) error {
	s.mu.Lock()
	err := s.err
	s.mu.Unlock()
	if err != nil {
		return err
	}
	start := time.Now()
	fctx, cancel := context.WithTimeout(ctx, deliveryTimeout)
	defer cancel()
	err = s.cl.Flush(fctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err == nil {
		s.stuck = time.Time{}
		return s.err
	}
	if s.stuck.IsZero() {
		s.stuck = start
	}
	if s.err == nil && time.Since(s.stuck) >= deliveryTimeout {
		s.err = fmt.Errorf("kafka sink to topic '%s': records not acknowledged for %s; the sink has failed (reopen the database to retry)", s.topic, deliveryTimeout)
	}
	if s.err != nil {
		return s.err
	}
	return fmt.Errorf("kafka sink to topic '%s': %w", s.topic, err)
}

// Close flushes what it can within a short time, unless the sink has failed, and releases
// the client.
func (s *Sink) Close() {
	s.mu.Lock()
	failed := s.err != nil
	s.mu.Unlock()
	if !failed {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = s.cl.Flush(ctx)
	}
	s.cl.Close()
}
