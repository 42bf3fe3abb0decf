package landlock

import (
	"errors"
	"sync"

	"golang.org/x/sys/unix"
)

// File access rights (include/uapi/linux/landlock.h), with the ABI that
// introduced each.
const (
	fsExecute    = 1 << 0
	fsWriteFile  = 1 << 1
	fsReadFile   = 1 << 2
	fsReadDir    = 1 << 3
	fsRemoveDir  = 1 << 4
	fsRemoveFile = 1 << 5
	fsMakeChar   = 1 << 6
	fsMakeDir    = 1 << 7
	fsMakeReg    = 1 << 8
	fsMakeSock   = 1 << 9
	fsMakeFifo   = 1 << 10
	fsMakeBlock  = 1 << 11
	fsMakeSym    = 1 << 12
	fsRefer      = 1 << 13 // ABI 2
	fsTruncate   = 1 << 14 // ABI 3
	fsIoctlDev   = 1 << 15 // ABI 5

	netBindTCP    = 1 << 0 // ABI 4
	netConnectTCP = 1 << 1 // ABI 4

	scopeAbstractUnix = 1 << 0 // ABI 6
	scopeSignal       = 1 << 1 // ABI 6

	restrictTSYNC = 1 << 3 // LANDLOCK_RESTRICT_SELF_TSYNC, ABI 8
)

// ErrUnsupported means the running kernel has no landlock (too old, or
// not enabled in the lsm= list). Nothing was restricted.
var ErrUnsupported = errors.New("the kernel has no landlock")

var abiOnce struct {
	sync.Once
	v int
}

// ABI is the newest landlock ABI the running kernel offers; 0 when it
// has none.
func ABI() int {
	abiOnce.Do(func() {
		r, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
		if e == 0 {
			abiOnce.v = int(r)
		}
	})
	return abiOnce.v
}

// fsKnown is every file right ABI abi knows.
func fsKnown(abi int) uint64 {
	var m uint64
	if abi >= 1 {
		m = fsExecute | fsWriteFile | fsReadFile | fsReadDir | fsRemoveDir | fsRemoveFile |
			fsMakeChar | fsMakeDir | fsMakeReg | fsMakeSock | fsMakeFifo | fsMakeBlock | fsMakeSym
	}
	if abi >= 2 {
		m |= fsRefer
	}
	if abi >= 3 {
		m |= fsTruncate
	}
	if abi >= 5 {
		m |= fsIoctlDev
	}
	return m
}

func netKnown(abi int) uint64 {
	if abi >= 4 {
		return netBindTCP | netConnectTCP
	}
	return 0
}

func scopeKnown(abi int) uint64 {
	if abi >= 6 {
		return scopeAbstractUnix | scopeSignal
	}
	return 0
}
