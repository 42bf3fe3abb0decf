// Package askproc starts the ask broker's processes the way the kernel
// starts every broker (internal/brokerproc): lnk-askbroker, confined, and
// beside it, where a desktop session is, its dialog launcher
// (lnk-askbroker --dialog-launcher), and returns a client that asks
// through them ([askbroker.Remote]).
//
// # Security
//
// Holds: the processes it started and the broker's channel. Passes to
// the broker only its fds — the questions folder, the owner's terminal
// (when there is one) and its channel to the launcher — and ask_wait as
// an argument; to the launcher only the desktop session's variables
// ([askbroker.DesktopVars]) and its channel to the broker. Neither is
// handed the caller's environment, HOME's folder or any other fd.
package askproc

import (
	"io"
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/helpers/askbroker"
	"lnk.dev/lnk/internal/brokerproc"
	"lnk.dev/lnk/internal/wire"
)

// Options say what the broker asks with.
type Options struct {
	Bin      string        // the lnk-askbroker binary
	Home     string        // whose ~/.lnk/questions the broker keeps
	Terminal *os.File      // the owner's terminal; nil for none
	Desktop  []string      // KEY=value: the environment the desktop session is read from
	Wait     time.Duration // ask_wait; askbroker.DefaultWait when zero
	Degraded bool          // run without landlock or seccomp where the kernel lacks them
	Log      io.Writer     // both processes' stderr: a line per question and refusal
}

// Procs are the started broker and its launcher.
type Procs struct {
	Asker    *askbroker.Remote
	broker   *brokerproc.Proc
	launcher *brokerproc.Proc // nil without a desktop
	client   *wire.Client
}

// Start starts the launcher (where a dialog or a notification can show)
// and the broker.
func Start(o Options) (*Procs, error) {
	if o.Wait == 0 {
		o.Wait = askbroker.DefaultWait
	}
	store, err := askbroker.OpenStore(o.Home)
	if err != nil {
		return nil, err
	}
	dir, err := store.Folder()
	store.Close()
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	p := &Procs{}
	ok := false
	defer func() {
		if !ok {
			p.Close()
		}
	}()
	args := []string{"--ask-wait", o.Wait.String()}
	if o.Degraded {
		args = append(args, "--degraded")
	}
	files := []*os.File{dir}
	if o.Terminal != nil {
		args = append(args, "--terminal")
		files = append(files, o.Terminal)
	}
	dialog, notifier := askbroker.FindDialog(o.Desktop) != nil, askbroker.FindNotifier(o.Desktop) != nil
	if dialog || notifier {
		largs := []string{"--dialog-launcher"}
		if o.Degraded {
			largs = append(largs, "--degraded")
		}
		if p.launcher, err = brokerproc.Start(brokerproc.Options{Path: o.Bin, Args: largs, Env: DesktopEnv(o.Desktop), Log: o.Log}); err != nil {
			return nil, err
		}
		files = append(files, p.launcher.Chan)
		if dialog {
			args = append(args, "--dialog")
		}
		if notifier {
			args = append(args, "--notify")
		}
	}
	// With a terminal, the broker stays in lnk's process group, the
	// terminal's foreground one, so it may read the owner's answer there.
	p.broker, err = brokerproc.Start(brokerproc.Options{Path: o.Bin, Args: args, Files: files, Log: o.Log, TerminalGroup: o.Terminal != nil})
	if p.launcher != nil {
		// The broker holds the launcher's channel now; lnk keeps no end.
		p.launcher.Chan.Close()
	}
	if err != nil {
		return nil, err
	}
	if p.client, err = wire.NewClient(p.broker.Chan); err != nil {
		return nil, err
	}
	p.Asker = &askbroker.Remote{C: p.client}
	ok = true
	return p, nil
}

// DesktopEnv is env's desktop session variables, and no other.
func DesktopEnv(env []string) []string {
	var out []string
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		for _, want := range askbroker.DesktopVars {
			if k == want && v != "" {
				out = append(out, kv)
			}
		}
	}
	return out
}

// Close ends both processes: the broker's channel closes (a dialog
// showing is killed with the launcher), then each is killed and reaped.
func (p *Procs) Close() {
	if p == nil {
		return
	}
	if p.client != nil {
		p.client.Close()
	}
	if p.broker != nil {
		p.broker.Kill()
	}
	if p.launcher != nil {
		p.launcher.Kill()
	}
}

// OpenTerminal opens the controlling terminal of the process (the one the
// owner ran lnk in) for the broker to ask on; nil when there is none.
func OpenTerminal() *os.File {
	fd, err := unix.Open("/dev/tty", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	return os.NewFile(uintptr(fd), "/dev/tty")
}
