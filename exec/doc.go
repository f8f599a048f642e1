// Package exec is streamsql's dataflow runtime: the one operator contract, the in-band
// message type, weighted columnar batches, expression evaluation over Arrow arrays, and the
// general operators (scan, filter, project, hash aggregate, hash join, sort, limit, union,
// distinct, sinks).
//
// # The operator contract
//
// An Operator receives messages through Push, in order, on numbered input ports (0 for
// single-input operators; 0 = left and 1 = right for joins). A message is a Batch of weighted
// rows, a Watermark, or End. An operator forwards its results to its Output synchronously
// from inside Push, so a source that pushes a batch returns only once every downstream
// operator has absorbed it: backpressure is the call stack and memory is bounded by the
// operators' state, never by queues.
//
//   - Batches: the callee may read a batch only during Push; it must not mutate it and must
//     copy (or Retain the arrays of) anything it keeps. A weight (Batch.W) is +1 for an
//     insertion and -1 for a retraction; joins multiply weights and aggregates add them.
//   - Watermarks never decrease on a port. An operator with several inputs forwards the
//     minimum of its inputs' watermarks.
//   - End arrives once per port, last. A bounded (batch) query is a stream that ends: the
//     same operators serve SELECT and materialized views; blocking operators (sort, limit,
//     batch-mode aggregation) emit at End.
//
// Invariant: operators are plans plus per-run state; nothing in this package reads the wall
// clock, so a replay of the same messages produces the same output.
package exec
