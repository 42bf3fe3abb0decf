package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/cgroup"
	"lnk.dev/lnk/internal/initstage"
	"lnk.dev/lnk/internal/ownerfile"
)

// DefaultRelayPort is where the relay listens inside the sandbox.
const DefaultRelayPort = 3128

// Options are what Build needs beyond the grants.
type Options struct {
	Argv      []string // the command and its arguments
	Dir       string   // working folder (absolute); "" or ungranted: HOME
	InitPath  string   // lnk-init on the host
	Bwrap     string   // bubblewrap; "" looks up bwrap on PATH
	RelayPort uint16   // 0: DefaultRelayPort
	Degraded  bool     // run without landlock or seccomp where missing
	ExtraExec []string // host programs bound in read-only at their own path and executable (the probes)
	ToolRoute string   // the tool bridge's route prefix (Proxy.ToolRoute): sets $LNK_TOOL_<NAME>
	Proxy     *Proxy   // the started proxy: its secret and sealed secrets' variables (env.go, addProxyEnv)

	// RelayChannel, if set, is the sending end of the channel on which
	// lnk-init hands the proxy its listener in the sandbox (Proxy.Relay,
	// internal/connpass): the sandbox then reaches the network through
	// the proxy alone. Build takes it: it is closed once bubblewrap holds
	// it, or if Build fails.
	RelayChannel *os.File

	// AsPid1 makes the command the sandbox's PID 1 (bwrap --as-pid-1), one
	// process fewer: only for a command that starts no child of its own
	// (nothing would reap it).
	AsPid1 bool

	// Held, if not nil, are the granted folders' handles the kernel
	// opened and checked (O_PATH|O_DIRECTORY, by path; the caller keeps
	// them): each of the grants' folders is bound from its handle here,
	// never opened again by its path, and one the kernel holds no handle
	// of is refused. lnk-init's landlock rules name the folder's path
	// inside the sandbox, which is the mount made from that handle.
	Held map[string]*os.File

	// MemoryMax, if not 0, lowers the sandbox's memory bound to it where
	// a cgroup bounds it (lnk sandbox check's, whose probe fills it).
	MemoryMax int64
}

// Sandbox is a built sandbox, ready to Exec or Start once.
type Sandbox struct {
	Bwrap    string
	Plan     initstage.Plan
	Enforced Enforced
	Notices  []string          // said at every start: host network, degraded
	Env      map[string]string // the command's whole environment
	// Started, if set, is called by Start once bubblewrap runs, before
	// it waits: what starts beside the sandbox's own setup (its proxy,
	// Proxy.Launch). An error stops the sandbox, and Start returns it.
	Started func() error
	args    []string // bubblewrap's arguments, fd numbers as placeholders
	cmdAt   int      // where in args lnk-init's command line begins ("--")
	fdArgs  map[int]int
	files   []*os.File          // handed to bubblewrap, by index; nil where raw holds it
	raw     []int               // an fd handed as is (an /etc file: no *os.File to make), else -1
	memory  *cgroup.Group       // where the sandbox's memory cgroup is made (memory.go), nil where none
	held    map[string]*os.File // Options.Held

	// Attached, if set, is called by Start with bubblewrap's pidfd
	// (Start's: valid until it returns) once bubblewrap runs, before
	// Started: lnk hands it to the kernel. An error stops the sandbox.
	Attached func(pidfd *os.File) error
	// Abort, if set, stops the sandbox at once when it yields an error
	// (the kernel ended its start, or the kernel is gone): Start closes
	// its lifeline, kills bubblewrap, and returns that error.
	Abort <-chan error
	// Session, if set, makes Start run bubblewrap as the leader of a
	// session, so a process group, of its own (its pgid its pid), for a
	// caller that lives on beside many sandboxes (the run tool): signals
	// to the caller are not forwarded (nor taken from it), an Abort
	// kills the whole group, and once the leader has exited the whole
	// group is killed before the leader is reaped, so the group's ID is
	// no other process's by then.
	Session bool
	// Leader, if set, is called by Start with bubblewrap's pid once it
	// runs, before Attached (the run tool records the group by it). An
	// error stops the sandbox.
	Leader func(pid int) error
}

// Enforced is what the sandbox enforces, for --json-status and check.
type Enforced struct {
	Namespaces  []string `json:"namespaces"`
	LandlockABI int      `json:"landlock_abi"`
	Landlock    bool     `json:"landlock"`
	Seccomp     bool     `json:"seccomp"`
	Network     string   `json:"network"` // "none", "proxy" or "host"
	Degraded    bool     `json:"degraded"`
	NoExec      []string `json:"noexec"`    // mounts remounted noexec (harden.go)
	Processes   Bound    `json:"processes"` // the bound on the sandbox's processes
	Memory      Bound    `json:"memory"`    // the bound on its memory
	noexec      bool     // the kernel can remount noexec (missing.go)
}

// ErrFolderChanged refuses a granted folder that is no longer what caps
// checked: a link now, gone, or another folder moved into its place.
var ErrFolderChanged = errors.New("a granted folder changed since its grant was checked")

// Build makes the sandbox for c and opt. The caller must Exec, Start or
// Close it.
func Build(c *caps.Compiled, opt Options) (*Sandbox, error) {
	ok := false
	defer func() {
		if !ok && opt.RelayChannel != nil {
			opt.RelayChannel.Close() // once more if the sandbox held it: os.File closes its fd once
		}
	}()
	if len(opt.Argv) == 0 {
		return nil, errors.New("no command to run")
	}
	en, err := enforceable(opt.Degraded)
	if err != nil {
		return nil, err
	}
	bw := opt.Bwrap
	if bw == "" {
		if bw, err = exec.LookPath("bwrap"); err != nil {
			return nil, &MissingError{What: []string{"bubblewrap (bwrap)"}}
		}
	}
	s := &Sandbox{Bwrap: bw, Enforced: en, fdArgs: map[int]int{}, held: opt.Held}
	if opt.Degraded && (!en.Landlock || !en.Seccomp) {
		s.Notices = append(s.Notices, "degraded: running without "+strings.Join(missingNames(en), " and ")+" (--degraded)")
	}
	defer func() {
		if !ok {
			s.Close()
		}
	}()
	if err := s.build(c, opt); err != nil {
		return nil, err
	}
	ok = true
	return s, nil
}

func (s *Sandbox) build(c *caps.Compiled, opt Options) error {
	home := c.Home
	if c.FilesDir != "" {
		home = c.FilesDir
	}
	if c.HarnessHome != "" {
		home = c.HarnessHome // a harness runs with HOME its own home (caps.CompileHarness)
	}
	relay := uint16(0)
	s.args = []string{"--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts"}
	s.Enforced.Namespaces = []string{"user", "pid", "ipc", "uts"}
	// A cgroup namespace where the kernel has them, and then always
	// (never bubblewrap's -try, which would let the status claim one
	// that was not made).
	if _, err := os.Stat("/proc/self/ns/cgroup"); err == nil {
		s.args = append(s.args, "--unshare-cgroup")
		s.Enforced.Namespaces = append(s.Enforced.Namespaces, "cgroup")
	}
	switch {
	case c.NetworkMode == "host":
		s.Enforced.Network = "host"
		s.Notices = append(s.Notices, `network: [network] mode = "host": the sandbox shares this machine's network`)
		s.Plan.AnyTCP = true
	default:
		s.args = append(s.args, "--unshare-net")
		s.Enforced.Namespaces = append(s.Enforced.Namespaces, "net")
		s.Enforced.Network = "none"
		if opt.RelayChannel != nil {
			s.Enforced.Network = "proxy"
			relay = opt.RelayPort
			if relay == 0 {
				relay = DefaultRelayPort
			}
			s.Plan.Relay = &initstage.Relay{Port: relay}
			s.Plan.ConnectTCP = []uint16{relay}
		}
	}
	if opt.AsPid1 {
		s.args = append(s.args, "--as-pid-1")
	}
	s.args = append(s.args, capsForInit...) // harden.go
	s.args = append(s.args, "--die-with-parent", "--new-session", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp")
	for _, p := range s.system() {
		s.rule(initstage.PathRule{Path: p, Read: true})
	}
	s.rule(initstage.PathRule{Path: "/proc", Read: true})
	s.rule(initstage.PathRule{Path: "/dev", Read: true, Write: true})
	s.rule(initstage.PathRule{Path: "/tmp", Read: true, Write: true})
	s.args = append(s.args, "--ro-bind", opt.InitPath, initInside)
	if err := s.folders(c); err != nil {
		return err
	}
	if c.FilesDir == "" {
		s.args = append(s.args, "--dir", home)
	}
	for _, x := range opt.ExtraExec {
		s.args = append(s.args, "--ro-bind", x, x)
	}
	if err := s.commands(c, opt); err != nil {
		return err
	}
	s.harden(c, opt) // harden.go
	// Last of the mounts: the sandbox's root (bubblewrap's tmpfs, with
	// /etc's copies and the folders and mount points made on it) becomes
	// read-only; the mounts on it keep their own flags.
	s.args = append(s.args, "--remount-ro", "/")
	dir := home
	if opt.Dir != "" && s.granted(opt.Dir) {
		dir = opt.Dir
	}
	s.args = append(s.args, "--chdir", dir)
	s.Env = Env(home, relay)
	addToolEnv(s.Env, relay, opt.ToolRoute, c.Tools)
	for _, n := range addProxyEnv(s.Env, relay, opt.Proxy) {
		s.Notices = append(s.Notices, "sealed secret "+n+" not given: the sandbox has a variable of that name")
	}
	s.Env["PWD"] = dir
	s.args = append(s.args, envArgs(s.Env)...)
	s.Plan.Degraded = opt.Degraded
	plan, err := s.Plan.Encode()
	if err != nil {
		return err
	}
	pf, err := memfd("lnk-plan", plan)
	if err != nil {
		return err
	}
	// Everything before "--" (the environment, with the proxy's secret,
	// and the folders) reaches bubblewrap in an fd (--args), never on its
	// command line, which every local user can read; lnk-init's own
	// arguments after it are fd numbers alone.
	s.cmdAt = len(s.args)
	s.args = append(s.args, "--", initInside, "--plan-fd")
	s.rawFdArg(pf)
	if relay != 0 {
		s.args = append(s.args, "--relay-fd")
		s.fdArg(opt.RelayChannel)
		opt.RelayChannel = nil
	}
	return nil
}

const initInside = "/run/lnk/init"

func (s *Sandbox) rule(r initstage.PathRule) { s.Plan.Paths = append(s.Plan.Paths, r) }

// fdArg appends a placeholder for f's fd number.
func (s *Sandbox) fdArg(f *os.File) {
	s.fdArgs[len(s.args)] = len(s.files)
	s.files = append(s.files, f)
	s.raw = append(s.raw, -1)
	s.args = append(s.args, "")
}

// rawFdArg is fdArg for an fd (close-on-exec) the sandbox now owns, with
// no *os.File made for it: Exec hands it as it is, and only Start, which
// needs one for exec.Cmd, makes it (files).
func (s *Sandbox) rawFdArg(fd int) {
	s.fdArgs[len(s.args)] = len(s.files)
	s.files = append(s.files, nil)
	s.raw = append(s.raw, fd)
	s.args = append(s.args, "")
}

// fd is the number of the i-th fd handed.
func (s *Sandbox) fd(i int) int {
	if s.files[i] != nil {
		return int(s.files[i].Fd())
	}
	return s.raw[i]
}

// osFiles makes an *os.File of every raw fd, which it then owns.
func (s *Sandbox) osFiles() []*os.File {
	for i, f := range s.files {
		if f == nil {
			s.files[i] = os.NewFile(uintptr(s.raw[i]), "sandbox-fd")
			s.raw[i] = -1
		}
	}
	return s.files
}

// bindChecked binds f at its own path from an fd opened without
// following a link, only if it is still the folder caps checked (its
// device and inode): read-only unless f is written.
func (s *Sandbox) bindChecked(f caps.Folder) error {
	file, err := s.openFolder(f.Path)
	if err != nil {
		return err
	}
	if err := sameFolder(file, f); err != nil {
		file.Close()
		return err
	}
	if f.Access.Write {
		s.args = append(s.args, "--bind-fd")
	} else {
		s.args = append(s.args, "--ro-bind-fd")
	}
	s.fdArg(file)
	s.args = append(s.args, f.Path)
	return nil
}

// folders binds the granted folders from fds opened without following a
// link, covers the hidden paths and the read-only ones.
func (s *Sandbox) folders(c *caps.Compiled) error {
	fs := append([]caps.Folder(nil), c.Folders...)
	sort.Slice(fs, func(i, j int) bool { return fs[i].Path < fs[j].Path })
	for _, f := range fs {
		if s.held != nil && s.held[f.Path] == nil {
			return fmt.Errorf("%w: the kernel holds no handle of %s", ErrFolderChanged, f.Path)
		}
		if err := s.bindChecked(f); err != nil {
			return err
		}
		s.rule(initstage.PathRule{Path: f.Path, Read: f.Access.Read || f.Access.Write, Write: f.Access.Write, Exec: f.Access.Exec})
	}
	for _, h := range c.Hidden {
		if !s.granted(h) {
			continue // not in any bound folder: absent already
		}
		fi, err := os.Lstat(h)
		if err != nil {
			continue
		}
		if fi.IsDir() {
			inside := grantedInside(fs, h)
			if len(inside) == 0 {
				s.args = append(s.args, "--perms", "0000", "--tmpfs", h, "--remount-ro", h)
				continue
			}
			// A granted folder inside a hidden one (the agent's own
			// folders under ~/Link/Agents, with --read '~') is bound
			// again on the empty tmpfs, which can then only be passed
			// through (0111), never listed.
			s.args = append(s.args, "--perms", "0111", "--tmpfs", h)
			for _, f := range inside {
				file, err := s.openFolder(f.Path)
				if err != nil {
					return err
				}
				if f.Access.Write {
					s.args = append(s.args, "--bind-fd")
				} else {
					s.args = append(s.args, "--ro-bind-fd")
				}
				s.fdArg(file)
				s.args = append(s.args, f.Path)
			}
			s.args = append(s.args, "--remount-ro", h)
		} else {
			s.args = append(s.args, "--ro-bind", "/dev/null", h)
		}
	}
	if err := s.readOnlyTops(c.ReadOnly); err != nil { // readonly.go
		return err
	}
	return s.nested(c) // nested.go
}

// grantedInside lists the folders of fs strictly inside h, in order.
func grantedInside(fs []caps.Folder, h string) []caps.Folder {
	var in []caps.Folder
	for _, f := range fs {
		if strings.HasPrefix(f.Path, h+"/") {
			in = append(in, f)
		}
	}
	return in
}

// granted reports whether p is a granted folder or inside one.
func (s *Sandbox) granted(p string) bool {
	for _, r := range s.Plan.Paths {
		if r.Path == "/tmp" || r.Path == "/proc" || r.Path == "/dev" {
			continue
		}
		if p == r.Path || strings.HasPrefix(p, r.Path+"/") {
			return true
		}
	}
	return false
}

// openFolder opens path from the kernel's handles (Options.Held): a
// duplicate of a held folder's, or beneath the nearest held folder above
// it, never through a link and never leaving it; with no handle above it
// (or no Held), without following a link on its whole path.
func (s *Sandbox) openFolder(path string) (*os.File, error) {
	if h := s.held[path]; h != nil {
		fd, err := unix.FcntlInt(h.Fd(), unix.F_DUPFD_CLOEXEC, 0)
		if err != nil {
			return nil, fmt.Errorf("sandbox: the kernel's handle of %s: %w", path, err)
		}
		return os.NewFile(uintptr(fd), path), nil
	}
	above := ""
	for p := range s.held {
		if strings.HasPrefix(path, p+"/") && len(p) > len(above) {
			above = p
		}
	}
	if above == "" {
		return openNoLinks(path)
	}
	dir, name := filepath.Split(path[len(above)+1:])
	if dir = strings.TrimSuffix(dir, "/"); dir == "" {
		dir = "."
	}
	pfd, err := ownerfile.OpenDir(int(s.held[above].Fd()), dir, unix.O_PATH)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrFolderChanged, path, err)
	}
	defer unix.Close(pfd)
	fd, err := ownerfile.Open(pfd, name, unix.O_PATH, 0) // a link opens as itself: refused below
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrFolderChanged, path, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT == unix.S_IFLNK {
		unix.Close(fd)
		return nil, fmt.Errorf("%w: %s is a link now", ErrFolderChanged, path)
	}
	return os.NewFile(uintptr(fd), path), nil
}

// openNoLinks opens path O_PATH without following any link on the way.
func openNoLinks(path string) (*os.File, error) {
	fd, err := ownerfile.OpenPath(path, unix.O_PATH)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrFolderChanged, path, err)
	}
	return os.NewFile(uintptr(fd), path), nil
}

// sameFolder refuses file, opened at f.Path, unless it is the folder
// caps checked there (f.ID; a Folder with none has nothing to compare):
// the bind is of what was checked, never of what took its place.
func sameFolder(file *os.File, f caps.Folder) error {
	if f.ID == (caps.FileID{}) {
		return nil
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(file.Fd()), &st); err != nil {
		return fmt.Errorf("%w: %s: %v", ErrFolderChanged, f.Path, err)
	}
	if st.Dev != f.ID.Dev || st.Ino != f.ID.Ino {
		return fmt.Errorf("%w: %s is another folder now (moved into its place after the check)", ErrFolderChanged, f.Path)
	}
	return nil
}

// commands grants execute on [commands] (or everything readable with
// "*"), and refuses a command that is not among them.
func (s *Sandbox) commands(c *caps.Compiled, opt Options) error {
	dir := opt.Dir
	if dir == "" {
		dir = "/"
	}
	argv0, err := lookPath(opt.Argv[0], dir)
	if err != nil {
		return err
	}
	s.Plan.Path, s.Plan.Argv = argv0, opt.Argv
	allowed := map[string]bool{}
	any := false
	res := newResolver()
	for i, name := range append(append([]string(nil), c.Commands...), opt.ExtraExec...) {
		if name == "*" {
			any = true
			continue
		}
		p, err := lookPath(name, "/")
		if err != nil {
			continue // not installed: nothing to allow
		}
		files, err := res.execFiles(p)
		if err != nil {
			continue
		}
		byPath := i < len(c.Commands) && strings.Contains(name, "/")
		for _, f := range files {
			if allowed[f] {
				continue
			}
			allowed[f] = true
			if byPath && !s.granted(f) {
				// A program named by its path, and its interpreters,
				// are read wherever they are, each by its own path,
				// never the folder it is in (security.txt).
				if err := s.bindProgram(f); err != nil {
					return err
				}
			}
			s.rule(initstage.PathRule{Path: f, Read: true, Exec: true, Optional: true})
		}
		if byPath && p != files[0] && !s.linkVisible(p) {
			// Named by a link the sandbox lacks: the link's path leads
			// to the program bound at its own.
			s.args = append(s.args, "--symlink", files[0], p)
		}
	}
	if any {
		for _, d := range append([]string{"/usr", "/bin", "/sbin"}, systemDirs...) {
			s.rule(initstage.PathRule{Path: d, Read: true, Exec: true, Optional: true})
		}
		return nil
	}
	real, err := filepath.EvalSymlinks(argv0)
	if err != nil || !(allowed[real] || s.execGranted(real)) {
		return &NotACommandError{Program: opt.Argv[0]}
	}
	return nil
}

// linkVisible reports whether the sandbox has p, a link, already: its
// folder, with links resolved, is granted (the sandbox mirrors the
// system's linked folders, /bin as /usr/bin).
func (s *Sandbox) linkVisible(p string) bool {
	dir, err := filepath.EvalSymlinks(filepath.Dir(p))
	return err == nil && s.granted(filepath.Join(dir, filepath.Base(p)))
}

// bindProgram binds the file at real, a program's path with its links
// resolved, read-only at that path alone: opened without following a
// link (one swapped in since it was resolved is refused), and only a
// regular file.
func (s *Sandbox) bindProgram(real string) error {
	file, err := openNoLinks(real)
	if err != nil {
		return err
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(file.Fd()), &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		file.Close()
		return fmt.Errorf("%w: %s is not a regular file", ErrFolderChanged, real)
	}
	s.args = append(s.args, "--ro-bind-fd")
	s.fdArg(file)
	s.args = append(s.args, real)
	return nil
}

func (s *Sandbox) execGranted(p string) bool {
	for _, r := range s.Plan.Paths {
		if r.Exec && (p == r.Path || strings.HasPrefix(p, r.Path+"/")) {
			return true
		}
	}
	return false
}

// argv renders bubblewrap's command line with fd numbers from fdOf, its
// options first: run.go hands those in an fd (bwrapArgs), never on argv.
func (s *Sandbox) argv(fdOf func(i int) int) (opts, cmd []string) {
	out := append([]string(nil), s.args...)
	for at, i := range s.fdArgs {
		out[at] = strconv.Itoa(fdOf(i))
	}
	return out[:s.cmdAt:s.cmdAt], out[s.cmdAt:] // opts never grows into cmd
}

// bwrapArgs is a sealed memfd of opts, each ended by a NUL, for
// bubblewrap's --args, read from its start. An option holding a NUL
// would become two, so it is refused.
func bwrapArgs(opts []string) (int, error) {
	var b []byte
	for _, o := range opts {
		if strings.IndexByte(o, 0) >= 0 {
			return -1, fmt.Errorf("sandbox: a bubblewrap argument holds a NUL byte: %q", o)
		}
		b = append(append(b, o...), 0)
	}
	fd, err := memfd("lnk-bwrap-args", b)
	if err != nil {
		return -1, err
	}
	if _, err := unix.Seek(fd, 0, 0); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("memfd: %w", err)
	}
	return fd, nil
}

// Close releases the fds (after a failed Exec or a finished Start).
func (s *Sandbox) Close() {
	for i, f := range s.files {
		if f != nil {
			f.Close()
		} else {
			unix.Close(s.raw[i])
		}
	}
	s.files, s.raw = nil, nil
}

func memfd(name string, b []byte) (int, error) {
	fd, err := unix.MemfdCreate(name, unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return -1, fmt.Errorf("memfd: %w", err)
	}
	for len(b) > 0 {
		n, err := unix.Write(fd, b)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			unix.Close(fd)
			return -1, fmt.Errorf("memfd: %w", err)
		}
		b = b[n:]
	}
	unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, unix.F_SEAL_WRITE|unix.F_SEAL_GROW|unix.F_SEAL_SHRINK|unix.F_SEAL_SEAL)
	return fd, nil
}
