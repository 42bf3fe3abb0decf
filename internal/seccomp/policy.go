package seccomp

import "golang.org/x/sys/unix"

// Sockets is which socket families a process may create.
type Sockets int

const (
	// SocketsNone refuses socket and socketpair altogether.
	SocketsNone Sockets = iota
	// SocketsUnix allows AF_UNIX only.
	SocketsUnix
	// SocketsInet allows AF_UNIX, AF_INET and AF_INET6.
	SocketsInet
	// SocketsInetOnly allows AF_INET and AF_INET6, and no AF_UNIX: for
	// a broker that uses only the unix sockets it was handed, so that,
	// compromised, it can reach no named socket (the kernel's) that
	// landlock does not cover.
	SocketsInetOnly
)

// Policy is what a broker may still do beyond the common deny list.
type Policy struct {
	Exec    bool    // may call execve/execveat
	Sockets Sockets // socket families it may create
}

// Cond is one comparison on a syscall argument: (arg & Mask) == Value,
// or, with GE, arg >= Value (the whole 64 bits).
type Cond struct {
	Arg   uint
	Mask  uint64
	Value uint64
	GE    bool
}

// A Denial refuses Syscall (with Errno) when every Cond holds; with no
// Cond, always.
type Denial struct {
	Syscall string
	Errno   unix.Errno
	Conds   []Cond
}

// alwaysDenied is refused in every sandbox and broker.
var alwaysDenied = []string{
	"ptrace", "process_vm_readv", "process_vm_writev",
	"mount", "umount2", "pivot_root", "move_mount", "open_tree", "fsopen",
	"fsmount", "fsconfig", "fspick", "mount_setattr", "chroot", "setns",
	"keyctl", "add_key", "request_key", "bpf", "perf_event_open", "userfaultfd",
	"io_uring_setup", "io_uring_enter", "io_uring_register",
	"kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
	"acct", "swapon", "swapoff", "reboot", "quotactl", "open_by_handle_at",
	"iopl", "ioperm", "uselib", "vhangup", "syslog", "lookup_dcookie",
}

// nsFlags are clone/unshare flags that make a namespace.
var nsFlags = []uint64{
	unix.CLONE_NEWNS, unix.CLONE_NEWCGROUP, unix.CLONE_NEWUTS, unix.CLONE_NEWIPC,
	unix.CLONE_NEWUSER, unix.CLONE_NEWPID, unix.CLONE_NEWNET, unix.CLONE_NEWTIME,
}

const low32 = 0xffffffff

// Denials is the whole deny list for a policy. The sandbox's list is
// Denials(Policy{Exec: true, Sockets: SocketsInet}).
func Denials(p Policy) []Denial {
	var d []Denial
	for _, s := range alwaysDenied {
		d = append(d, Denial{Syscall: s, Errno: unix.EPERM})
	}
	// clone3 passes its flags in memory the filter cannot read: ENOSYS
	// makes libc and Go fall back to clone.
	d = append(d, Denial{Syscall: "clone3", Errno: unix.ENOSYS})
	for _, f := range nsFlags {
		d = append(d,
			Denial{Syscall: "unshare", Errno: unix.EPERM, Conds: []Cond{{Arg: 0, Mask: f, Value: f}}},
			Denial{Syscall: "clone", Errno: unix.EPERM, Conds: []Cond{{Arg: 0, Mask: f, Value: f}}})
	}
	// TIOCSTI pushes keystrokes into the owner's terminal; TIOCLINUX
	// can read and paste the console. Compared under a 32-bit mask, since
	// the kernel reads the request as an unsigned int.
	for _, req := range []uint64{unix.TIOCSTI, unix.TIOCLINUX} {
		d = append(d, Denial{Syscall: "ioctl", Errno: unix.EPERM, Conds: []Cond{{Arg: 1, Mask: low32, Value: req}}})
	}
	// personality: only PER_LINUX (0); no ADDR_NO_RANDOMIZE, no
	// READ_IMPLIES_EXEC (the query 0xffffffff is refused too: libseccomp
	// compares one argument once per rule).
	d = append(d, Denial{Syscall: "personality", Errno: unix.EPERM, Conds: []Cond{{Arg: 0, Value: 1, GE: true}}})
	if !p.Exec {
		d = append(d, Denial{Syscall: "execve", Errno: unix.EPERM}, Denial{Syscall: "execveat", Errno: unix.EPERM})
	} else {
		// A memfd is on no mount the sandbox can make noexec, and landlock
		// never checks it: made executable (MFD_EXEC, or no flag where
		// vm.memfd_noexec is 0, the kernel's default, which only the real
		// root may raise) it runs a program [commands] does not list,
		// through /proc/self/fd/N, a path seccomp cannot read. So a memfd
		// is made only sealed noexec (MFD_NOEXEC_SEAL, Linux 6.3); ENOSYS
		// otherwise, so a program falls back as on a kernel without
		// memfd_create (to a file in /tmp or /dev/shm, both noexec).
		d = append(d, Denial{Syscall: "memfd_create", Errno: unix.ENOSYS, Conds: []Cond{{Arg: 1, Mask: unix.MFD_NOEXEC_SEAL, Value: 0}}})
	}
	for _, s := range []string{"socket", "socketpair"} {
		if p.Sockets == SocketsNone {
			d = append(d, Denial{Syscall: s, Errno: unix.EPERM})
			continue
		}
		for _, c := range familiesRefused(p.Sockets) {
			d = append(d, Denial{Syscall: s, Errno: unix.EAFNOSUPPORT, Conds: []Cond{c}})
		}
		// Raw and packet-type sockets, whatever the family (root in a user
		// namespace may otherwise open them): the type's low 4 bits.
		for _, t := range []uint64{unix.SOCK_RAW, unix.SOCK_PACKET} {
			d = append(d, Denial{Syscall: s, Errno: unix.EPERM, Conds: []Cond{{Arg: 1, Mask: 0xf, Value: t}}})
		}
	}
	return d
}

// familiesRefused covers every socket family outside s with single
// comparisons (libseccomp allows one comparison per argument per rule).
// Values with any of the upper 32 bits set are refused by the >= rule.
func familiesRefused(s Sockets) []Cond {
	if s == SocketsUnix { // allow 1
		return []Cond{{Mask: low32, Value: 0}, {Value: 2, GE: true}}
	}
	if s == SocketsInetOnly { // allow 2 (AF_INET), 10 (AF_INET6)
		return []Cond{
			{Mask: low32 &^ 1, Value: 0}, // 0-1: AF_UNSPEC, AF_UNIX
			{Mask: low32, Value: 3},
			{Mask: low32 &^ 3, Value: 4}, // 4-7
			{Mask: low32 &^ 1, Value: 8}, // 8-9
			{Value: 11, GE: true},
		}
	}
	return []Cond{ // allow 1 (AF_UNIX), 2 (AF_INET), 10 (AF_INET6)
		{Mask: low32, Value: 0},
		{Mask: low32, Value: 3},
		{Mask: low32 &^ 3, Value: 4}, // 4-7
		{Mask: low32 &^ 1, Value: 8}, // 8-9
		{Value: 11, GE: true},
	}
}
