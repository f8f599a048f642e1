package shell

import (
	"os"
	"os/signal"
	"path/filepath"

	"github.com/chzyer/readline"
)

// OSEnv is the Env of the running process: its arguments and standard
// streams, terminal detection and width, SIGINT, and the history file
// ~/.streamsql_history.
func OSEnv(driver, version string) Env {
	ints := make(chan os.Signal, 1)
	signal.Notify(ints, os.Interrupt)
	env := Env{
		Args:       os.Args[1:],
		Stdin:      os.Stdin,
		Stdout:     os.Stdout,
		Stderr:     os.Stderr,
		Driver:     driver,
		Version:    version,
		StdinTTY:   readline.IsTerminal(int(os.Stdin.Fd())),
		StdoutTTY:  readline.IsTerminal(int(os.Stdout.Fd())),
		StderrTTY:  readline.IsTerminal(int(os.Stderr.Fd())),
		Interrupts: ints,
	}
	if env.StdoutTTY {
		env.Width = func() int {
			w, _, err := readline.GetSize(int(os.Stdout.Fd()))
			if err != nil {
				return 0
			}
			return w
		}
	}
	if home, err := os.UserHomeDir(); err == nil {
		env.HistoryFile = filepath.Join(home, ".streamsql_history")
	}
	return env
}
