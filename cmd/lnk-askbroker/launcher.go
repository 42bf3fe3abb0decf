package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/helpers/askbroker"
)

// launcherEnv carries the launcher's channel across the broker's
// landlock re-exec, so the launcher is started once.
const launcherEnv = "LNK_ASKBROKER_LAUNCHER_FD"

// launcherChannel returns the broker's end of its channel to the dialog
// launcher, starting the launcher unless this is the re-executed broker;
// -1 when there is no desktop to launch on.
func launcherChannel(desktop bool) (int, error) {
	if v := os.Getenv(launcherEnv); v != "" {
		os.Unsetenv(launcherEnv)
		fd, err := strconv.Atoi(v)
		if err != nil || fd < 3 {
			return -1, fmt.Errorf("%s=%q is not an fd", launcherEnv, v)
		}
		return fd, nil
	}
	if !desktop {
		return -1, nil
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	theirs := os.NewFile(uintptr(fds[1]), "launcher")
	defer theirs.Close()
	cmd := exec.Command("/proc/self/exe", "--dialog-launcher")
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		for _, want := range askbroker.DesktopVars {
			if k == want {
				cmd.Env = append(cmd.Env, kv)
			}
		}
	}
	cmd.ExtraFiles = []*os.File{theirs}
	cmd.Stderr = os.Stderr
	cmd.Dir = "/"
	// No Pdeathsig: the broker's landlock re-exec would set it off. The
	// launcher ends when its channel closes, which the broker's death does.
	if err := cmd.Start(); err != nil {
		unix.Close(fds[0])
		return -1, fmt.Errorf("starting the dialog launcher: %w", err)
	}
	go cmd.Wait()
	os.Setenv(launcherEnv, strconv.Itoa(fds[0]))
	return fds[0], nil
}

// runLauncher is the launcher's own process: fd 3 its channel from the
// broker; it holds the desktop session and nothing else.
func runLauncher(degraded bool) error {
	logf := func(l string) { fmt.Fprintf(os.Stderr, "lnk-askbroker launcher: %s\n", l) }
	d := askbroker.FindDialog(os.Environ())
	n := askbroker.FindNotifier(os.Environ())
	if err := launcherConfinement([]string{d.Program(), n.Program()}).apply([]int{3}, degraded, logf); err != nil {
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
