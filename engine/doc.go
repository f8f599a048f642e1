// Package engine executes statements against one database: it owns the state store, the
// catalog, the stored tables, the dataflows that keep materialized views current, their
// checkpoints, and the connectors feeding tables.
//
// Statements run one at a time under the engine's lock. A write commits to the store first,
// durably, and only then changes memory, so a failed statement changes nothing and a
// returned one survives a crash. Its change then waits in a bounded queue for the views
// (ingest.go): a background worker, or the next statement that reads — FLUSH, a query, DDL,
// SUBSCRIBE, CHECKPOINT — delivers queued changes, merging consecutive inserts of a table.
//
// Invariant: the store is the truth; memory is derived from it. Open restores the last
// checkpoint (every view's operator state and rows) and replays the table changes stored
// after it, through the same operators, so Close and Open, or a crash and Open, yield the
// views of the original run.
package engine
