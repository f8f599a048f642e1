// Package oracle checks the batch sqllogictest corpus against DuckDB, an
// independent engine, so that the expected results in
// testdata/sqllogic/batch are known to be right and not merely what
// streamsql happens to return; and checks views after random streaming
// workloads, and random batch queries (fuzz_test.go), against DuckDB's
// answers over the same rows.
//
// It is a nested module so that DuckDB (cgo, a large static library) never
// enters the main module's dependency graph: the product does not link it,
// and only this test needs a C toolchain.
//
// Invariant: every record of the batch corpus either passes on DuckDB or is
// marked `skipif duckdb` / `onlyif streamsql` with a comment saying why the
// two engines differ by design (SPEC.md wins).
package oracle
