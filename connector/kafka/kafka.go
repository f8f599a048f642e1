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
	"context"
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamsql/streamsql/connector"
)

// required takes an option that must be given.
func required(o *connector.Options, key, what string) (string, error) {
	v, ok := o.Take(key)
	if !ok || strings.TrimSpace(v) == "" {
		return "", fmt.Errorf("kafka: option '%s' is required: %s", key, what)
	}
	return strings.TrimSpace(v), nil
}

// common reads the options every Kafka connector takes: the topic, the brokers and the
// format (only 'json').
func common(o *connector.Options) (topic string, brokers []string, err error) {
	o.Take("connector")
	if topic, err = required(o, "topic", "the topic's name"); err != nil {
		return "", nil, err
	}
	servers, err := required(o, "properties.bootstrap.servers", "a comma-separated list of host:port")
	if err != nil {
		return "", nil, err
	}
	for _, s := range strings.Split(servers, ",") {
		if s = strings.TrimSpace(s); s != "" {
			brokers = append(brokers, s)
		}
	}
	if len(brokers) == 0 {
		return "", nil, fmt.Errorf("kafka: option 'properties.bootstrap.servers' = '%s' names no broker: expected a comma-separated list of host:port", servers)
	}
	if _, err := o.Choice("format", "json", "json"); err != nil {
		return "", nil, err
	}
	return topic, brokers, nil
}

// clientOpts are the franz-go options both sides share.
func clientOpts(brokers []string) []kgo.Opt {
	return []kgo.Opt{kgo.SeedBrokers(brokers...), kgo.ClientID("streamsql")}
}

// partitions looks a topic up: its partitions, or an error naming the topic (or the
// brokers, when they cannot be reached).
func partitions(ctx context.Context, cl *kgo.Client, topic string) ([]int32, error) {
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, fmt.Errorf("kafka: cannot reach the brokers: %w", err)
	}
	if len(resp.Topics) != 1 {
		return nil, fmt.Errorf("kafka: topic '%s': no metadata", topic)
	}
	t := resp.Topics[0]
	if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
		return nil, fmt.Errorf("kafka: topic '%s': %w", topic, err)
	}
	if len(t.Partitions) == 0 {
		return nil, fmt.Errorf("kafka: topic '%s' has no partitions", topic)
	}
	parts := make([]int32, len(t.Partitions))
	for i, p := range t.Partitions {
		parts[i] = p.Partition
	}
	return parts, nil
}
