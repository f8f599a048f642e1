package streamsql_test

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/streamsql/streamsql"
	"github.com/streamsql/streamsql/slt"
)

// TestSQLLogic runs every sqllogictest file under testdata/sqllogic on a fresh in-memory
// database per file.
func TestSQLLogic(t *testing.T) {
	var files []string
	err := filepath.WalkDir("testdata/sqllogic", func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".slt") {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no .slt files found")
	}
	for _, f := range files {
		name := strings.TrimSuffix(strings.TrimPrefix(f, "testdata/sqllogic/"), ".slt")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			runSLT(t, f, ":memory:")
		})
		// Metamorphic: streaming results must not depend on how inserted rows are batched.
		if strings.HasPrefix(name, "streaming/") {
			seed := int64(len(name)*7919 + 1)
			t.Run(name+"/split", func(t *testing.T) {
				t.Parallel()
				t.Logf("rows split into random batches, seed %d", seed)
				runSLT(t, f, fmt.Sprintf(":memory:?_split_batches=%d", seed))
			})
		}
	}
}

func runSLT(t *testing.T, f, dsn string) {
	res, err := slt.RunFile(f, slt.Options{Engine: "streamsql", Open: func() (*sql.DB, error) {
		return sql.Open("streamsql", dsn)
	}})
	if err != nil {
		t.Fatal(err)
	}
	for _, fl := range res.Failures {
		t.Errorf("%s", fl)
	}
	t.Logf("%d records, %d passed, %d skipped", res.Records, res.Passed, res.Skipped)
}
