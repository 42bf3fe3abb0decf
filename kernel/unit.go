package kernel

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
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
// ~/.config/systemd/user) atomically, 0600, never through a link in its
// place, and returns its path.
func InstallUnit(home, configHome, lnkPath string) (string, error) {
	if strings.ContainsAny(lnkPath, "\n\r") || !filepath.IsAbs(lnkPath) {
		return "", fmt.Errorf("lnk's path %q is not an absolute path on one line", lnkPath)
	}
	if configHome == "" {
		configHome = filepath.Join(home, ".config")
	}
	dir := filepath.Join(configHome, "systemd", "user")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	d, err := os.OpenFile(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return "", fmt.Errorf("open %s: %w", dir, err)
	}
	defer d.Close()
	dfd := int(d.Fd())
	var st unix.Stat_t
	if err := unix.Fstatat(dfd, UnitName, &st, unix.AT_SYMLINK_NOFOLLOW); err == nil && st.Mode&unix.S_IFMT != unix.S_IFREG {
		return "", fmt.Errorf("%s is not a regular file: Link will not replace it", filepath.Join(dir, UnitName))
	} else if err != nil && !errors.Is(err, unix.ENOENT) {
		return "", err
	}
	tmp := fmt.Sprintf(".%s.%d.tmp", UnitName, os.Getpid())
	fd, err := unix.Openat(dfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return "", err
	}
	f := os.NewFile(uintptr(fd), tmp)
	_, werr := f.WriteString(Unit(lnkPath))
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = unix.Renameat(dfd, tmp, dfd, UnitName)
	}
	if werr != nil {
		unix.Unlinkat(dfd, tmp, 0)
		return "", werr
	}
	unix.Fsync(dfd)
	return filepath.Join(dir, UnitName), nil
}
