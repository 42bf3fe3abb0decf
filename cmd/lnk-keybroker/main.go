// Command lnk-keybroker holds the owner's secrets file and the agents'
// keys (package helpers/keybroker) in a process of its own, started by
// the kernel through internal/brokerproc.
//
// It takes fd 3, its channel to the kernel; fd 4, ~/.lnk/agents/.keys
// (O_DIRECTORY); and fd 5, ~/.lnk/secrets.toml (O_RDONLY) when there is
// one. It confines itself before reading a request — landlock to the keys
// folder, seccomp with no exec and no sockets — and marks itself
// undumpable. One line per refusal goes to stderr, the kernel's audit
// log; never a value. With --agent ID (lnk sandbox run's own broker) it
// keeps only that agent's sealed secrets and binds its netbroker channel
// to no other agent. Without landlock or seccomp it refuses to start
// unless given --degraded, and says so at every start.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/helpers/keybroker"
	"lnk.dev/lnk/helpers/keybroker/confine"
	"lnk.dev/lnk/internal/brokerproc/child"
	"lnk.dev/lnk/internal/wire"
)

func main() {
	degraded := flag.Bool("degraded", false, "run without landlock or seccomp where the kernel lacks them")
	flag.StringVar(&agentID, "agent", "", "serve this agent ID alone (a run's broker): keep only its sealed secrets")
	flag.Parse()
	if err := run(*degraded); err != nil {
		fmt.Fprintf(os.Stderr, "lnk-keybroker: %s\n", err)
		os.Exit(1)
	}
}

func logf(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "lnk-keybroker: "+format+"\n", a...)
}

// envTaken marks a run after landlock's re-exec (a kernel without
// TSYNC): the first run already took the fds, and /proc/self/fd, which
// child.Channel lists, is outside the domain now.
// agentID is --agent: the one agent a run's broker serves (an ID is no
// secret; argv is fine).
var agentID string

const envTaken = "LNK_KEYBROKER_FDS_TAKEN"

// channel takes fd 3 and the extra fds, once.
func channel() (*os.File, []*os.File, error) {
	v, ok := os.LookupEnv(envTaken)
	if !ok {
		return child.Channel(false)
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > 2 {
		return nil, nil, fmt.Errorf("%s=%q is not a count of 1 or 2 fds", envTaken, v)
	}
	extra := make([]*os.File, n)
	for i := range extra {
		extra[i] = os.NewFile(uintptr(child.ChannelFD+1+i), "extra-"+strconv.Itoa(i))
	}
	return os.NewFile(child.ChannelFD, "channel"), extra, nil
}

func run(degraded bool) error {
	ch, extra, err := channel()
	if err != nil {
		return err
	}
	if len(extra) < 1 || len(extra) > 2 {
		return fmt.Errorf("needs the keys folder on fd 4 and, optionally, secrets.toml on fd 5; was handed %d extra fds", len(extra))
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(extra[0].Fd()), &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return errors.New("fd 4 is not the keys folder")
	}
	// Landlock may re-execute this program (a kernel without TSYNC): the
	// fds are still inheritable here, so the new process finds them.
	os.Setenv(envTaken, strconv.Itoa(len(extra)))
	missing, err := confine.Landlock(int(extra[0].Fd()), degraded)
	os.Unsetenv(envTaken)
	if err != nil {
		return err
	}
	if err := child.CloseOnExec(child.ChannelFD, child.ChannelFD+len(extra)); err != nil {
		return err
	}
	// Out of core dumps, and out of reach of ptrace by the owner's other
	// processes. After child.Channel and landlock's re-exec, which read
	// /proc/self, closed to an undumpable process.
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_DUMPABLE): %w", err)
	}
	m2, err := confine.Seccomp(degraded)
	if err != nil {
		return err
	}
	for _, m := range []string{missing, m2} {
		if m != "" {
			logf("degraded: running without %s", m)
		}
	}
	var secretsFile *os.File
	if len(extra) == 2 {
		secretsFile = extra[1]
	}
	b, err := keybroker.NewForAgent(extra[0], secretsFile, agentID, logf)
	if secretsFile != nil {
		secretsFile.Close()
	}
	if err != nil {
		return err
	}
	defer b.Close()
	srv, err := wire.NewServer(ch, b.KernelTable(), logf)
	if err != nil {
		return err
	}
	err = srv.Serve(context.Background())
	if err == nil || errors.Is(err, wire.ErrClosed) {
		return nil
	}
	return err
}
