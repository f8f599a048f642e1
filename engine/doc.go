// Package engine executes statements against one database: it owns the state store, the
// catalog, the stored tables and the dataflows that keep materialized views current.
//
// Statements run one at a time under the engine's lock. A write commits to the store
// first, durably, and only then changes memory and feeds the views, so a failed statement
// changes nothing and a returned one survives a crash.
//
// Views are kept current synchronously: an INSERT returns once every view has absorbed its
// rows, so FLUSH has nothing to wait for. On Open, every view is rebuilt by replaying its
// tables' stored rows in acceptance order under the same rules as when they arrived
// (backfill), which gives the same view contents and late rows as the original run.
//
// Invariant: the store is the truth; memory is derived from it (tables loaded, views
// replayed), so Close and Open, or a crash and Open, yield the same database.
package engine
