// Command lnk-toolhub runs one shared tool's server for every session of
// every sandbox naming it, on ~/.lnk/sandbox/tools/<name>-<key>.sock. The
// first bridge to need it starts it, outside every sandbox; see
// services/toolbridge/hub.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"lnk.dev/lnk/services/toolbridge/hub"
)

func main() {
	var cfg hub.Config
	fs := flag.NewFlagSet("lnk-toolhub", flag.ContinueOnError)
	fs.StringVar(&cfg.Dir, "dir", "", "Link's settings folder (~/.lnk)")
	fs.StringVar(&cfg.Name, "name", "", "the shared tool")
	fs.StringVar(&cfg.Key, "key", "", "the key naming what the tool runs as")
	fs.DurationVar(&cfg.Idle, "idle", 5*time.Minute, "stop after this long with no session")
	if err := fs.Parse(os.Args[1:]); err != nil || fs.NArg() > 0 || cfg.Dir == "" || cfg.Name == "" || cfg.Key == "" {
		fmt.Fprintln(os.Stderr, "lnk-toolhub: usage: lnk-toolhub --dir ~/.lnk --name TOOL --key KEY [--idle 5m]")
		os.Exit(2)
	}
	syscall.Umask(0o077)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	defer stop()
	err := hub.Run(ctx, cfg)
	if errors.Is(err, hub.ErrRunning) {
		return // another hub serves this socket
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "lnk-toolhub:", err)
		os.Exit(1)
	}
}
