package runtool

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// waitDelay bounds how long a reaped group's pipes may stay open: every
// process of the sandbox is gone by then, so only a process outside it
// that took the pipe could hold it.
const waitDelay = 5 * time.Second

// group is one sandbox started for a call or a background command:
// `lnk sandbox run --agent NAME -- ARGV`, leading a session, so a process
// group, of its own (pgid = its pid), with no terminal and stdin from
// /dev/null. It gets SIGKILL when the thread that started it ends
// (PR_SET_PDEATHSIG), and bubblewrap's own chain (--die-with-parent, a
// pid namespace) ends everything inside when it goes.
type group struct {
	cmd  *exec.Cmd
	pgid int
	done chan struct{} // closed when the leader has exited, not yet reaped
}

// startGroup starts argv in the agent's sandbox, in the folder dirfd (a
// handle opened through no link: the child changes into it by its
// descriptor, never by a path that could since have become a link),
// its stdout and stderr both to out.
func (a *Agent) startGroup(argv []string, dirfd int, out *os.File) (*group, error) {
	full := a.sandboxArgv(argv)
	cmd := &exec.Cmd{Path: full[0], Args: full, Env: a.childEnv(), Stdout: out, Stderr: out, WaitDelay: waitDelay}
	cmd.Dir = fmt.Sprintf("/proc/self/fd/%d", dirfd)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the sandbox: %w", err)
	}
	g := &group{cmd: cmd, pgid: cmd.Process.Pid, done: make(chan struct{})}
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

// end stops the whole group with SIGKILL while its leader is not yet
// reaped, waits for the leader, then reaps it. It returns the exit code
// (128+N for signal N).
func (g *group) end() int {
	unix.Kill(-g.pgid, unix.SIGKILL)
	<-g.done
	unix.Kill(-g.pgid, unix.SIGKILL) // what it started before it exited
	g.cmd.Wait()
	st, ok := g.cmd.ProcessState.Sys().(syscall.WaitStatus)
	switch {
	case !ok:
		return -1
	case st.Signaled():
		return 128 + int(st.Signal())
	default:
		return st.ExitStatus()
	}
}
