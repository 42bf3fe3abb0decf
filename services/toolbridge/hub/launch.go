package hub

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"lnk.dev/lnk/services/toolbridge/tooldef"
)

// Launcher starts hubs: where systemd runs the user's services, as a
// user unit of its own (so no agent's stop ends it); elsewhere, as a
// process group and session of its own.
type Launcher struct {
	Bin     string // lnk-toolhub
	Systemd bool   // use systemd-run --user
}

var (
	systemdOnce sync.Once
	systemdOK   bool
)

// SystemdUser reports whether `systemctl --user` answers: a user manager
// runs this user's services.
func SystemdUser() bool {
	systemdOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, "systemctl", "--user", "is-system-running").Output()
		state := strings.TrimSpace(string(out))
		systemdOK = (err == nil || state == "degraded") && (state == "running" || state == "degraded")
	})
	return systemdOK
}

// hubArgs is the hub's command line: no value of any variable on it.
func hubArgs(dir, name, key string) []string {
	return []string{"--dir", dir, "--name", name, "--key", key}
}

// UnitArgs is systemd-run's command line for the hub's unit: its name,
// the variables handed by name (systemd-run takes a bare --setenv=NAME's
// value from its own environment, so no value stands on a command line),
// and the hub's command.
func UnitArgs(bin, dir, name, key string, environ []string) []string {
	p := PathsOf(dir, name, key)
	args := []string{"--user", "--unit=" + p.Unit, "--collect", "--quiet",
		"--property=KillMode=control-group", "--property=Description=Link's shared tool " + name}
	for _, n := range HandedNames(environ) {
		args = append(args, "--setenv="+n)
	}
	return append(append(args, "--", bin), hubArgs(dir, name, key)...)
}

// Launch starts the hub of name with key and returns once it is started
// (not yet listening).
func (l Launcher) Launch(dir, name, key string) error {
	env := HandedEnv(os.Environ())
	var cmd *exec.Cmd
	if l.Systemd {
		cmd = exec.Command("systemd-run", UnitArgs(l.Bin, dir, name, key, env)...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err == nil {
			return nil
		}
		// A unit of that name not yet collected, or a manager that went
		// away: a process group of its own still serves. The error is the
		// caller's if that fails too.
		unitErr := fmt.Errorf("systemd-run: %v: %s", err, strings.TrimSpace(string(out)))
		if err := (Launcher{Bin: l.Bin}).Launch(dir, name, key); err != nil {
			return errors.Join(unitErr, err)
		}
		return nil
	}
	cmd = exec.Command(l.Bin, hubArgs(dir, name, key)...)
	cmd.Env = env
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", l.Bin, err)
	}
	go cmd.Wait() // reaped when it stops; it outlives no one's wait
	return nil
}

// Dial connects a session to the hub of def, starting the hub if none
// listens, and waits for it up to ctx's end.
func (l Launcher) Dial(ctx context.Context, dir string, def *tooldef.Definition) (net.Conn, error) {
	if err := CheckDir(dir); err != nil {
		return nil, err
	}
	key, err := Key(dir, def)
	if err != nil {
		return nil, err
	}
	sock := PathsOf(dir, def.Name, key).Socket
	if c, err := net.Dial("unix", sock); err == nil {
		return c, nil
	}
	if err := l.Launch(dir, def.Name, key); err != nil {
		return nil, err
	}
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		c, err := net.Dial("unix", sock)
		if err == nil {
			return c, nil
		}
		select {
		case <-ctx.Done():
			return nil, errors.Join(fmt.Errorf("the hub of %s never listened", def.Name), err)
		case <-tick.C:
		}
	}
}
