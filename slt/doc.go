// Package slt runs sqllogictest files against any database/sql engine.
//
// The format is the classic one (SPEC.md §5): records separated by blank
// lines; `statement ok`, `statement error [regex]`, `query <types>
// [nosort|rowsort|valuesort] [label]` followed by SQL, `----` and the expected
// values, one per line; `query error <regex>`; `hash-threshold N`;
// `skipif <engine>` / `onlyif <engine>` prefixes; `halt`; `# comments`.
//
// Values are formatted as follows (the contract the expected lines are
// written against):
//
//   - NULL is `NULL`, the empty string `(empty)`, booleans `true`/`false`.
//   - I: integers in decimal; a float is truncated toward zero; text as is.
//   - R: `%.3f` for floats and integers, and for text or Stringer values
//     that parse as a number (DECIMAL scans as a string).
//   - T (and any other letter): text as is, integers in decimal, floats as
//     the shortest decimal that round-trips without an exponent
//     (strconv 'f', -1); NaN and infinities as NaN, Infinity, -Infinity.
//   - time.Time in UTC: `YYYY-MM-DD HH:MM:SS`, plus `.fff` when the
//     milliseconds are non-zero (more digits only if sub-millisecond
//     digits are present); a DATE column (database type name containing
//     DATE but not TIME) as `YYYY-MM-DD`.
//   - []byte as text; *big.Int and other fmt.Stringer values by String().
//
// Comparison: rowsort sorts the result rows (as sequences of formatted
// values) and valuesort all values; for both, the expected values are
// normalised the same way, so only the multiset matters. nosort compares in
// the order returned. Expected values are one per line; when the count does
// not match but the number of expected lines equals the number of rows, each
// line is compared with the row's values joined by single spaces (runs of
// spaces or tabs in the expected line count as one). An expected single line
// `N values hashing to <md5>` is compared against the md5 of the values each
// followed by "\n" (after sorting), whatever the hash-threshold; the
// threshold only chooses the hashed form when a mismatch is reported.
//
// Invariant: every record of a file is either executed or skipped, and each
// executed record ends as exactly one pass or one Failure; an unexpected
// error never stops the file.
package slt
