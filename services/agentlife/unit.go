package agentlife

import (
	"fmt"
	"path/filepath"
	"strings"

	"lnk.dev/lnk/caps"
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
