// Command lnk-askbroker asks the owner (package helpers/askbroker) in a
// process of its own, started as every broker is (internal/brokerproc;
// helpers/askbroker/askproc starts it for lnk sandbox run).
//
// It takes: fd 3, its channel (a SOCK_SEQPACKET socket speaking
// internal/wire: askbroker.AskSpec, WithdrawAskSpec, CountSpec); fd 4, the
// store folder ~/.lnk/questions (O_DIRECTORY, opened without following a
// link); with --terminal, fd 5, the owner's terminal; with --dialog or
// --notify, the last fd, its channel to its dialog launcher, which shows
// dialogs (--dialog) or notifications (--notify). --ask-wait is ask_wait
// from Link's settings (two minutes by default, at most a day). Its
// environment holds nothing of the desktop: the launcher holds that. One
// line per question and refusal goes to stderr, the audit log; never a
// terminal's code.
//
// Before it reads anything it confines itself (confine.go): landlock to
// its store, no exec, no socket at all. Run as --dialog-launcher (fd 3 its
// channel from the broker, handed the desktop session's variables alone)
// it is the launcher, confined to exec only the programs found at its
// start and read the system's files. Without landlock or seccomp either
// refuses to start unless given --degraded.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/helpers/askbroker"
	"lnk.dev/lnk/internal/brokerproc/child"
	"lnk.dev/lnk/internal/wire"
)

const (
	channelFD  = child.ChannelFD // 3
	storeFD    = 4
	terminalFD = 5
)

func main() {
	wait := flag.Duration("ask-wait", askbroker.DefaultWait, "how long a question waits for an answer (ask_wait; at most 24h)")
	degraded := flag.Bool("degraded", false, "run without landlock or seccomp where the kernel lacks them")
	terminal := flag.Bool("terminal", false, "fd 5 is the proxy's controlling terminal")
	probe := flag.Bool("probe-confinement", false, "confine, then try what the confinement refuses, print each outcome and exit (for tests)")
	launcher := flag.Bool("dialog-launcher", false, "run as the broker's dialog launcher (fd 3 its channel from the broker)")
	dialogs := flag.Bool("dialog", false, "the last fd is the launcher's channel, and it shows dialogs")
	notifies := flag.Bool("notify", false, "the last fd is the launcher's channel, and it shows notifications")
	flag.Parse()
	if *launcher {
		if err := runLauncher(*degraded); err != nil {
			fmt.Fprintf(os.Stderr, "lnk-askbroker launcher: %s\n", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*wait, *degraded, *terminal, *dialogs, *notifies, *probe); err != nil {
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

// takeFDs takes the channel and the extra fds once: in the first run,
// closing any stray fd; after landlock's re-exec (a kernel without
// TSYNC), where /proc/self/fd is out of reach, as they were left.
func takeFDs() (int, error) {
	if os.Getenv(landlockReexecMarker) == "" {
		_, extra, err := child.Channel(false)
		return len(extra), err
	}
	n, err := strconv.Atoi(os.Getenv(child.EnvFDs))
	if err != nil || n < 0 || n > child.MaxExtra {
		return 0, fmt.Errorf("%s=%q is not a count of fds", child.EnvFDs, os.Getenv(child.EnvFDs))
	}
	return n, nil
}

func run(wait time.Duration, degraded, terminal, dialogs, notifies, probe bool) error {
	if terminal {
		// In the terminal's foreground group (askproc): its ^C, ^Z and ^\
		// are the sandboxed command's, never the broker's, and a read
		// while lnk is in the background fails rather than stopping it.
		signal.Ignore(syscall.SIGINT, syscall.SIGQUIT, syscall.SIGTSTP, syscall.SIGTTIN, syscall.SIGTTOU)
	}
	if wait <= 0 || wait > askbroker.MaxWait {
		return fmt.Errorf("--ask-wait %v is out of range: more than nothing, at most %v", wait, askbroker.MaxWait)
	}
	logf := func(l string) { fmt.Fprintf(os.Stderr, "lnk-askbroker: %s\n", l) }
	n, err := takeFDs()
	if err != nil {
		return err
	}
	want := 1
	if terminal {
		want++
	}
	launcherFD := -1
	if dialogs || notifies {
		launcherFD = channelFD + want + 1
		want++
	}
	if n != want {
		return fmt.Errorf("was handed %d fds after its channel, wants %d: the store folder (fd 4), the terminal with --terminal, the launcher's channel with --dialog or --notify", n, want)
	}
	inherit := []int{channelFD, storeFD}
	if terminal {
		inherit = append(inherit, terminalFD)
	}
	if launcherFD >= 0 {
		inherit = append(inherit, launcherFD)
	}
	if err := brokerConfinement.apply(inherit, degraded, logf); err != nil {
		return err
	}
	if err := undumpable(); err != nil {
		return err
	}
	if probe {
		dialog, _ := askbroker.FindSystemProgram("zenity")
		return probeConfinement(dialog)
	}
	storeF := open(storeFD, "questions")
	ch := open(channelFD, "channel")
	if storeF == nil || ch == nil {
		return fmt.Errorf("needs its channel on fd %d and the store folder on fd %d", channelFD, storeFD)
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
		lf := open(launcherFD, "launcher")
		if lf == nil {
			return fmt.Errorf("--dialog or --notify given and no fd %d", launcherFD)
		}
		cl, err := wire.NewClient(lf)
		if err != nil {
			return err
		}
		defer cl.Close()
		if dialogs {
			cfg.Dialog = &askbroker.RemoteDialog{C: cl}
		}
		if notifies {
			cfg.Notifier = &askbroker.RemoteNotifier{C: cl}
		}
	}
	b, err := askbroker.New(cfg)
	if err != nil {
		return err
	}
	defer b.Close()
	ctx, stop := signal.NotifyContext(context.Background(), stopSignals(terminal)...)
	defer stop()
	err = b.Serve(ctx, ch, func(format string, a ...any) { cfg.Log(fmt.Sprintf(format, a...)) })
	if ctx.Err() != nil || errors.Is(err, wire.ErrClosed) {
		return nil
	}
	return err
}

// stopSignals end the broker: SIGTERM, and SIGINT unless it shares the
// owner's terminal, whose ^C is not its own.
func stopSignals(terminal bool) []os.Signal {
	if terminal {
		return []os.Signal{syscall.SIGTERM}
	}
	return []os.Signal{syscall.SIGTERM, syscall.SIGINT}
}
