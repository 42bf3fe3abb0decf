package sandbox

import (
	"os"
	"path/filepath"
)

// systemDirs are bound read-only at their own paths (a link such as
// /bin -> usr/bin is recreated as the same link).
var systemDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32"}

// etcEntries are the only parts of /etc the sandbox sees: what programs
// need to load, name users, find certificates and draw. Never shadow,
// gshadow, sudoers or ssh's keys.
var etcEntries = []string{
	"ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "passwd", "group",
	"nsswitch.conf", "hosts", "host.conf", "resolv.conf", "gai.conf", "localtime", "timezone",
	"ssl/certs", "ssl/openssl.cnf", "ca-certificates", "ca-certificates.conf", "pki", "mime.types", "protocols", "services",
	"bash.bashrc", "profile", "profile.d", "inputrc", "terminfo", "gitconfig", "os-release",
	"debian_version", "locale.alias", "locale.conf", "magic", "mailcap", "papersize",
}

// systemArgs binds the system folders and /etc entries.
func systemArgs() (args []string, readable []string) {
	for _, d := range systemDirs {
		fi, err := os.Lstat(d)
		if err != nil {
			continue
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			if target, err := os.Readlink(d); err == nil {
				args = append(args, "--symlink", target, d)
			}
			continue
		}
		args = append(args, "--ro-bind", d, d)
		readable = append(readable, d)
	}
	args = append(args, "--dir", "/etc", "--dir", "/etc/ssl")
	for _, e := range etcEntries {
		p := filepath.Join("/etc", e)
		if _, err := os.Stat(p); err == nil {
			args = append(args, "--ro-bind", p, p)
		}
	}
	readable = append(readable, "/etc")
	return args, readable
}
