// Package kafka connects tables and views to Kafka topics through franz-go.
//
// A Source reads every partition of a topic into a table. Each Poll returns a Chunk: the
// decoded rows in offset order per partition, each row's partition, the records that could
// not be decoded, and the position after them (every partition's next offset). The engine
// commits a chunk's rows, bad records and position in one Pebble batch, so after a crash the
// source resumes exactly after the last committed record: every record lands exactly once.
//
// A Sink writes a view's changelog to a topic as upserts keyed by the sink's key columns
// (Flink's upsert-kafka): an insert, or the new side of an update, is a record whose value
// is the row as a JSON object; a delete is a tombstone (nil value); the old side of an
// update is skipped. Flush waits until every record handed over is acknowledged. The engine
// flushes a sink before a checkpoint commits and a restart replays the changes after the
// checkpoint, so each key's last record is the view's row: at least once, idempotent by key.
package kafka

import (
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
)

// options reads a WITH list (keys lower-case) and reports the keys nobody took.
type options struct {
	m    map[string]string
	used map[string]bool
}

func (o *options) take(key string) (string, bool) {
	v, ok := o.m[key]
	if ok {
		o.used[key] = true
	}
	return v, ok
}

func (o *options) required(key, what string) (string, error) {
	v, ok := o.take(key)
	if !ok || strings.TrimSpace(v) == "" {
		return "", fmt.Errorf("kafka: option '%s' is required: %s", key, what)
	}
	return strings.TrimSpace(v), nil
}

func (o *options) rejectUnused(known string) error {
	for k := range o.m {
		if !o.used[k] {
			return fmt.Errorf("kafka: unknown option '%s' (known: %s)", k, known)
		}
	}
	return nil
}

// common reads the options every Kafka connector takes: the topic, the brokers and the
// format (only 'json').
func (o *options) common() (topic string, brokers []string, err error) {
	o.take("connector")
	if topic, err = o.required("topic", "the topic's name"); err != nil {
		return "", nil, err
	}
	servers, err := o.required("properties.bootstrap.servers", "a comma-separated list of host:port")
	if err != nil {
		return "", nil, err
	}
	for _, s := range strings.Split(servers, ",") {
		if s = strings.TrimSpace(s); s != "" {
			brokers = append(brokers, s)
		}
	}
	if f, ok := o.take("format"); ok && !strings.EqualFold(strings.TrimSpace(f), "json") {
		return "", nil, fmt.Errorf("kafka: option 'format' = '%s': expected 'json'", f)
	}
	return topic, brokers, nil
}

// clientOpts are the franz-go options both sides share.
func clientOpts(brokers []string) []kgo.Opt {
	return []kgo.Opt{kgo.SeedBrokers(brokers...), kgo.ClientID("streamsql")}
}
