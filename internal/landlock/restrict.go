package landlock

import (
	"fmt"
	"os"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Status says what a Restrict call enforced.
type Status struct {
	ABI    int  `json:"abi"`    // the kernel's landlock ABI
	Files  bool `json:"files"`  // file rights restricted
	TCP    bool `json:"tcp"`    // TCP bind/connect restricted (ABI 4)
	Scoped bool `json:"scoped"` // signals and abstract sockets scoped (ABI 6)
}

type rulesetAttr struct {
	fs, net, scoped uint64
}

type pathBeneath struct {
	allowed uint64
	fd      int32
	_       [4]byte // the kernel's struct is packed: 12 bytes
}

type netPort struct {
	allowed uint64
	port    uint64
}

const (
	rulePathBeneath = 1
	ruleNetPort     = 2
)

// Restrict confines every thread of the calling process to rules (see the
// package doc for how threads are covered). It returns what was enforced.
func Restrict(rules ...Rule) (Status, error) {
	runtime.LockOSThread() // the thread that restricts (and may exec) stays ours
	abi := ABI()
	if abi >= 8 {
		return restrict(rules, restrictTSYNC)
	}
	if os.Getenv(reexecMarker) == "1" {
		os.Unsetenv(reexecMarker)
		return restrict(rules, 0)
	}
	// The re-exec needs to run this very program once more: allow it.
	self, fds, err := selfRules()
	defer func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}()
	if err != nil {
		return Status{ABI: abi}, err
	}
	st, err := restrict(append(rules[:len(rules):len(rules)], self...), 0)
	if err != nil {
		return st, err
	}
	return st, reexec()
}

// RestrictThread confines only the calling OS thread, which the caller
// must have locked (runtime.LockOSThread) and should exec from at once.
func RestrictThread(rules ...Rule) (Status, error) {
	return restrict(rules, 0)
}

func restrict(rules []Rule, flags uintptr) (Status, error) {
	abi := ABI()
	st := Status{ABI: abi}
	if abi == 0 {
		return st, ErrUnsupported
	}
	attr := rulesetAttr{fs: fsKnown(abi), net: netKnown(abi), scoped: scopeKnown(abi)}
	for _, r := range rules {
		switch r.kind {
		case kindAnyTCP:
			attr.net = 0
		case kindOutsideSignals:
			attr.scoped = 0
		case kindBeneath:
			if r.rights == 0 {
				return st, ErrNoRights
			}
		}
	}
	size := unsafe.Sizeof(attr)
	if attr.scoped == 0 {
		size = 16 // older kernels know only the first two fields
	}
	fd, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), size, 0)
	if e != 0 {
		return st, fmt.Errorf("landlock: create ruleset: %w", e)
	}
	defer unix.Close(int(fd))
	for _, r := range rules {
		if err := addRule(int(fd), r, attr); err != nil {
			return st, err
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return st, fmt.Errorf("landlock: no_new_privs: %w", err)
	}
	if _, _, e := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, fd, flags, 0); e != 0 {
		return st, fmt.Errorf("landlock: restrict self: %w", e)
	}
	st.Files, st.TCP, st.Scoped = true, attr.net != 0, attr.scoped != 0
	return st, nil
}

func addRule(rs int, r Rule, attr rulesetAttr) error {
	switch r.kind {
	case kindBeneath:
		var s unix.Stat_t
		if err := unix.Fstat(r.fd, &s); err != nil {
			return fmt.Errorf("landlock: rule fd %d: %w", r.fd, err)
		}
		pb := pathBeneath{allowed: fsAccess(r.rights, s.Mode&unix.S_IFMT == unix.S_IFDIR) & attr.fs, fd: int32(r.fd)}
		if pb.allowed == 0 {
			return nil // nothing this kernel can express
		}
		_, _, e := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(rs), rulePathBeneath, uintptr(unsafe.Pointer(&pb)), 0, 0, 0)
		if e != 0 {
			return fmt.Errorf("landlock: add rule for fd %d: %w", r.fd, e)
		}
	case kindBindTCP, kindConnectTCP:
		if attr.net == 0 {
			return nil // TCP is not restricted: nothing to allow
		}
		np := netPort{allowed: netBindTCP, port: uint64(r.port)}
		if r.kind == kindConnectTCP {
			np.allowed = netConnectTCP
		}
		_, _, e := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(rs), ruleNetPort, uintptr(unsafe.Pointer(&np)), 0, 0, 0)
		if e != 0 {
			return fmt.Errorf("landlock: add port %d: %w", r.port, e)
		}
	}
	return nil
}
