// Command lnk-harness is Link Harness, the agent's own harness: it reads
// its config.json (the path in its one argument, else $HOME/config.json),
// serves the agent's endpoint on 127.0.0.1:$LNK_PORT and runs each
// message's turn (services/harness/serve). It runs inside the agent's
// sandbox, started by the agent's supervisor (services/agentlife), which
// appends its stderr to the agent's log; SIGTERM ends it once the turns
// running finish (30 s at most).
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"lnk.dev/lnk/internal/textsafe"
	"lnk.dev/lnk/services/harness/config"
	"lnk.dev/lnk/services/harness/endpoint"
	"lnk.dev/lnk/services/harness/serve"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "lnk-harness: %s\n", textsafe.Line(err.Error()))
		os.Exit(1)
	}
}

func logf(format string, args ...any) {
	fmt.Fprintln(os.Stderr, textsafe.Line(fmt.Sprintf(format, args...)))
}

func run(args []string) error {
	var path string
	switch len(args) {
	case 0:
		path = filepath.Join(os.Getenv("HOME"), config.File)
	case 1:
		path = args[0]
	default:
		return fmt.Errorf("usage: lnk-harness [CONFIG.json]")
	}
	if !filepath.IsAbs(path) {
		return fmt.Errorf("refused config.json %q: not an absolute path", path)
	}
	c, err := config.ReadPath(path)
	if err != nil {
		return fmt.Errorf("refused %s: %w", path, err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	o := serve.Options{Logf: logf}
	if os.Getenv("LNK_SANDBOX") == "1" { // a network of its own: its supervisor carries the port in
		o.Socket = filepath.Join(filepath.Dir(path), endpoint.SocketName)
	}
	if err := serve.Run(ctx, []*config.Config{c}, os.Getenv("LNK_PORT"), o); err != nil {
		return err
	}
	logf("lnk-harness: agent %s stopped", c.Name)
	return nil
}
