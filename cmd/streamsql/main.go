// Command streamsql is the streamsql shell: `streamsql [PATH]` opens a
// database (in memory without PATH) for interactive SQL; -c, -f and piped
// stdin run scripts; `streamsql test FILE.slt...` runs sqllogictest files.
// The shell itself lives in internal/shell and reaches the engine only
// through the database/sql driver "streamsql" registered by the import below.
package main

import (
	"os"
	"runtime/debug"

	_ "github.com/streamsql/streamsql" // registers the "streamsql" driver
	"github.com/streamsql/streamsql/cmd/streamsql/internal/shell"
)

func main() {
	os.Exit(shell.Main(shell.OSEnv("streamsql", version())))
}

// version is the module version the binary was built from, or "devel".
func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}
