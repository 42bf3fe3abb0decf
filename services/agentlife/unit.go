package agentlife

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/ownerfile"
	"lnk.dev/lnk/kernel"
)

// UnitName is agent id's systemd user unit.
func UnitName(id string) string { return "lnk-agent-" + id + ".service" }

// Unit is the text of agent a's unit for the lnk at lnkPath and the
// owner's HOME (the one that started it; checked by InstallUnit): it runs the
// supervisor (Supervise), restarted by systemd when it fails; a stop
// ends its whole cgroup, so nothing the harness started outlives it.
// No NoNewPrivileges: where bubblewrap is setuid it would stop the
// sandbox; the sandbox sets no_new_privs for everything inside itself.
func Unit(home, lnkPath string, a *caps.Agent) string {
	return `[Unit]
Description=Link agent ` + a.Name + ` (` + a.ID + `): its harness, in its sandbox

[Service]
Type=simple
Environment="HOME=` + home + `"
ExecStart=` + kernel.SystemdQuote(lnkPath) + ` agent supervise --mode unit ` + a.Name + `
KillMode=control-group
KillSignal=SIGTERM
TimeoutStopSec=30
Restart=on-failure
RestartSec=2
UMask=0077

[Install]
WantedBy=default.target
`
}

// InstallUnit writes agent a's unit (kernel.WriteUserUnit) and returns
// its path.
func InstallUnit(home, configHome, lnkPath string, a *caps.Agent) (string, error) {
	if err := kernel.CheckExecPath(lnkPath); err != nil {
		return "", err
	}
	if err := caps.CheckName(a.Name); err != nil { // letters, digits, '-', '_' and '.': nothing systemd reads specially
		return "", err
	}
	if !filepath.IsAbs(home) || strings.ContainsAny(home, "\"\\%$\n\r") {
		return "", fmt.Errorf("HOME %q can't be written into a unit: not absolute, or holding a quote, backslash, %%, $ or newline", home)
	}
	return kernel.WriteUserUnit(home, configHome, UnitName(a.ID), Unit(home, lnkPath, a))
}

// RemoveUnit removes agent id's unit file, if there is one, from
// configHome/systemd/user (~/.config when configHome is ""), opened
// through no link. The unit must be stopped first.
func RemoveUnit(home, configHome, id string) error {
	if configHome == "" {
		configHome = filepath.Join(home, ".config")
	}
	dir := filepath.Join(configHome, "systemd", "user")
	dfd, err := ownerfile.OpenPath(dir, unix.O_PATH|unix.O_DIRECTORY)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	defer unix.Close(dfd)
	if err := unix.Unlinkat(dfd, UnitName(id), 0); err != nil && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("removing %s: %w", filepath.Join(dir, UnitName(id)), err)
	}
	return nil
}
