package shell

import (
	"database/sql"
	"fmt"
	"strings"

	"github.com/streamsql/streamsql/slt"
)

// runTests is `streamsql test FILE.slt...`: each file runs on a fresh
// in-memory database; it prints PASS lines or the failures, then a count of
// files passed and failed, and returns 1 if any failed.
func runTests(env Env, files []string) int {
	const usage = "usage: streamsql test FILE.slt..."
	for _, f := range files {
		switch {
		case f == "-h" || f == "--help" || f == "-help":
			fmt.Fprintln(env.Stdout, usage)
			return 0
		case strings.HasPrefix(f, "-"):
			fmt.Fprintf(env.Stderr, "Error: streamsql test takes no option %s; %s\n", f, usage)
			return 2
		}
	}
	if len(files) == 0 {
		fmt.Fprintln(env.Stderr, "Error: "+usage)
		return 2
	}
	opt := slt.Options{
		Engine: "streamsql",
		Open:   func() (*sql.DB, error) { return sql.Open(env.Driver, ":memory:") },
	}
	passed, failed := 0, 0
	for _, f := range files {
		res, err := slt.RunFile(f, opt)
		if err != nil {
			failed++
			fmt.Fprintf(env.Stdout, "FAIL %s: %v\n", f, err)
			continue
		}
		counts := fmt.Sprintf("%d records", res.Records)
		if res.Records == 1 {
			counts = "1 record"
		}
		if res.Skipped > 0 {
			counts += fmt.Sprintf(", %d skipped", res.Skipped)
		}
		if len(res.Failures) == 0 {
			passed++
			fmt.Fprintf(env.Stdout, "PASS %s (%s)\n", f, counts)
			continue
		}
		failed++
		fmt.Fprintf(env.Stdout, "FAIL %s (%s, %d failed)\n", f, counts, len(res.Failures))
		for _, fl := range res.Failures {
			msg := strings.Split(fl.Msg, "\n")
			fmt.Fprintf(env.Stdout, "%s:%d: %s\n", fl.File, fl.Line, msg[0])
			fmt.Fprintf(env.Stdout, "    %s\n", strings.ReplaceAll(fl.SQL, "\n", "\n    "))
			for _, l := range msg[1:] {
				fmt.Fprintf(env.Stdout, "    %s\n", l)
			}
		}
	}
	fmt.Fprintf(env.Stdout, "%d passed, %d failed\n", passed, failed)
	if failed > 0 {
		return 1
	}
	return 0
}
