package runtool

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/kernel/client"
	"lnk.dev/lnk/kernel/sandbox"
	"lnk.dev/lnk/services/sandboxrun"
)

// waitDelay bounds how long a reaped group's pipes may stay open: every
// process of the sandbox is gone by then, so only a process outside it
// that took the pipe could hold it.
const waitDelay = 5 * time.Second

// errStopped is the stop of a group by its caller (a timeout, a stop, a
// cancelled call).
var errStopped = errors.New("stopped")

// group is one sandbox started for a call or a background command,
// leading a session, so a process group, of its own (pgid = its
// leader's pid), with no terminal and stdin from /dev/null. Its leader
// gets SIGKILL when the thread that started it ends (PR_SET_PDEATHSIG),
// and bubblewrap's own chain (--die-with-parent, a pid namespace) ends
// everything inside when it goes; the whole group is killed before the
// leader is reaped.
//
// The run tool runs it in-process by services/sandboxrun, the one
// orchestrator of an agent's run that lnk sandbox run --agent calls too:
// its leader is bubblewrap, and no start of lnk is paid per call. A
// sandbox whose grants name tools reached through its proxy needs the
// tool bridge, which lnk hosts: that one runs as `lnk sandbox run
// --agent NAME -- ARGV`, which calls the same orchestrator, and its
// leader is lnk.
type group struct {
	pgid int
	done chan struct{} // closed once the leader has exited (not yet reaped, for an lnk)
	end  func() int    // stops what is left of the group, reaps it, returns the exit code
}

// startGroup starts argv in the agent's sandbox compiled as comp, in the
// folder dirfd (a handle opened through no link), its stdout and stderr
// both to out, which it closes.
func (a *Agent) startGroup(comp *caps.Compiled, argv []string, dirfd int, out *os.File) (*group, error) {
	if len(comp.Tools) > 0 && sandbox.NeedsProxy(comp) {
		defer out.Close()
		return a.startLnk(argv, dirfd, out)
	}
	// The sandbox starts in the folder the handle names, as the kernel
	// names it now (the path of the handle, never one walked again).
	path, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", dirfd))
	if err != nil {
		out.Close()
		return nil, fmt.Errorf("the working folder: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	cl, err := client.Dial(ctx, a.Home, a.Lnk)
	cancel()
	if err != nil {
		out.Close()
		return nil, fmt.Errorf("the kernel: %w", err)
	}
	stop := make(chan error, 1)
	leader := make(chan int, 1)
	done := make(chan struct{})
	var code int
	var rerr error
	go func() {
		defer close(done)
		defer out.Close()
		code, rerr = sandboxrun.Run(context.Background(), sandboxrun.Options{
			Client: cl, Comp: comp, Agent: a.Name, Request: "run", LogName: a.Name,
			Argv: argv, Dir: path, InitPath: a.initPath(), Stdout: out, Stderr: out,
			Session: true, Leader: func(pid int) error { leader <- pid; return nil }, Stop: stop,
		})
		if rerr != nil && !errors.Is(rerr, errStopped) {
			// As lnk sandbox run would say it, in the call's output.
			fmt.Fprintf(out, "lnk: %v\n", rerr)
			if h := sandboxrun.Hint(rerr); h != "" {
				fmt.Fprintf(out, "  hint: %s\n", h)
			}
		}
	}()
	g := &group{done: done}
	select {
	case g.pgid = <-leader:
	case <-done:
		// It ended before it ran (refused, or a fault): the answer is
		// what lnk sandbox run would have said, and its exit status.
	}
	g.end = func() int {
		select {
		case stop <- errStopped:
		default:
		}
		<-done
		var be *sandboxrun.BrokerError
		switch {
		case errors.Is(rerr, errStopped):
			return 128 + int(unix.SIGKILL)
		case errors.As(rerr, &be) && code != 0:
			return code
		case rerr != nil:
			return sandboxrun.Code(rerr)
		}
		return code
	}
	return g, nil
}

// initPath is lnk-init beside the lnk that runs the agent's sandboxes.
func (a *Agent) initPath() string { return filepath.Join(filepath.Dir(a.Lnk), "lnk-init") }

// startLnk starts `lnk sandbox run --agent NAME -- ARGV` leading a
// session of its own, in the folder dirfd (the child changes into it by
// its descriptor, never by a path that could since have become a link).
func (a *Agent) startLnk(argv []string, dirfd int, out *os.File) (*group, error) {
	full := a.sandboxArgv(argv)
	cmd := &exec.Cmd{Path: full[0], Args: full, Env: a.childEnv(), Stdout: out, Stderr: out, WaitDelay: waitDelay}
	cmd.Dir = fmt.Sprintf("/proc/self/fd/%d", dirfd)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the sandbox: %w", err)
	}
	g := &group{pgid: cmd.Process.Pid, done: make(chan struct{})}
	go func() {
		// WNOWAIT: the leader stays a zombie, so its pid and the
		// group's ID are no other process's until end reaps it.
		var info unix.Siginfo
		for {
			err := unix.Waitid(unix.P_PID, g.pgid, &info, unix.WEXITED|unix.WNOWAIT, nil)
			if err != unix.EINTR {
				break
			}
		}
		close(g.done)
	}()
	g.end = func() int {
		unix.Kill(-g.pgid, unix.SIGKILL)
		<-g.done
		unix.Kill(-g.pgid, unix.SIGKILL) // what it started before it exited
		cmd.Wait()
		st, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
		switch {
		case !ok:
			return -1
		case st.Signaled():
			return 128 + int(st.Signal())
		default:
			return st.ExitStatus()
		}
	}
	return g, nil
}

// wait waits for the leader to exit or ctx to end, then ends the group
// (end). It reports whether ctx ended it.
func (g *group) wait(ctx context.Context) (code int, stopped bool) {
	select {
	case <-g.done:
	case <-ctx.Done():
		stopped = true
	}
	return g.end(), stopped
}
