package seccomp

import (
	"fmt"
	"os"

	libseccomp "github.com/seccomp/libseccomp-golang"
	"golang.org/x/sys/unix"
)

// Build compiles denials into a libseccomp filter for the native
// architecture: allow by default, refuse what denials list, kill calls
// from a foreign architecture. The caller releases it.
func Build(denials []Denial) (*libseccomp.ScmpFilter, error) {
	f, err := libseccomp.NewFilter(libseccomp.ActAllow)
	if err != nil {
		return nil, fmt.Errorf("seccomp: new filter: %w", err)
	}
	if err := f.SetBadArchAction(libseccomp.ActKillProcess); err != nil {
		f.Release()
		return nil, fmt.Errorf("seccomp: bad arch action: %w", err)
	}
	for _, d := range denials {
		if err := addDenial(f, d); err != nil {
			f.Release()
			return nil, err
		}
	}
	return f, nil
}

func addDenial(f *libseccomp.ScmpFilter, d Denial) error {
	call, err := libseccomp.GetSyscallFromName(d.Syscall)
	if err != nil {
		return nil // not a syscall on this architecture: nothing to refuse
	}
	act := libseccomp.ActErrno.SetReturnCode(int16(d.Errno))
	if len(d.Conds) == 0 {
		if err := f.AddRule(call, act); err != nil {
			return fmt.Errorf("seccomp: refuse %s: %w", d.Syscall, err)
		}
		return nil
	}
	var conds []libseccomp.ScmpCondition
	for _, c := range d.Conds {
		var sc libseccomp.ScmpCondition
		if c.GE {
			sc, err = libseccomp.MakeCondition(c.Arg, libseccomp.CompareGreaterEqual, c.Value)
		} else {
			sc, err = libseccomp.MakeCondition(c.Arg, libseccomp.CompareMaskedEqual, c.Mask, c.Value)
		}
		if err != nil {
			return fmt.Errorf("seccomp: condition on %s: %w", d.Syscall, err)
		}
		conds = append(conds, sc)
	}
	if err := f.AddRuleConditional(call, act, conds); err != nil {
		return fmt.Errorf("seccomp: refuse %s: %w", d.Syscall, err)
	}
	return nil
}

// BPF is the raw BPF program (struct sock_filter array) for denials, as
// the kernel's seccomp(SECCOMP_SET_MODE_FILTER) takes it.
func BPF(denials []Denial) ([]byte, error) {
	f, err := Build(denials)
	if err != nil {
		return nil, err
	}
	defer f.Release()
	// libseccomp 2.5 has no export to memory: go through a memfd.
	fd, err := unix.MemfdCreate("lnk-seccomp", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("seccomp: memfd: %w", err)
	}
	file := os.NewFile(uintptr(fd), "lnk-seccomp")
	defer file.Close()
	if err := f.ExportBPF(file); err != nil {
		return nil, fmt.Errorf("seccomp: export: %w", err)
	}
	if _, err := file.Seek(0, 0); err != nil {
		return nil, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, err
	}
	buf := make([]byte, st.Size)
	if _, err := file.ReadAt(buf, 0); err != nil {
		return nil, fmt.Errorf("seccomp: read export: %w", err)
	}
	return buf, nil
}

// SandboxPolicy is what a sandboxed command may do beyond the deny list:
// exec, and AF_UNIX, AF_INET and AF_INET6 sockets.
var SandboxPolicy = Policy{Exec: true, Sockets: SocketsInet}

// SandboxBPF is the sandbox's filter as raw BPF (what lnk-init embeds).
func SandboxBPF() ([]byte, error) { return BPF(Denials(SandboxPolicy)) }

// ConfineBroker sets NO_NEW_PRIVS and loads p's filter on every thread of
// the calling process.
func ConfineBroker(p Policy) error {
	f, err := Build(Denials(p))
	if err != nil {
		return err
	}
	defer f.Release()
	if err := f.SetNoNewPrivsBit(true); err != nil {
		return fmt.Errorf("seccomp: no_new_privs: %w", err)
	}
	if err := f.Load(); err != nil {
		return fmt.Errorf("seccomp: load: %w", err)
	}
	return nil
}
