package kernel

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

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

// systemdQuote quotes lnk's path as the executable of ExecStart= and
// ExecStop=: in double quotes (a space stays in the path), % doubled
// (systemd expands specifiers there). $ stays as it is: systemd expands
// no variable in the executable, and "$$" would reach exec as two
// dollars. A path systemd cannot take as an executable at all (unitPath)
// never gets here.
func systemdQuote(p string) string {
	return `"` + strings.ReplaceAll(p, "%", "%%") + `"`
}

// ErrUnitPath is the refusal of a path for lnk that a unit cannot name.
var ErrUnitPath = errors.New("systemd cannot start a program from that path")

// unitPath checks lnkPath can be the unit's executable: absolute, and
// UTF-8 without a control character, a quote or a backslash, which systemd
// refuses in an executable's name ("contains special characters"): a
// unit written with one would fail only at its start.
func unitPath(lnkPath string) error {
	if !filepath.IsAbs(lnkPath) {
		return fmt.Errorf("lnk's path %q is not absolute: %w", lnkPath, ErrUnitPath)
	}
	if !utf8.ValidString(lnkPath) {
		return fmt.Errorf("lnk's path %q is not UTF-8, which systemd reads unit files as: %w", lnkPath, ErrUnitPath)
	}
	for _, r := range lnkPath {
		if r < ' ' || r == 0x7f || r == '\\' || r == '"' || r == '\'' {
			return fmt.Errorf("lnk's path %q holds %q, which systemd refuses in a program's name: %w", lnkPath, r, ErrUnitPath)
		}
	}
	return nil
}

// InstallUnit writes the unit to $XDG_CONFIG_HOME/systemd/user (or
// ~/.config/systemd/user) as WriteUserUnit does, and returns its path.
func InstallUnit(home, configHome, lnkPath string) (string, error) {
	if err := CheckExecPath(lnkPath); err != nil {
		return "", err
	}
	return WriteUserUnit(home, configHome, UnitName, Unit(lnkPath))
}

// CheckExecPath refuses a program's path a unit's ExecStart can't name
// (unitPath): every unit Link writes checks it first.
func CheckExecPath(p string) error { return unitPath(p) }

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
