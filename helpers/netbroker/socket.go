package netbroker

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/ownerdir"
)

// Socket is a proxy's listening unix socket, made by [Listen] (for a
// starter that hands it to lnk-netbroker as an fd: socket activation)
// or by [Start]. It is proxy-<random>.sock, mode 0600, in
// ~/.lnk/agents/.net/<agent id>/ (0700; a one-run folder for a run with
// no agent): one per sandbox, so two sandboxes of one agent never take
// each other's.
type Socket struct {
	// Path is the socket's path; Dir the folder holding it.
	Path, Dir string
	// File is the listening socket (close-on-exec). Whoever serves it
	// is the only one that accepts on it; the maker hands it on and
	// closes its own copy.
	File     *os.File
	name     string
	dirFD    int
	parentFD int
	oneRun   bool
}

// Listen makes the socket of a proxy for the agent agentID ("" for a
// run with no agent) under home, never following a link anywhere under
// home/.lnk, and listens on it. Remove removes it.
func Listen(home, agentID string) (*Socket, error) {
	netDir, err := OpenNetDir(home)
	if err != nil {
		return nil, err
	}
	defer netDir.Close()
	return listenIn(netDir, home, agentID)
}

// ListenIn is [Listen] in the sockets' folder netDir already opened
// (see [OpenNetDir]), for a proxy that makes its own socket before it
// confines itself and hands it to [Start] as Options.Socket.
func ListenIn(netDir *os.File, home, agentID string) (*Socket, error) {
	return listenIn(netDir, home, agentID)
}

func listenIn(netDir *os.File, home, agentID string) (*Socket, error) {
	name, oneRun := agentID, false
	if name == "" {
		var b [12]byte
		rand.Read(b[:])
		name, oneRun = "run-"+hex.EncodeToString(b[:]), true
	} else if !isAgentID(name) {
		return nil, fmt.Errorf("netbroker: agent id %q is not 32 lowercase hex digits", name)
	}
	fd, err := ownerdir.Below(int(netDir.Fd()), []string{name})
	if err != nil {
		return nil, err
	}
	parent, err := unix.FcntlInt(netDir.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		unix.Close(fd)
		return nil, err
	}
	var b [8]byte
	rand.Read(b[:])
	s := &Socket{Dir: filepath.Join(home, ".lnk", "agents", ".net", name), name: "proxy-" + hex.EncodeToString(b[:]) + ".sock",
		dirFD: fd, parentFD: parent, oneRun: oneRun}
	s.Path = filepath.Join(s.Dir, s.name)
	if err := s.listen(); err != nil {
		s.Remove()
		return nil, fmt.Errorf("netbroker: binding %s: %w", s.Path, err)
	}
	return s, nil
}

// listen binds through the held folder, so a link swapped in on the
// path can't move the socket elsewhere, then makes it 0600.
func (s *Socket) listen() error {
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(fd), s.Path)
	err = unix.Bind(fd, &unix.SockaddrUnix{Name: "/proc/self/fd/" + strconv.Itoa(s.dirFD) + "/" + s.name})
	if err == nil {
		if err = unix.Fchmodat(s.dirFD, s.name, 0o600, 0); err == nil {
			err = unix.Listen(fd, unix.SOMAXCONN)
		}
	}
	if err != nil {
		f.Close()
		return err
	}
	s.File = f
	return nil
}

// Remove closes the maker's copy of the socket, removes it and a
// one-run folder, then what runs killed outright left (sweep.go). Call
// it once whoever served it has ended.
func (s *Socket) Remove() {
	if s.File != nil {
		s.File.Close()
	}
	unix.Unlinkat(s.dirFD, s.name, 0)
	unix.Close(s.dirFD)
	if s.oneRun {
		unix.Unlinkat(s.parentFD, filepath.Base(s.Dir), unix.AT_REMOVEDIR)
	}
	sweepStale(s.parentFD, boundSockets, staleAfter)
	unix.Close(s.parentFD)
}
