package kernel

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/helpers/askbroker"
	"lnk.dev/lnk/helpers/askbroker/askproc"
	"lnk.dev/lnk/internal/audit"
	"lnk.dev/lnk/internal/wire"
	"lnk.dev/lnk/kernel/proto"
)

// nopCloser is a broker the supervisor ends by its stop alone: the
// dialog launcher, which ends once the ask broker holding its channel
// does.
type nopCloser struct{}

func (nopCloser) Close() error { return nil }

// handleRunAsk starts the ask broker of an agent's start (lnk-askbroker,
// confined, as the kernel's child) and, where the caller's desktop
// session shows a dialog or a notification, its dialog launcher
// (lnk-askbroker --dialog-launcher, the session's variables its whole
// environment). The broker is handed the questions folder, the owner's
// terminal the caller sent (when it did) and the launcher's channel; the
// caller gets the broker's channel, on which its tool bridge asks.
func (k *Kernel) handleRunAsk(ctx context.Context, c *call, req *proto.RunAskRequest) (*proto.Empty, []*os.File, error) {
	refuse := func(why string) error {
		k.refuse(audit.Entry{Peer: &c.conn.peer, Agent: req.Agent, Start: req.Start, Request: "run-ask", Reason: why})
		return wire.Errorf(proto.CodeRefused, "%s", why)
	}
	if req.Terminal != (len(c.files) == 1) {
		return nil, nil, refuse("terminal says otherwise than the fds carried")
	}
	if req.Terminal && !isTerminal(c.files[0]) {
		return nil, nil, refuse("the terminal carried is no terminal")
	}
	wait, err := time.ParseDuration(req.Wait)
	if err != nil || wait <= 0 || wait > askbroker.MaxWait {
		return nil, nil, refuse("wait " + req.Wait + " is no duration of more than nothing and at most " + askbroker.MaxWait.String())
	}
	desktop := askproc.DesktopEnv(req.Desktop)
	if len(desktop) != len(req.Desktop) {
		return nil, nil, refuse("desktop holds a variable that is none of the desktop session's (" + strings.Join(askbroker.DesktopVars, ", ") + ")")
	}
	r, err := k.runOf(c, "run-ask", req.Agent, req.Start)
	if err != nil {
		return nil, nil, err
	}
	if r.unconfined {
		return nil, nil, refuse("the start runs with no sandbox: nothing of its asks the owner")
	}
	r.mu.Lock()
	if r.asked {
		r.mu.Unlock()
		return nil, nil, refuse("the start has its ask broker already")
	}
	r.asked = true
	r.mu.Unlock()
	bin, err := k.brokerPath("lnk-askbroker")
	if err != nil { // logged once, as a missing file broker is
		k.refuse(audit.Entry{Peer: &c.conn.peer, Agent: req.Agent, Start: req.Start, Request: "run-ask", Route: "ask broker", Reason: err.Error()})
		return nil, nil, wire.Errorf(proto.CodeFailed, "the start's ask broker: %v", err)
	}
	agent := r.comp.LogName() // a harness's run is logged as its own
	logEntry := func(line []byte) (audit.Entry, bool) {
		return audit.Entry{Kind: audit.KindQuestion, Agent: agent, Reason: string(line)}, true
	}
	args := []string{"--ask-wait", wait.String()}
	if req.Degraded {
		args = append(args, "--degraded")
	}
	var terminal *os.File
	if req.Terminal {
		terminal = c.take(0)
		defer func() {
			if terminal != nil {
				terminal.Close()
			}
		}()
		args = append(args, "--terminal")
	}
	dialog, notifier := askbroker.FindDialog(desktop) != nil, askbroker.FindNotifier(desktop) != nil
	if dialog || notifier {
		largs := []string{"--dialog-launcher"}
		if req.Degraded {
			largs = append(largs, "--degraded")
		}
		lname := runName("asklaunch", req.Start)
		if _, err := k.addBroker(ctx, req.Start, r, BrokerSpec{
			Name: lname, Path: bin, Args: largs, Env: desktop,
			Log: k.brokerLog(r, lname, "lnk-askbroker: ", logEntry),
			Connect: func(_ context.Context, ch *os.File) (io.Closer, error) {
				r.mu.Lock()
				r.launcher = ch // until the ask broker takes it
				r.mu.Unlock()
				return nopCloser{}, nil
			},
		}); err != nil {
			return nil, nil, err
		}
		if dialog {
			args = append(args, "--dialog")
		}
		if notifier {
			args = append(args, "--notify")
		}
	}
	name := runName("ask", req.Start)
	cl, err := k.addBroker(ctx, req.Start, r, BrokerSpec{
		Name: name, Path: bin, Args: args,
		Files: func(*Kernel) ([]*os.File, error) {
			store, err := askbroker.OpenStore(r.comp.Home)
			if err != nil {
				return nil, err
			}
			dir, err := store.Folder()
			store.Close()
			if err != nil {
				return nil, err
			}
			files := []*os.File{dir}
			if terminal != nil {
				files = append(files, terminal)
				terminal = nil
			}
			r.mu.Lock()
			launcher := r.launcher
			r.launcher = nil
			r.mu.Unlock()
			if launcher != nil {
				files = append(files, launcher) // the broker holds it now; the kernel keeps no end
			} else if dialog || notifier {
				wire.CloseFiles(files)
				return nil, errors.New("the dialog launcher's channel is gone")
			}
			return files, nil
		},
		Log:     k.brokerLog(r, name, "lnk-askbroker: ", logEntry),
		Connect: func(_ context.Context, ch *os.File) (io.Closer, error) { return chanCloser{ch}, nil },
	})
	if err != nil {
		return nil, nil, err
	}
	// The caller's copy of the broker's channel: the broker ends once
	// both are closed (the kernel's at the start's end).
	dup, err := unix.FcntlInt(cl.(chanCloser).f.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	return &proto.Empty{}, []*os.File{os.NewFile(uintptr(dup), "ask-channel")}, nil
}

// isTerminal reports whether f is a terminal.
func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
