// Package shell is the streamsql command line: an interactive SQL shell
// over database/sql (readline editing, history, completion, boxed results,
// dot commands), its non-interactive forms (-c, -f, stdin) and
// `streamsql test`. It knows the engine only as a database/sql driver name,
// so it is tested with a fake driver; cmd/streamsql wires in the engine.
//
// Invariant: one statement runs at a time on one connection, and Interrupt
// cancels only that statement, never the shell.
package shell
