// Command lnk-askbroker asks the owner (package helpers/askbroker) in a
// process of its own, started by the kernel.
//
// It takes: fd 3, the store folder ~/.lnk/questions (O_DIRECTORY, opened
// without following a link); fd 4, its channel to the kernel (a
// SOCK_SEQPACKET socket speaking internal/wire, askbroker.AskSpec);
// with --terminal, fd 5, the proxy's controlling terminal. --ask-wait is
// ask_wait from Link's settings (two minutes by default, at most a day).
// A dialog gets only the desktop session's variables from its
// environment. One line per question and refusal goes to stderr, the
// kernel's audit log; never a terminal's code.
//
// Where a desktop session is (a display or a D-Bus session, and zenity,
// kdialog or notify-send in the system's folders), it first starts its
// dialog launcher: itself again with --dialog-launcher, handed one end of
// a socket pair on fd 3 and the desktop's variables alone. Then, before it
// reads anything, it confines itself (confine.go): landlock to its store,
// no exec, no socket at all. The launcher confines itself to exec only the
// programs found at its start and read the system's files. Without
// landlock or seccomp either refuses to start unless given --degraded.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/helpers/askbroker"
	"lnk.dev/lnk/internal/wire"
)

const (
	storeFD    = 3
	channelFD  = 4
	terminalFD = 5
)

func main() {
	wait := flag.Duration("ask-wait", askbroker.DefaultWait, "how long a question waits for an answer (ask_wait; at most 24h)")
	degraded := flag.Bool("degraded", false, "run without landlock or seccomp where the kernel lacks them")
	terminal := flag.Bool("terminal", false, "fd 5 is the proxy's controlling terminal")
	probe := flag.Bool("probe-confinement", false, "confine, then try what the confinement refuses, print each outcome and exit (for tests)")
	launcher := flag.Bool("dialog-launcher", false, "run as the broker's dialog launcher (the broker starts it)")
	flag.Parse()
	if *launcher {
		if err := runLauncher(*degraded); err != nil {
			fmt.Fprintf(os.Stderr, "lnk-askbroker launcher: %s\n", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*wait, *degraded, *terminal, *probe); err != nil {
		fmt.Fprintf(os.Stderr, "lnk-askbroker: %s\n", err)
		os.Exit(1)
	}
}

func open(fd int, name string) *os.File {
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil {
		return nil
	}
	unix.CloseOnExec(fd)
	return os.NewFile(uintptr(fd), name)
}

func run(wait time.Duration, degraded, terminal, probe bool) error {
	if wait <= 0 || wait > askbroker.MaxWait {
		return fmt.Errorf("--ask-wait %v is out of range: more than nothing, at most %v", wait, askbroker.MaxWait)
	}
	logf := func(l string) { fmt.Fprintf(os.Stderr, "lnk-askbroker: %s\n", l) }
	dialog := askbroker.FindDialog(os.Environ())
	notifier := askbroker.FindNotifier(os.Environ())
	launcherFD, err := launcherChannel(dialog != nil || notifier != nil)
	if err != nil {
		return err
	}
	inherit := []int{storeFD, channelFD}
	if terminal {
		inherit = append(inherit, terminalFD)
	}
	if launcherFD >= 0 {
		inherit = append(inherit, launcherFD)
	}
	if err := brokerConfinement.apply(inherit, degraded, logf); err != nil {
		return err
	}
	if probe {
		return probeConfinement(dialog.Program())
	}
	storeF := open(storeFD, "questions")
	ch := open(channelFD, "channel")
	if storeF == nil || ch == nil {
		return fmt.Errorf("needs the store folder on fd %d and the kernel's channel on fd %d", storeFD, channelFD)
	}
	store, err := askbroker.NewStore(storeF)
	storeF.Close()
	if err != nil {
		return err
	}
	defer store.Close()
	cfg := askbroker.Config{Store: store, Wait: wait, Log: logf}
	if terminal {
		tf := open(terminalFD, "terminal")
		if tf == nil {
			return fmt.Errorf("--terminal given and no fd %d", terminalFD)
		}
		t, err := askbroker.NewTerminal(tf)
		tf.Close()
		if err != nil {
			return fmt.Errorf("fd %d: %w", terminalFD, err)
		}
		defer t.Close()
		cfg.Terminal = t
	}
	if launcherFD >= 0 {
		cl, err := wire.NewClient(os.NewFile(uintptr(launcherFD), "launcher"))
		if err != nil {
			return err
		}
		defer cl.Close()
		if dialog != nil {
			cfg.Dialog = &askbroker.RemoteDialog{C: cl}
		}
		if notifier != nil {
			cfg.Notifier = &askbroker.RemoteNotifier{C: cl}
		}
	}
	b, err := askbroker.New(cfg)
	if err != nil {
		return err
	}
	defer b.Close()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	err = b.Serve(ctx, ch, func(format string, a ...any) { cfg.Log(fmt.Sprintf(format, a...)) })
	if ctx.Err() != nil {
		return nil
	}
	return err
}
