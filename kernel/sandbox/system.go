package sandbox

import (
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
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

// maxEtcCopy is the largest /etc file copied into the sandbox; a larger
// one is bound read-only instead.
const maxEtcCopy = 1 << 20

// system binds the system folders read-only and gives the sandbox the
// /etc entries: a folder bound read-only, a regular file copied by
// bubblewrap (--file) from an fd opened here, read-only (0444, and the
// sandbox's root, where the copy lives, remounted read-only once every
// other mount is made: see build). A copy costs bubblewrap a read and a
// write; a bind mount costs it a whole read of the mount table (bubblewrap
// 0.8 parses /proc/self/mountinfo for every bind), and /etc's files were
// most of the sandbox's binds. The copy is what the file held at start.
// It returns the folders landlock lets the sandbox read.
func (s *Sandbox) system() (readable []string) {
	for _, d := range systemDirs {
		fi, err := os.Lstat(d)
		if err != nil {
			continue
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			if target, err := os.Readlink(d); err == nil {
				s.args = append(s.args, "--symlink", target, d)
			}
			continue
		}
		s.args = append(s.args, "--ro-bind", d, d)
		readable = append(readable, d)
	}
	s.args = append(s.args, "--dir", "/etc", "--dir", "/etc/ssl")
	for _, e := range etcEntries {
		s.etcEntry(filepath.Join("/etc", e))
	}
	return append(readable, "/etc")
}

// etcEntry gives the sandbox p, an /etc entry, if it exists: a folder
// bound read-only, a regular file up to maxEtcCopy copied read-only, a
// larger one bound read-only; anything else (a device, a fifo) not at
// all. A link in /etc is followed, as bubblewrap's bind would follow it:
// /etc is the system's, and a link there (localtime, os-release) is its.
func (s *Sandbox) etcEntry(p string) {
	fd, err := unix.Open(p, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
	if err != nil {
		return
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return
	}
	switch {
	case st.Mode&unix.S_IFMT == unix.S_IFREG && st.Size <= maxEtcCopy:
		// Blocking again (it was opened non-blocking lest it be a fifo):
		// os.NewFile would otherwise try to add it to Go's poller.
		if err := unix.SetNonblock(fd, false); err != nil {
			break
		}
		s.args = append(s.args, "--perms", "0444", "--file")
		s.fdArg(os.NewFile(uintptr(fd), p))
		s.args = append(s.args, p)
		return
	case st.Mode&unix.S_IFMT == unix.S_IFREG || st.Mode&unix.S_IFMT == unix.S_IFDIR:
		s.args = append(s.args, "--ro-bind", p, p)
	}
	unix.Close(fd)
}
