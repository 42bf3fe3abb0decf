package sandbox

import (
	"bytes"
	"encoding/binary"
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
// /etc entries: a regular file (or a small folder's files) copied by
// bubblewrap (--file) from an fd opened here, read-only (0444, and the
// sandbox's root, where the copy lives, remounted read-only once every
// other mount is made: see build). A copy costs bubblewrap a read and a
// write; a bind mount costs it a whole read of the mount table (bubblewrap
// 0.8 parses /proc/self/mountinfo for every bind), and /etc's files were
// most of the sandbox's binds; a larger folder is bound read-only. The
// copy is what the file held at start.
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

// etcEntry gives the sandbox p, an /etc entry, if it exists: a regular
// file up to maxEtcCopy copied read-only, a larger one bound read-only; a
// small folder copied (copyEtcFolder), a larger one bound read-only;
// anything else (a device, a fifo) not at all. A link in /etc is followed, as bubblewrap's bind would follow it:
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
		// os.NewFile, in Start, would otherwise add it to Go's poller.
		if err := unix.SetNonblock(fd, false); err != nil {
			break
		}
		s.args = append(s.args, "--perms", "0444", "--file")
		s.rawFdArg(fd)
		s.args = append(s.args, p)
		return
	case st.Mode&unix.S_IFMT == unix.S_IFDIR:
		// A folder of more than a block (alternatives, ssl/certs) holds
		// too many entries to be worth listing: bound at once.
		if st.Size > 4096 {
			s.args = append(s.args, "--ro-bind", p, p)
			break
		}
		if c, ok := copyEtcFolder(fd, p); ok {
			for _, o := range c {
				s.args = append(s.args, o.args...)
				if o.file >= 0 {
					s.rawFdArg(o.file)
					s.args = append(s.args, o.dest)
				}
			}
			break
		}
		s.args = append(s.args, "--ro-bind", p, p)
	case st.Mode&unix.S_IFMT == unix.S_IFREG:
		s.args = append(s.args, "--ro-bind", p, p)
	}
	unix.Close(fd)
}

// maxEtcFolderCopy is the most entries (at every level) an /etc folder
// may hold to be copied rather than bound: ld.so.conf.d, profile.d,
// terminfo and ca-certificates are a few small files each, each bind as
// dear to bubblewrap as 25 copies; alternatives and ssl/certs hold
// hundreds and stay bound.
const maxEtcFolderCopy = 16

// etcCopy is one bubblewrap operation of a folder's copy: args, then,
// with a file (an fd; -1 for none), its fd and dest.
type etcCopy struct {
	args []string
	file int
	dest string
}

// copyEtcFolder lists what copying the folder open at fd (p in /etc)
// takes: the folder and its subfolders made, each link made again as the
// same link (never followed), each regular file up to maxEtcCopy copied
// read-only from an fd opened beneath fd without following a link. It
// says no (closing what it opened) for more than maxEtcFolderCopy
// entries, a larger file, or anything else (a device, a fifo): the
// folder is then bound.
func copyEtcFolder(fd int, p string) (ops []etcCopy, ok bool) {
	defer func() {
		if !ok {
			for _, o := range ops {
				if o.file >= 0 {
					unix.Close(o.file)
				}
			}
			ops = nil
		}
	}()
	ops = append(ops, etcCopy{args: []string{"--dir", p}, file: -1})
	n := 0
	buf := make([]byte, 2048)
	var walk func(fd int, p string) bool
	walk = func(fd int, p string) bool {
		ents, ok := listFolder(fd, buf, maxEtcFolderCopy-n)
		if n += len(ents); !ok {
			return false
		}
		for _, e := range ents {
			q := p + "/" + e.name
			switch e.typ {
			case unix.DT_LNK:
				target, err := readlinkat(fd, e.name)
				if err != nil {
					return false
				}
				ops = append(ops, etcCopy{args: []string{"--symlink", target, q}, file: -1})
			case unix.DT_DIR:
				sub, err := unix.Openat(fd, e.name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
				if err != nil {
					return false
				}
				ops = append(ops, etcCopy{args: []string{"--dir", q}, file: -1})
				ok := walk(sub, q)
				unix.Close(sub)
				if !ok {
					return false
				}
			case unix.DT_REG:
				f, err := unix.Openat(fd, e.name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
				if err != nil {
					return false
				}
				var st unix.Stat_t
				if unix.Fstat(f, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || st.Size > maxEtcCopy || unix.SetNonblock(f, false) != nil {
					unix.Close(f)
					return false
				}
				ops = append(ops, etcCopy{args: []string{"--perms", "0444", "--file"}, file: f, dest: q})
			default: // a device, a fifo, a socket, or a type the filesystem does not say
				return false
			}
		}
		return true
	}
	return ops, walk(fd, p)
}

type dirent struct {
	name string
	typ  uint8
}

// listFolder lists the folder open at fd (its offset at the start) with
// getdents64 into buf, but for . and ..; false if it cannot, or if it
// holds more than max entries.
func listFolder(fd int, buf []byte, max int) ([]dirent, bool) {
	var ents []dirent
	for {
		n, err := unix.Getdents(fd, buf)
		if err != nil {
			return ents, false
		}
		if n == 0 {
			return ents, true
		}
		for b := buf[:n]; len(b) >= 19; {
			reclen := int(binary.NativeEndian.Uint16(b[16:18])) // linux_dirent64: ino, off, reclen, type, name
			if reclen < 19 || reclen > len(b) {
				return ents, false
			}
			name := b[19:reclen]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			if s := string(name); s != "." && s != ".." {
				if len(ents) == max {
					return ents, false
				}
				ents = append(ents, dirent{name: s, typ: b[18]})
			}
			b = b[reclen:]
		}
	}
}

// readlinkat is a link's target, read beneath the folder open at fd.
func readlinkat(fd int, name string) (string, error) {
	for size := 256; size <= 4096; size *= 4 {
		b := make([]byte, size)
		n, err := unix.Readlinkat(fd, name, b)
		if err != nil {
			return "", err
		}
		if n < size {
			return string(b[:n]), nil
		}
	}
	return "", unix.ENAMETOOLONG
}
