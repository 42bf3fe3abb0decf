// Command lnk-file-serve is the file tool's MCP server on stdio
// (lnk.dev/lnk/services/filetool), what `lnk-file-tool serve` becomes:
//
//	lnk-file-serve [--no-find] [--no-diffs] -- COMMAND...
//	lnk-file-serve [--no-find] [--no-diffs] --agent NAME
//
// It runs every call in COMMAND, which Link makes `lnk sandbox run … --
// lnk-file-tool apply …`; with --agent NAME, COMMAND is `lnk sandbox
// file --agent NAME` (lnk beside this program). It runs outside every
// sandbox and touches no file itself.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"syscall"

	"lnk.dev/lnk/internal/beside"
	"lnk.dev/lnk/internal/mcpstdio"
	"lnk.dev/lnk/services/filetool"
)

func main() { serve(os.Args[1:]) }

func fail(code int, err error) {
	fmt.Fprintln(os.Stderr, "lnk-file-tool:", err)
	os.Exit(code)
}

func serve(args []string) {
	fs := flag.NewFlagSet("serve", flag.ExitOnError)
	var o filetool.Offer
	fs.BoolVar(&o.NoFind, "no-find", false, "leave find out")
	fs.BoolVar(&o.NoDiffs, "no-diffs", false, "leave each write's diff out")
	agent := fs.String("agent", "", "run the calls in the agent's file sandbox (lnk sandbox file --agent NAME)")
	fs.Parse(args)
	argv := fs.Args()
	switch {
	case *agent != "" && len(argv) > 0:
		fail(2, errors.New("serve takes --agent or a command after --, not both"))
	case *agent != "":
		lnk, err := beside.Program("lnk")
		if err != nil {
			fail(1, err)
		}
		argv = []string{lnk, "sandbox", "file", "--agent", *agent}
	case len(argv) == 0:
		fail(2, errors.New("serve needs --agent NAME or a command after --, which runs the calls"))
	}
	sb := &filetool.Sandboxed{Argv: argv, Log: os.Stderr}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	runtime.GOMAXPROCS(1)   // one call at a time: see oneP in cmd/lnk-file-tool
	debug.SetGCPercent(400) // its live heap is small: collect less often
	t := mcpstdio.Stdio()
	if err := filetool.Serve(ctx, o, sb, t); err != nil && ctx.Err() == nil {
		fail(1, err)
	}
}
