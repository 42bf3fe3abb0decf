// Command lnk-scheduler-tool is Link Scheduler, an agent's scheduler
// tool (scheduler-<agent id>), outside every sandbox:
//
//	lnk-scheduler-tool serve --agent NAME   the MCP server, on stdio
//
// It writes the agent's jobs (~/Link/Agents/<agent>/Agent/schedule,
// 0700) and nothing else: before it reads a byte of a call it confines
// itself with landlock to that folder alone (read and write, no exec)
// and with seccomp to no exec and no socket. The jobs fire from the
// agent's supervisor, through its way in (services/wayin), never from
// here (services/scheduler).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sys/unix"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/landlock"
	"lnk.dev/lnk/internal/seccomp"
	"lnk.dev/lnk/services/scheduler"
)

const usage = "usage: lnk-scheduler-tool serve --agent NAME"

func fail(code int, err error) {
	fmt.Fprintln(os.Stderr, "lnk-scheduler-tool:", err)
	os.Exit(code)
}

func main() {
	if len(os.Args) < 2 || os.Args[1] != "serve" {
		fail(2, errors.New(usage))
	}
	fs := flag.NewFlagSet("serve", flag.ExitOnError)
	name := fs.String("agent", "", "the agent whose scheduler")
	fs.Parse(os.Args[2:])
	if *name == "" || fs.NArg() != 0 {
		fail(2, errors.New(usage))
	}
	home, err := filepath.EvalSymlinks(filepath.Clean(os.Getenv("HOME")))
	if err != nil {
		fail(1, fmt.Errorf("HOME: %w", err))
	}
	// What it needs of the owner's settings is read before confinement:
	// the agent's [tool.scheduler] limits. Where landlock's re-exec runs
	// this program again, confined, they come to it in limitsEnv (this
	// program's own word to itself, nothing secret; the way in checks
	// every firing's caps again).
	lim, err := limits(home, *name)
	if err != nil {
		fail(1, err)
	}
	st, err := scheduler.OpenStore(home, *name)
	if err != nil {
		fail(1, err)
	}
	if err := confine(st.Fd()); err != nil {
		fail(1, err)
	}
	// The owner's time zone: /etc/localtime, which confinement lets it
	// read (time.Local loads it at its first use, below).
	s := &scheduler.Server{Store: st, Limits: lim, Zone: time.Local, Log: os.Stderr}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := s.MCP().Run(ctx, &mcp.StdioTransport{}); err != nil && ctx.Err() == nil {
		fail(1, err)
	}
}

// confine: landlock to reading and writing beneath the schedule folder
// alone (re-executing once where the kernel can't confine every thread
// at once; the folder is opened again then), then seccomp: no exec, no
// socket of any family (its calls come on stdio).
func confine(schedule int) error {
	rules := []landlock.Rule{landlock.Beneath(schedule, landlock.Read|landlock.Write)}
	if fd, err := unix.Open("/etc/localtime", unix.O_PATH|unix.O_CLOEXEC, 0); err == nil {
		defer unix.Close(fd)
		rules = append(rules, landlock.Beneath(fd, landlock.Read))
	}
	if _, err := landlock.Restrict(rules...); err != nil {
		return fmt.Errorf("landlock: %w\nhint: Link Scheduler runs only confined; a kernel without landlock cannot run it", err)
	}
	if err := seccomp.ConfineBroker(seccomp.Policy{Exec: false, Sockets: seccomp.SocketsNone}); err != nil {
		return fmt.Errorf("seccomp: %w", err)
	}
	return nil
}

// limitsEnv carries the limits read before confinement to the re-exec.
const limitsEnv = "LNK_SCHEDULER_LIMITS"

// limits is the agent's [tool.scheduler]: compiled from its settings,
// or, confined already (landlock's re-exec), as the first run put it.
func limits(home, name string) (caps.SchedulerLimits, error) {
	var l caps.SchedulerLimits
	marker, _, _ := strings.Cut(landlock.BornConfined, "=")
	if os.Getenv(marker) != "" {
		v := os.Getenv(limitsEnv)
		os.Unsetenv(limitsEnv)
		if _, err := fmt.Sscanf(v, "%d %d %d", &l.Hops, &l.PerDay, &l.Subagents); err != nil {
			return l, fmt.Errorf("the limits handed to the confined run are not read: %w", err)
		}
		return l, nil
	}
	comp, err := caps.CompileAgent(home, name)
	if err != nil {
		return l, err
	}
	l = comp.Limits.Scheduler
	return l, os.Setenv(limitsEnv, fmt.Sprintf("%d %d %d", l.Hops, l.PerDay, l.Subagents))
}
