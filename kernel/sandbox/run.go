package sandbox

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Exec replaces the calling process with bubblewrap: the command's exit
// status becomes the caller's, and no Link process waits beside it. It
// returns only on failure.
func (s *Sandbox) Exec() error {
	for i := range s.files {
		if _, err := unix.FcntlInt(uintptr(s.fd(i)), unix.F_SETFD, 0); err != nil {
			return fmt.Errorf("sandbox: hand fd to bubblewrap: %w", err)
		}
	}
	opts, tail := s.argv(s.fd)
	args, err := bwrapArgs(opts)
	if err != nil {
		s.Close()
		return err
	}
	s.files, s.raw = append(s.files, nil), append(s.raw, args) // closed by Close should exec fail
	if _, err := unix.FcntlInt(uintptr(args), unix.F_SETFD, 0); err != nil {
		s.Close()
		return fmt.Errorf("sandbox: hand fd to bubblewrap: %w", err)
	}
	argv := append([]string{s.Bwrap, "--args", strconv.Itoa(args)}, tail...)
	// The memory cgroup is entered last: lnk, become bubblewrap, is in it
	// from the exec on. No Link process is left to remove it once the
	// sandbox ends: the next run sweeps it (cgroup.Group.Sweep).
	mem, err := s.memoryCgroup()
	if err == nil {
		if err = enterMemory(mem); err == nil {
			err = unix.Exec(s.Bwrap, argv, os.Environ())
			err = fmt.Errorf("sandbox: exec bubblewrap: %w", err)
			if mem != nil {
				mem.Leave(os.Getpid())
			}
		}
	}
	s.Close()
	s.endMemory(mem)
	return err
}

// Status is what Start reports once the sandbox runs.
type Status struct {
	Pid int `json:"pid"` // the sandbox's first process, as this machine sees it
	Enforced
}

// Start runs the sandbox as a child with stdio, calls s.Started (if
// set) once bubblewrap runs, reports its pid to status (if not nil),
// forwards SIGINT, SIGTERM and SIGHUP to it, waits, and returns the
// command's exit code (128+N for signal N).
func (s *Sandbox) Start(stdin io.Reader, stdout, stderr io.Writer, status func(Status)) (code int, err error) {
	defer s.Close()
	s.osFiles() // exec.Cmd hands *os.Files
	var pr, pw *os.File
	statusFD := 0
	if status != nil {
		var err error
		if pr, pw, err = os.Pipe(); err != nil {
			return 0, err
		}
		defer pr.Close()
		s.files, s.raw = append(s.files, pw), append(s.raw, -1)
		statusFD = 3 + len(s.files) - 1
	}
	// lnk's lifeline: lnk alone holds the write end (close-on-exec), so
	// lnk gone, lnk-init starts nothing, or the kernel kills the sandbox's
	// processes (initstage's lifeline.go). Only here: in Exec's shape lnk
	// is bubblewrap after exec, and no one would hold the write end.
	lr, lw, err := os.Pipe()
	if err != nil {
		return 0, err
	}
	defer lw.Close() // held until the sandbox has ended
	s.files, s.raw = append(s.files, lr), append(s.raw, -1)
	lifeFD := 3 + len(s.files) - 1
	opts, tail := s.argv(func(i int) int { return 3 + i })
	if status != nil {
		opts = append(opts, "--json-status-fd", fmt.Sprint(statusFD))
	}
	tail = append(tail, "--lifeline-fd", fmt.Sprint(lifeFD))
	// bubblewrap's options in an fd (--args): none on its command line.
	argsFD, err := bwrapArgs(opts)
	if err != nil {
		return 0, err
	}
	af := os.NewFile(uintptr(argsFD), "lnk-bwrap-args")
	s.files, s.raw = append(s.files, af), append(s.raw, -1)
	cmd := exec.Command(s.Bwrap, append([]string{"--args", fmt.Sprint(3 + len(s.files) - 1)}, tail...)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
	cmd.ExtraFiles = s.files
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setsid: s.Session}
	pidfd := -1
	if s.Attached != nil {
		cmd.SysProcAttr.PidFD = &pidfd // made by clone itself: never another's pid
	}
	mem, err := s.memoryCgroup()
	if err != nil {
		return 0, err
	}
	defer func() {
		if rerr := s.endMemory(mem); rerr != nil && err == nil {
			err = rerr
		}
	}()
	if mem != nil && s.memory.Version == 2 {
		// clone3 starts bubblewrap in the cgroup (CLONE_INTO_CGROUP).
		cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, mem.FD()
	} else if err := enterMemory(mem); err != nil {
		return 0, err
	}
	// Once bubblewrap has ended, its stdio copies (for a stdout or stderr
	// that is no file) end within this, even if something still held the
	// pipes.
	cmd.WaitDelay = 5 * time.Second
	sigs := make(chan os.Signal, 4)
	if !s.Session { // a session's caller keeps its own signals
		signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
		defer signal.Stop(sigs)
	}
	err = cmd.Start()
	if mem != nil && s.memory.Version == 1 {
		// v1 cannot start a child in a cgroup: lnk was in it for the
		// fork alone, and leaves it now for its own.
		if lerr := mem.Leave(os.Getpid()); lerr != nil && err == nil {
			cmd.Process.Kill()
			cmd.Wait()
			return 0, fmt.Errorf("sandbox: memory bound: %w", lerr)
		}
	}
	if err != nil {
		return 0, fmt.Errorf("sandbox: start bubblewrap: %w", err)
	}
	s.Close() // the child holds them now
	if s.Attached != nil && pidfd < 0 {
		// No pidfd (Linux before 5.3): the kernel could not record the
		// sandbox, so it does not run.
		lw.Close()
		cmd.Process.Kill()
		cmd.Wait()
		return 0, errors.New("sandbox: this system gives no pidfd of bubblewrap, which the kernel records the sandbox by")
	}
	kill := func() { cmd.Process.Kill() }
	if s.Session {
		kill = func() { unix.Kill(-cmd.Process.Pid, unix.SIGKILL) }
	}
	if s.Leader != nil {
		if err := s.Leader(cmd.Process.Pid); err != nil {
			lw.Close()
			kill()
			cmd.Wait()
			return 0, err
		}
	}
	if pidfd >= 0 {
		pf := os.NewFile(uintptr(pidfd), "bwrap-pidfd")
		defer pf.Close()
		if err := s.Attached(pf); err != nil {
			lw.Close() // as below: the lifeline ends it however far it got
			cmd.Process.Kill()
			cmd.Wait()
			return 0, err
		}
	}
	if s.Started != nil {
		if err := s.Started(); err != nil {
			// Hung up, the lifeline ends the sandbox however far it got:
			// lnk-init starts nothing, or the kernel kills what it
			// started. Killing bubblewrap instead could leave its child
			// waiting for it for ever, before --die-with-parent.
			lw.Close()
			cmd.Wait()
			return 0, err
		}
	}
	done := make(chan struct{})
	var aborted error // set by the forwarder before it kills; read once it has returned
	forwarder := make(chan struct{})
	go func() {
		defer close(forwarder)
		for {
			select {
			case sig := <-sigs:
				cmd.Process.Signal(sig)
			case err := <-s.Abort: // a nil Abort never yields
				aborted = err
				lw.Close() // lnk-init kills what it started
				kill()
				return
			case <-done:
				return
			}
		}
	}()
	if status != nil {
		pw.Close()
		if pid, ok := childPid(pr); ok {
			status(Status{Pid: pid, Enforced: s.Enforced})
		}
	}
	if s.Session {
		leaderExited(cmd.Process.Pid)
		kill() // what is left of its group, before the leader is reaped
	}
	err = cmd.Wait()
	close(done)
	<-forwarder // aborted is set, or never will be
	if aborted != nil {
		return 0, aborted
	}
	return exitCode(cmd, err)
}

// leaderExited waits until process pid has exited, leaving it unreaped
// (waitid WNOWAIT): its pid, and its group's ID, stay no other
// process's until it is reaped.
func leaderExited(pid int) {
	var info unix.Siginfo
	for unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil) == unix.EINTR {
	}
}

// childPid reads bubblewrap's first status document.
func childPid(r io.Reader) (int, bool) {
	dec := json.NewDecoder(bufio.NewReader(r))
	var st struct {
		ChildPid int `json:"child-pid"`
	}
	if err := dec.Decode(&st); err != nil || st.ChildPid == 0 {
		return 0, false
	}
	return st.ChildPid, true
}

func exitCode(cmd *exec.Cmd, err error) (int, error) {
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return 0, err
	}
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ok {
		return cmd.ProcessState.ExitCode(), nil
	}
	if ws.Signaled() {
		return 128 + int(ws.Signal()), nil
	}
	return ws.ExitStatus(), nil
}
