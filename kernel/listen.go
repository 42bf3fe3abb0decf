package kernel

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/ownerfile"
	"lnk.dev/lnk/kernel/proto"
)

// Names inside ~/.lnk/run.
const (
	SocketName = proto.SocketName
	LockName   = "kernel.lock"
)

// ErrRunning is returned when another kernel of this uid holds the lock.
var ErrRunning = proto.ErrRunning

// ErrNotASocket refuses a file in the socket's place that is not a
// socket of this uid: Link never deletes it.
var ErrNotASocket = errors.New("is not a socket of this user's; Link will not delete it")

// listener is the kernel's bound socket and the lock that makes it its.
type listener struct {
	ln   *net.UnixListener
	lock *os.File
	run  *os.File // ~/.lnk/run, held
	dev  uint64   // the socket file as bound, to remove only that one
	ino  uint64
}

// procPath names name inside the held folder dir without walking a path
// an attacker could swap: /proc/self/fd/<fd>/name.
func procPath(dir *os.File, name string) string {
	return "/proc/self/fd/" + strconv.Itoa(int(dir.Fd())) + "/" + name
}

// listen takes the lock, replaces a stale socket, and binds a new one.
func listen(run *os.File) (*listener, error) {
	rfd := int(run.Fd())
	lfd, err := ownerfile.Open(rfd, LockName, unix.O_RDWR|unix.O_CREAT|unix.O_NONBLOCK, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", LockName, err)
	}
	lock := os.NewFile(uintptr(lfd), LockName)
	var st unix.Stat_t
	if err := unix.Fstat(lfd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || int(st.Uid) != os.Geteuid() {
		lock.Close()
		return nil, fmt.Errorf("%s is not a regular file of this user's", LockName)
	}
	if err := unix.Flock(lfd, unix.LOCK_EX|unix.LOCK_NB); err != nil {
		lock.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, ErrRunning
		}
		return nil, fmt.Errorf("lock %s: %w", LockName, err)
	}
	// We hold the lock, so any socket left there is a dead kernel's.
	if err := unix.Fstatat(rfd, SocketName, &st, unix.AT_SYMLINK_NOFOLLOW); err == nil {
		if st.Mode&unix.S_IFMT != unix.S_IFSOCK || int(st.Uid) != os.Geteuid() {
			lock.Close()
			return nil, fmt.Errorf("~/.lnk/run/%s %w", SocketName, ErrNotASocket)
		}
		if err := unix.Unlinkat(rfd, SocketName, 0); err != nil {
			lock.Close()
			return nil, fmt.Errorf("remove stale socket: %w", err)
		}
	} else if !errors.Is(err, unix.ENOENT) {
		lock.Close()
		return nil, err
	}
	ln, err := net.ListenUnix("unixpacket", &net.UnixAddr{Name: procPath(run, SocketName), Net: "unixpacket"})
	if err != nil {
		lock.Close()
		return nil, fmt.Errorf("listen: %w", err)
	}
	ln.SetUnlinkOnClose(false)
	// bind made it 0777&^umask; the owner alone may connect. We hold the
	// lock and the 0700 folder is ours, so the name is the socket we bound.
	if err := unix.Fchmodat(rfd, SocketName, 0o600, 0); err != nil {
		ln.Close()
		lock.Close()
		return nil, fmt.Errorf("chmod socket: %w", err)
	}
	if err := unix.Fstatat(rfd, SocketName, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil || st.Mode&unix.S_IFMT != unix.S_IFSOCK {
		ln.Close()
		lock.Close()
		return nil, fmt.Errorf("the socket vanished after bind")
	}
	if st.Mode&0o077 != 0 {
		// umask is 077 in the kernel; a looser socket means someone else's
		// process raced us, which the 0700 folder forbids. Refuse anyway.
		ln.Close()
		unix.Unlinkat(rfd, SocketName, 0)
		lock.Close()
		return nil, fmt.Errorf("socket has mode %o, not 0600", st.Mode&0o777)
	}
	return &listener{ln: ln, lock: lock, run: run, dev: st.Dev, ino: st.Ino}, nil
}

// remove unlinks the socket if it is still the one this kernel bound,
// then releases the lock.
func (l *listener) remove() {
	rfd := int(l.run.Fd())
	var st unix.Stat_t
	if err := unix.Fstatat(rfd, SocketName, &st, unix.AT_SYMLINK_NOFOLLOW); err == nil &&
		st.Mode&unix.S_IFMT == unix.S_IFSOCK && st.Dev == l.dev && st.Ino == l.ino {
		unix.Unlinkat(rfd, SocketName, 0)
	}
	l.lock.Close()
}
