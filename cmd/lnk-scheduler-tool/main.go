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
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
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
	lim, parent, err := limits(home, *name)
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
	s := &scheduler.Server{Store: st, Limits: lim, Parent: parent, Zone: time.Local, Log: os.Stderr}
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

// limitsEnv and parentEnv carry what was read before confinement to
// the re-exec.
const (
	limitsEnv = "LNK_SCHEDULER_LIMITS"
	parentEnv = "LNK_SCHEDULER_PARENT"
)

// limits is the agent's [tool.scheduler] and what start_subagent needs
// of it (whether it runs Link Harness, its whole tool list as Link
// Harness names its tools, [model] allow): compiled from its settings,
// or, confined already (landlock's re-exec), as the first run put them.
// What can't be read fails the start: never a subagent with a list
// guessed.
func limits(home, name string) (caps.SchedulerLimits, scheduler.Parent, error) {
	var l caps.SchedulerLimits
	var p scheduler.Parent
	marker, _, _ := strings.Cut(landlock.BornConfined, "=")
	if os.Getenv(marker) != "" {
		v, pv := os.Getenv(limitsEnv), os.Getenv(parentEnv)
		os.Unsetenv(limitsEnv)
		os.Unsetenv(parentEnv)
		if _, err := fmt.Sscanf(v, "%d %d %d", &l.Hops, &l.PerDay, &l.Subagents); err != nil {
			return l, p, fmt.Errorf("the limits handed to the confined run are not read: %w", err)
		}
		if err := json.Unmarshal([]byte(pv), &p); err != nil {
			return l, p, fmt.Errorf("the agent's tools handed to the confined run are not read: %w", err)
		}
		return l, p, nil
	}
	a, err := caps.LoadAgent(home, name)
	if err != nil {
		return l, p, err
	}
	comp, err := caps.CompileAgent(home, name)
	if err != nil {
		return l, p, err
	}
	l = comp.Limits.Scheduler
	p = scheduler.Parent{LinkHarness: a.RunsLinkHarness(), AgentID: a.ID, Tools: []string{}, Models: comp.Models, Model: a.HarnessModel()}
	if !a.NoSandbox {
		for _, t := range []string{"run-", "file-", "memory-", "scheduler-"} {
			p.Tools = append(p.Tools, t+a.ID)
		}
	}
	for t := range comp.Tools {
		if !slices.Contains(p.Tools, t) {
			p.Tools = append(p.Tools, t)
		}
	}
	slices.Sort(p.Tools)
	b, err := json.Marshal(p)
	if err != nil {
		return l, p, err
	}
	if err := os.Setenv(parentEnv, string(b)); err != nil {
		return l, p, err
	}
	return l, p, os.Setenv(limitsEnv, fmt.Sprintf("%d %d %d", l.Hops, l.PerDay, l.Subagents))
}
