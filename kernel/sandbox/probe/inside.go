package probe

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Run runs every probe, inside the sandbox.
func Run(s Spec) []Result {
	out := make([]Result, 0, len(s.Probes))
	for _, p := range s.Probes {
		got, detail := attempt(p)
		out = append(out, Result{Probe: p, Got: got, Detail: detail})
	}
	return out
}

// verdict turns an attempt's error into Open (it worked) or Closed.
func verdict(err error) (string, string) {
	if err == nil {
		return Open, ""
	}
	return Closed, err.Error()
}

func attempt(p Probe) (string, string) {
	switch p.Kind {
	case "skip":
		return "skipped", p.Arg
	case "none":
		return "skipped", "not tried: it would change the owner's folder or leave the machine"
	case "read":
		return verdict(readSome(p.Arg))
	case "write":
		return verdict(writeIn(p.Arg))
	case "replace":
		return verdict(replace(p.Arg))
	case "replace-in":
		return verdict(replaceIn(p.Arg))
	case "exec":
		return execVerdict(startAndKill(p.Arg))
	case "dropped":
		return dropAndRun(p.Arg)
	case "ldso":
		return ldsoVerdict(p.Arg) // loader.go
	case "memfd":
		return memfdVerdict(p.Arg)
	case "memfd-sealed":
		return memfdSealed()
	case "fork":
		return procsVerdict(p.Arg) // procs.go
	case "tasks":
		return tasksVerdict(p.Arg)
	case "threads":
		return threadsVerdict(p.Arg)
	case "memory":
		return memoryVerdict(p.Arg) // memory.go
	case "touch":
		return touchVerdict(p.Arg)
	case "ns":
		return nsVerdict(p.Arg)
	case "session":
		return sessionVerdict(p.Arg)
	case "udp":
		return sendUDP(p.Arg)
	case "tcp":
		return verdict(dial("tcp", p.Arg))
	case "own-proxy":
		return throughProxy(p.Arg)
	case "abstract":
		return verdict(dial("unix", "@"+p.Arg))
	case "raw":
		return verdict(socket(unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_ICMP))
	case "packet":
		return verdict(socket(unix.AF_PACKET, unix.SOCK_RAW, 0))
	case "ptrace":
		pid, err := pidOf(p.Arg)
		if err != nil {
			return "skipped", err.Error()
		}
		err = unix.PtraceAttach(pid)
		if err == nil {
			unix.PtraceDetach(pid)
		}
		return verdict(err)
	case "signal":
		pid, err := pidOf(p.Arg)
		if err != nil {
			return "skipped", err.Error()
		}
		return verdict(unix.Kill(pid, 0))
	case "io_uring_setup":
		var params [120]byte
		return seccompVerdict(unix.Syscall(unix.SYS_IO_URING_SETUP, 1, uintptrOf(&params[0]), 0))
	case "TIOCSTI":
		return seccompVerdict(unix.Syscall(unix.SYS_IOCTL, ^uintptr(0), unix.TIOCSTI, 0))
	case "keyctl":
		return seccompVerdict(unix.Syscall(unix.SYS_KEYCTL, unix.KEYCTL_GET_KEYRING_ID, ^uintptr(2), 0)) // KEY_SPEC_SESSION_KEYRING
	case "bpf":
		return seccompVerdict(unix.Syscall(unix.SYS_BPF, 0, 0, 0))
	case "mount":
		return verdict(unix.Mount("none", "/tmp", "tmpfs", 0, ""))
	case "unshare(CLONE_NEWUSER)":
		return verdict(unix.Unshare(unix.CLONE_NEWUSER))
	case "caps":
		return capsVerdict()
	case "procs":
		if _, err := os.Stat("/proc/" + p.Arg); err == nil {
			return Open, "the checking lnk's pid " + p.Arg + " is visible"
		}
		return Closed, ""
	case "linkprocs":
		return linkProcsVerdict()
	case "fds":
		return fdsVerdict()
	case "env":
		return envVerdict(p.Arg)
	}
	return "skipped", "unknown probe " + p.Kind
}

func uintptrOf(b *byte) uintptr { return uintptr(unsafePointer(b)) }

// seccompVerdict: EPERM (or ENOSYS) is the filter's refusal; any other
// outcome means the call reached the kernel.
func seccompVerdict(_, _ uintptr, e unix.Errno) (string, string) {
	if e == unix.EPERM || e == unix.ENOSYS {
		return Closed, e.Error()
	}
	if e == 0 {
		return Open, "succeeded"
	}
	return Open, "reached the kernel: " + e.Error()
}

func readSome(p string) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		if _, err = f.Readdirnames(1); errors.Is(err, io.EOF) {
			return nil
		}
		return err
	}
	if _, err = f.Read(make([]byte, 1)); errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// writeIn creates a file in folder p (or opens file p for writing).
func writeIn(p string) error {
	if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
		if err == nil {
			f.Close()
		}
		return err
	}
	dir, name := p, ".lnk-probe-"+strconv.Itoa(os.Getpid())
	if fi, err := os.Stat(p); err != nil || !fi.IsDir() {
		dir, name = filepath.Dir(p), filepath.Base(p)
	}
	path := filepath.Join(dir, name)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	f.Close()
	return os.Remove(path)
}

// replace renames p aside and back.
func replace(p string) error {
	aside := p + ".lnk-probe-" + strconv.Itoa(os.Getpid())
	if err := os.Rename(p, aside); err != nil {
		return err
	}
	return os.Rename(aside, p)
}

// replaceIn makes a file at the top of folder dir and replaces it: the
// control, which must work where dir is written.
func replaceIn(dir string) error {
	p := filepath.Join(dir, ".lnk-probe-mv-"+strconv.Itoa(os.Getpid()))
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		return fmt.Errorf("could not make it: %w", err)
	}
	defer os.Remove(p)
	return replace(p)
}

// startAndKill execs path and, once the exec has worked, kills it.
func startAndKill(path string) error {
	var err error
	for range 20 { // ETXTBSY: a file just written may still be open in a child between fork and exec
		cmd := exec.Command(path)
		if err = cmd.Start(); err == nil {
			cmd.Process.Kill()
			cmd.Wait()
			return nil
		}
		if !errors.Is(err, unix.ETXTBSY) {
			return err
		}
		time.Sleep(10 * time.Millisecond)
	}
	return err
}

// execVerdict: an exec that worked is Open; only the refusal landlock
// (EACCES) or a mount's noexec (EPERM, EACCES) gives is Closed; any
// other failure (no such file, a bad format, a missing interpreter)
// means the probe tried nothing and is Broken.
func execVerdict(err error) (string, string) {
	switch {
	case err == nil:
		return Open, ""
	case errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM):
		return Closed, err.Error()
	}
	return Broken, "neither ran nor was refused: " + err.Error()
}

// dropAndRun writes a copy of this program, a static ELF needing no
// interpreter, into dir and execs it. A drop that fails is Broken: it
// proves nothing about exec there.
func dropAndRun(dir string) (string, string) {
	self, err := os.ReadFile("/proc/self/exe")
	if err != nil {
		return Broken, "could not read its own executable: " + err.Error()
	}
	path := filepath.Join(dir, ".lnk-probe-exe-"+strconv.Itoa(os.Getpid()))
	if err := os.WriteFile(path, self, 0o700); err != nil {
		return Broken, "could not drop it: " + err.Error()
	}
	defer os.Remove(path)
	return execVerdict(startAndKill(path))
}

func dial(network, addr string) error {
	c, err := net.DialTimeout(network, addr, 3*time.Second)
	if err == nil {
		c.Close()
	}
	return err
}

// throughProxy asks the proxy at 127.0.0.1:<relay> (arg "relay
// addr:port") for a CONNECT tunnel to addr:port: Open if it tunnels,
// Closed if it refuses the address (403, X-Lnk-Refused: address), and
// Broken for any other answer, which proves nothing (a refusal by the
// grants' host or port rule too: the proxy refuses this machine's own
// address before it reads the grants).
func throughProxy(arg string) (string, string) {
	relay, target, ok := strings.Cut(arg, " ")
	if !ok {
		return Broken, "malformed probe argument " + strconv.Quote(arg)
	}
	c, err := net.DialTimeout("tcp", "127.0.0.1:"+relay, 3*time.Second)
	if err != nil {
		return Broken, "the proxy relay: " + err.Error()
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(15 * time.Second))
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return Broken, "no answer from the proxy: " + err.Error()
	}
	switch {
	case resp.StatusCode == http.StatusOK:
		return Open, "the proxy tunnelled to " + target
	case resp.StatusCode == http.StatusForbidden && resp.Header.Get("X-Lnk-Refused") == "address":
		line, _ := bufio.NewReader(io.LimitReader(resp.Body, 512)).ReadString('\n')
		return Closed, strings.TrimSpace(line)
	}
	if k := resp.Header.Get("X-Lnk-Refused"); k != "" {
		// The grants refused it, which they may change: the proxy did
		// not know it for this machine's own.
		return Broken, "the proxy refused it by its " + k + " rule, not as this machine's own address"
	}
	return Broken, "the proxy answered " + resp.Status
}

func socket(fam, typ, proto int) error {
	fd, err := unix.Socket(fam, typ|unix.SOCK_CLOEXEC, proto)
	if err == nil {
		unix.Close(fd)
	}
	return err
}

// pidOf is a pid given as a number.
func pidOf(arg string) (int, error) { return strconv.Atoi(arg) }

// linkProcsVerdict looks through the sandbox's /proc for a process of
// Link's: lnk-init (or a relay it started) still running beside the
// command. There is none to find: lnk-init execs the command, and the
// proxy, outside, accepts the sandbox's connections itself.
func linkProcsVerdict() (string, string) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return "skipped", err.Error()
	}
	for _, e := range ents {
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil {
			continue
		}
		arg0, _, _ := strings.Cut(string(b), "\x00")
		if strings.Contains(arg0, "lnk-init") || strings.HasPrefix(arg0, "/run/lnk/") || strings.Contains(string(b), "\x00relay\x00") {
			return Open, "process " + e.Name() + " is " + arg0
		}
	}
	return Closed, ""
}

// capsVerdict: Closed if every capability set is empty (lnk-init held
// two in the sandbox's user namespace, and dropped them, bounding and
// ambient sets too) and NO_NEW_PRIVS is set.
func capsVerdict() (string, string) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return "skipped", err.Error()
	}
	defer f.Close()
	sets := map[string]string{}
	nnp := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), ":")
		switch k {
		case "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb":
			sets[k] = strings.TrimSpace(v)
		case "NoNewPrivs":
			nnp = strings.TrimSpace(v)
		}
	}
	var held []string
	for _, k := range []string{"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"} {
		if v, ok := sets[k]; !ok || strings.Trim(v, "0") != "" {
			held = append(held, k+" "+v)
		}
	}
	if len(held) == 0 && nnp == "1" {
		return Closed, ""
	}
	return Open, strings.Join(held, ", ") + "; NoNewPrivs " + nnp
}

func fdsVerdict() (string, string) {
	d, err := os.Open("/proc/self/fd")
	if err != nil {
		return "skipped", err.Error()
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	var extra []string
	for _, n := range names {
		fd, _ := strconv.Atoi(n)
		if fd > 2 && fd != int(d.Fd()) && !ownFD(fd) {
			target, _ := os.Readlink("/proc/self/fd/" + n)
			extra = append(extra, n+"->"+target)
		}
	}
	if len(extra) > 0 {
		return Open, strings.Join(extra, ", ")
	}
	return Closed, ""
}

// ownFD tells the Go runtime's own fds (its poller) from inherited ones.
func ownFD(fd int) bool {
	t, _ := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
	return strings.HasPrefix(t, "anon_inode:[eventpoll]") || strings.HasPrefix(t, "anon_inode:[eventfd]")
}
