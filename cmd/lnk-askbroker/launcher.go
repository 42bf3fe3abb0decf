package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"lnk.dev/lnk/helpers/askbroker"
)

// runLauncher is the launcher's own process, started beside the broker
// (helpers/askbroker/askproc): fd 3 its channel, whose other end the
// broker holds; it holds the desktop session and nothing else.
func runLauncher(degraded bool) error {
	logf := func(l string) { fmt.Fprintf(os.Stderr, "lnk-askbroker launcher: %s\n", l) }
	if _, err := takeFDs(); err != nil {
		return err
	}
	d := askbroker.FindDialog(os.Environ())
	n := askbroker.FindNotifier(os.Environ())
	if err := launcherConfinement([]string{d.Program(), n.Program()}).apply([]int{3}, degraded, logf); err != nil {
		return err
	}
	if err := undumpable(); err != nil {
		return err
	}
	ch := open(3, "broker")
	if ch == nil {
		return fmt.Errorf("needs its channel from the broker on fd 3")
	}
	l := &askbroker.Launcher{Dialog: d, Notifier: n}
	err := l.Serve(context.Background(), ch, func(format string, a ...any) { logf(fmt.Sprintf(format, a...)) })
	if err != nil && !strings.Contains(err.Error(), "closed") {
		return err
	}
	return nil
}
