package kernel

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/ownerfile"
)

// UnitName is the systemd user unit `lnk kernel install` writes.
const UnitName = "lnk-kernel.service"

// Unit is the unit's text for the lnk program at lnkPath.
func Unit(lnkPath string) string {
	return `[Unit]
Description=Link kernel: holds every handle, starts the brokers, keeps the audit log
Documentation=man:lnk(1)

[Service]
Type=simple
ExecStart=` + systemdQuote(lnkPath) + ` kernel run
ExecStop=` + systemdQuote(lnkPath) + ` kernel stop
KillSignal=SIGTERM
TimeoutStopSec=30
Restart=on-failure
RestartSec=1
UMask=0077
NoNewPrivileges=yes

[Install]
WantedBy=default.target
`
}

// systemdQuote quotes a path for ExecStart, escaping what systemd reads
// specially.
func systemdQuote(p string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, `%`, `%%`, `$`, `$$`)
	return `"` + r.Replace(p) + `"`
}

// InstallUnit writes the unit to $XDG_CONFIG_HOME/systemd/user (or
// ~/.config/systemd/user) as WriteUserUnit does, and returns its path.
func InstallUnit(home, configHome, lnkPath string) (string, error) {
	if err := CheckExecPath(lnkPath); err != nil {
		return "", err
	}
	return WriteUserUnit(home, configHome, UnitName, Unit(lnkPath))
}

// CheckExecPath refuses a program's path a unit's ExecStart can't name:
// not absolute, or not on one line.
func CheckExecPath(p string) error {
	if strings.ContainsAny(p, "\n\r") || !filepath.IsAbs(p) {
		return fmt.Errorf("lnk's path %q is not an absolute path on one line", p)
	}
	return nil
}

// SystemdQuote quotes a path for a unit's ExecStart.
func SystemdQuote(p string) string { return systemdQuote(p) }

// WriteUserUnit writes the systemd user unit name with text to
// $XDG_CONFIG_HOME/systemd/user (or ~/.config/systemd/user) atomically,
// 0600, never through a link in its place, and returns its path.
func WriteUserUnit(home, configHome, name, text string) (string, error) {
	if configHome == "" {
		configHome = filepath.Join(home, ".config")
	}
	dir := filepath.Join(configHome, "systemd", "user")
	// configHome is the owner's setting, trusted as HOME is; below it
	// nothing is followed, and a folder others may write is refused.
	if err := os.MkdirAll(configHome, 0o700); err != nil {
		return "", err
	}
	cfd, err := unix.Open(configHome, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", fmt.Errorf("open %s: %w", configHome, err)
	}
	defer unix.Close(cfd)
	noOthersWrite := ownerfile.Rule{Forbid: 0o022}
	sfd, err := ownerfile.MakeDir(cfd, "systemd", unix.O_PATH, noOthersWrite)
	if err != nil {
		return "", fmt.Errorf("%s: %w", filepath.Join(configHome, "systemd"), err)
	}
	defer unix.Close(sfd)
	dfd, err := ownerfile.MakeDir(sfd, "user", unix.O_PATH, noOthersWrite)
	if err != nil {
		return "", fmt.Errorf("%s: %w", dir, err)
	}
	defer unix.Close(dfd)
	if err := ownerfile.WriteAtomic(dfd, name, []byte(text), ownerfile.Write{Mode: 0o600}); err != nil {
		return "", fmt.Errorf("%s: %w", filepath.Join(dir, name), err)
	}
	return filepath.Join(dir, name), nil
}
