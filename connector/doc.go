// Package connector holds the sources that feed a table declared with
// WITH (connector = ...) (SPEC.md §2): the Nexmark benchmark generator ('nexmark') and a
// per-column data generator ('datagen'); subpackage kafka reads and writes Kafka topics,
// subpackage file reads files of lines. What every connector shares lives here: the option
// reader (Options), the record decoder (Decoder: JSON objects, CSV fields) and the unit a
// source hands the engine to commit at once (Chunk: rows, partitions, bad records, position).
//
// A Source numbers its rows from 0 and is a pure function of its options and the table's
// columns: row n is computed from (seed, n) alone, with a counter-based hash rather than a
// shared random stream, so SeekTo(n) costs O(1) and no state other than the offset needs saving.
//
// Invariant: for fixed options and columns, the rows returned after SeekTo(n) are exactly rows
// n, n+1, ... of a fresh run, whatever the batch sizes asked of Next and whatever the clock
// says. The engine stores Offset() atomically with the rows it ingested and, after a crash,
// seeks there to resume exactly once. The single documented exception is a datagen
// TIMESTAMP column with 'fields.<col>.mode' = 'now', which reads the Clock.
//
// Time is injected (a Clock): rate limiting sleeps through it, so tests advance a fake clock
// instead of sleeping.
package connector
