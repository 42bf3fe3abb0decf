// Command lnk-run-tool is Link Run, an agent's run tool (run-<agent id>),
// outside every sandbox:
//
//	lnk-run-tool serve --agent NAME           the MCP server, on stdio
//	lnk-run-tool supervise --agent NAME --id ID   a background command's supervisor (serve starts it)
//	lnk-run-tool stop-all --agent NAME        stop every background command of the agent
//
// Each call runs in the agent's sandbox through the kernel, in-process
// by services/sandboxrun (the orchestrator lnk sandbox run --agent
// calls), with the lnk beside this program starting the kernel on
// demand (lnk.dev/lnk/services/runtool).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/beside"
	"lnk.dev/lnk/services/runtool"
	"lnk.dev/lnk/services/runtool/server"
)

// The supervisor's sandbox gets PR_SET_PDEATHSIG from the thread that
// starts it: main's goroutine stays on the main thread, which lives as
// long as the process.
func init() { runtime.LockOSThread() }

const usage = `usage:
  lnk-run-tool serve --agent NAME
  lnk-run-tool supervise --agent NAME --id ID
  lnk-run-tool stop-all --agent NAME`

func fail(code int, err error) {
	fmt.Fprintln(os.Stderr, "lnk-run-tool:", err)
	os.Exit(code)
}

func main() {
	if len(os.Args) < 2 {
		fail(2, errors.New(usage))
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	name := fs.String("agent", "", "the agent whose run tool")
	id := fs.String("id", "", "the background command (supervise)")
	fs.Parse(os.Args[2:])
	if *name == "" || fs.NArg() != 0 {
		fail(2, errors.New(usage))
	}
	// The run tool holds, for each call, what its sandbox is told of
	// its proxy (its secret): out of core dumps and out of reach of the
	// owner's other processes (/proc/PID/mem, ptrace), as lnk is.
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		fail(1, fmt.Errorf("prctl(PR_SET_DUMPABLE): %w", err))
	}
	exe, err := os.Executable() // this program, its supervisor too
	if err != nil {
		fail(1, err)
	}
	lnk, err := beside.Program("lnk")
	if err != nil {
		fail(1, err)
	}
	a, err := runtool.LoadAgent(os.Getenv("HOME"), *name, lnk)
	if err != nil {
		fail(1, err)
	}
	// The kernel this process may start on demand, and every sandbox it
	// starts, get only what finds the owner's HOME and programs.
	if err := a.KeepOnlyChildEnv(); err != nil {
		fail(1, err)
	}
	switch os.Args[1] {
	case "serve":
		s := &server.Server{Agent: a, Supervisor: []string{exe, "supervise"}, Log: os.Stderr, Deliver: a.DeliverToWayIn}
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
		defer stop()
		if err := s.MCP().Run(ctx, &mcp.StdioTransport{}); err != nil && ctx.Err() == nil {
			fail(1, err)
		}
	case "supervise":
		// 3: the record's lock (taken), 4: the output, 5: the working
		// folder, 6: the word to serve that the sandbox started.
		// Close-on-exec first: the sandbox's lnk, which may outlive
		// none of them, must hold neither the lock nor the word's pipe.
		f := func(fd int, n string) *os.File {
			syscall.CloseOnExec(fd)
			return os.NewFile(uintptr(fd), n)
		}
		err := a.Supervise(*id, f(3, "lock"), f(4, "output"), f(5, "folder"), f(6, "ready"))
		// Its ending, recorded, is handed to the agent's way in (with any
		// other still untold); one not taken stays for the next delivery.
		if derr := a.DeliverToWayIn(context.Background()); derr != nil {
			fmt.Fprintln(os.Stderr, "lnk-run-tool: the endings stay to be told:", derr)
		}
		if err != nil {
			fail(1, err)
		}
	case "stop-all":
		if err := a.StopAll(); err != nil {
			fail(1, err)
		}
	default:
		fail(2, errors.New(usage))
	}
}
