// Package brokerproc starts a broker binary as a child of the kernel:
// one end of a SOCK_SEQPACKET socketpair as its fd 3, the extra files the
// caller hands after it (fd 4, 5, …), stdin and stdout on /dev/null (or,
// with Options.Stdin, stdin a pipe the caller's data is written to), and
// a fixed environment. It returns the channel's other end and the
// process; the kernel wraps the channel in a [wire.Client], and starts
// the broker again when [Proc.Done] fires.
//
// The broker's side is [child.Channel] (package brokerproc/child, which
// links no os/exec).
//
// # Security
//
// Holds: the parent's end of each channel until it is handed back. May:
// fork and exec the binary it is told, with PR_SET_PDEATHSIG SIGKILL so
// a broker never outlives the kernel that started it, in a process group
// of its own (or, with TerminalGroup, the caller's: the ask broker that
// reads the owner's terminal). Passes: nothing
// but fds 0–2 (/dev/null, /dev/null, the log writer or /dev/null), fd 3
// and the extra files — every other fd Link holds is O_CLOEXEC, and the
// child closes any stray one above its own as its first act. The
// environment is exactly LNK_BROKER_FDS (how many extra files), plus
// what the caller adds (never a secret: secrets travel in fds).
package brokerproc

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/brokerproc/child"
)

// Options say what to start.
type Options struct {
	Path  string     // the broker binary
	Args  []string   // its arguments, after argv[0]
	Files []*os.File // handed as fd 4, 5, …; they stay the caller's
	Env   []string   // KEY=value added to the fixed environment
	Log   io.Writer  // the child's stderr; nil discards it
	// Stdin, if set, is what the child reads on fd 0 (the proxy's grants
	// and what its sandbox is told): data, never a secret's value of the
	// owner's. Nil: /dev/null.
	Stdin io.Reader
	// TerminalGroup keeps the broker in the caller's process group, the
	// terminal's foreground one when the caller runs in a terminal, so it
	// may read that terminal (a process of a background group is stopped
	// or refused when it reads). It then gets the terminal's signals too
	// (^C, ^Z, ^\) and must ignore those itself. Without it a broker has
	// a group of its own.
	TerminalGroup bool
}

// Proc is a started broker.
type Proc struct {
	// Chan is the kernel's end of the channel; the caller owns it.
	Chan *os.File
	cmd  *exec.Cmd
	done chan struct{}
	mu   sync.Mutex
	err  error // guarded by mu; set before done closes
}

// Start starts the broker.
func Start(o Options) (*Proc, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("socketpair for %s: %w", o.Path, err)
	}
	ours := os.NewFile(uintptr(fds[0]), "broker-channel")
	theirs := os.NewFile(uintptr(fds[1]), "broker-channel-child")
	defer theirs.Close()

	cmd := &exec.Cmd{
		Path:       o.Path,
		Args:       append([]string{o.Path}, o.Args...),
		Env:        append([]string{fmt.Sprintf("%s=%d", child.EnvFDs, len(o.Files))}, o.Env...),
		Dir:        "/",
		ExtraFiles: append([]*os.File{theirs}, o.Files...),
		Stdin:      o.Stdin,
		Stderr:     o.Log,
		SysProcAttr: &syscall.SysProcAttr{
			Pdeathsig: syscall.SIGKILL,
			Setpgid:   !o.TerminalGroup,
		},
	}
	if err := cmd.Start(); err != nil {
		ours.Close()
		return nil, fmt.Errorf("starting %s: %w", o.Path, err)
	}
	p := &Proc{Chan: ours, cmd: cmd, done: make(chan struct{})}
	go func() {
		err := cmd.Wait()
		p.mu.Lock()
		p.err = err
		p.mu.Unlock()
		close(p.done)
	}()
	return p, nil
}

// Pid is the broker's process id.
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// Done is closed once the broker has exited and been reaped.
func (p *Proc) Done() <-chan struct{} { return p.done }

// Err is how the broker exited (after Done).
func (p *Proc) Err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// Kill sends SIGKILL (through the process's pidfd, so never to a reused
// pid) and waits until the broker is reaped.
func (p *Proc) Kill() {
	p.cmd.Process.Kill()
	<-p.done
}
