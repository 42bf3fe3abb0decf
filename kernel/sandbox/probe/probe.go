package probe

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"lnk.dev/lnk/caps"
)

// What a probe should find.
const (
	Closed = "closed"
	Open   = "open"
	Gap    = "open (known gap)" // open, and documented as such
	Broken = "broken"           // the probe could not try: it proves nothing, and fails
)

// Probe is one attempt.
type Probe struct {
	Name   string `json:"name"`
	Kind   string `json:"kind"`
	Arg    string `json:"arg,omitempty"`
	Expect string `json:"expect"`
}

// Spec is what the probes inside are given.
type Spec struct {
	Probes []Probe `json:"probes"`
}

// Result is one probe's outcome.
type Result struct {
	Probe
	Got    string `json:"result"` // Open, Closed, Broken or "skipped"
	Detail string `json:"detail,omitempty"`
}

// List makes the probes for grants c.
func List(c *caps.Compiled, h Host) Spec {
	var p []Probe
	add := func(name, kind, arg, expect string) { p = append(p, Probe{name, kind, arg, expect}) }
	home := c.Home
	add("read ~/.ssh", "read", filepath.Join(home, ".ssh"), Closed)
	add("read ~/.lnk", "read", filepath.Join(home, ".lnk"), Closed)
	if other := otherAgent(c); other != "" {
		add("read another agent's folder", "read", other, Closed)
	} else {
		add("read another agent's folder", "skip", "no other agent on this machine", Closed)
	}
	if c.HarnessHome != "" {
		if other := otherHarness(c); other != "" {
			add("read another harness's home", "read", other, Closed)
		} else {
			add("read another harness's home", "skip", "no other harness of this agent's", Closed)
		}
	}
	if team := otherTeam(c); team != "" {
		add("read a team's folder not granted", "read", team, Closed)
	}
	add("read ~/Link/History", "read", filepath.Join(home, "Link", "History"), Closed)
	add("read /etc/shadow", "read", "/etc/shadow", Closed)
	add("write outside the grants", "write", "/lnk-probe", Closed)
	add("write /usr", "write", "/usr/lnk-probe", Closed)
	for _, f := range c.Folders {
		if f.Access.Write {
			add("write granted "+f.Path+" (control)", "write", f.Path, Open)
		} else {
			add("read granted "+f.Path+" (control)", "read", f.Path, Open)
			add("create in read-only "+f.Path, "write", f.Path, Closed)
		}
	}
	for i, r := range c.ReadOnly {
		if i == 0 || filepath.Dir(r) != filepath.Dir(c.ReadOnly[i-1]) {
			add("replace a name at the top of "+filepath.Dir(r)+" (control)", "replace-in", filepath.Dir(r), Open)
		}
		add("write "+r, "write", r, Closed)
		add("remove or replace "+r, "replace", r, Closed)
	}
	for _, f := range c.Pinned {
		add("move aside "+f.Path+", which holds a nested .git, .envrc, .vscode or .idea", "replace", f.Path, Closed)
	}
	for _, f := range c.NestedReadOnly {
		add("write nested "+f.Path, "write", f.Path, Closed)
		add("remove or replace nested "+f.Path, "replace", f.Path, Closed)
	}
	add("run a listed command (control)", "exec", listed(c), Open)
	if listsAll(c) {
		add("run any program ([commands] \"*\")", "exec", notListed(c), Open)
	} else {
		add("run a program not in [commands]", "exec", notListed(c), Closed)
	}
	add("run a program dropped in /tmp", "dropped", "/tmp", Closed)
	for _, f := range c.Folders {
		if f.Access.Write {
			exp := Closed
			if f.Access.Exec {
				exp = Open
			}
			add("run a program dropped in "+f.Path, "dropped", f.Path, exp)
		}
	}
	other := notListed(c)
	loader := loaderOf(listed(c))
	add("run a program not in [commands] through ld.so, copied into /tmp", "ldso", ldsoArg(loader, other, "/tmp"), Closed)
	for _, f := range c.Folders {
		if f.Access.Write {
			exp := Closed
			if f.Access.Exec {
				exp = Open
			}
			add("run a program not in [commands] through ld.so, copied into "+f.Path, "ldso", ldsoArg(loader, other, f.Path), exp)
		}
	}
	add("run an installed program not in [commands] through ld.so", "ldso", ldsoArg(loader, other, ""), Gap)
	add("run a program not in [commands] from a memfd", "memfd", other, Closed)
	add("make a memfd sealed noexec (control)", "memfd-sealed", "", Open)
	if h.MaxProcs > 0 {
		add("start processes past the sandbox's bound ("+strconv.Itoa(h.MaxProcs)+")", "tasks", strconv.Itoa(h.MaxProcs), Closed)
	} else {
		add("start processes past a bound (none on this machine)", "tasks", strconv.Itoa(defaultProcsTried), Gap)
	}
	if h.MaxMemory > 0 {
		add("use memory past the sandbox's bound ("+strconv.FormatInt(h.MaxMemory>>20, 10)+" MiB)", "memory", strconv.FormatInt(h.MaxMemory+memoryPast, 10), Closed)
	} else {
		add("use memory past a bound (no memory bound on this machine)", "skip", h.NoMemory, Gap)
	}
	tcpExpect := Closed
	if h.HostNet {
		tcpExpect = Gap
	}
	for _, n := range Namespaces {
		name := "share the host's " + n + " namespace"
		ino, ok := h.NS[n]
		switch {
		case !ok:
			add(name, "skip", "this kernel has no "+n+" namespaces", Closed)
		case n == "net" && h.HostNet:
			add(name, "ns", n+":"+strconv.FormatUint(ino, 10), Gap)
		default:
			add(name, "ns", n+":"+strconv.FormatUint(ino, 10), Closed)
		}
	}
	add("share the host's session (no new session: TIOCSTI)", "session", fmt.Sprintf("%d:%d", h.Sid, h.NS["pid"]), Closed)
	add("connect to the host's 127.0.0.1 port", "tcp", "127.0.0.1:"+strconv.Itoa(h.TCPPort), tcpExpect)
	add("send UDP to the host's 127.0.0.1 port", "udp", "127.0.0.1:"+strconv.Itoa(h.UDPPort)+" "+h.UDPToken, tcpExpect)
	add("connect to a host abstract unix socket", "abstract", h.Abstract, Closed)
	// This machine's own address, where a service bound to 0.0.0.0 or ::
	// answers: the sandbox reaches it neither directly (its network is
	// its own) nor through its proxy (which refuses it whatever the
	// grants). Never an address off the machine.
	const noOwn = "this machine has no address but loopback and link-local"
	switch {
	case h.OwnAddr == "":
		add("reach this machine's own address directly", "skip", noOwn, Closed)
	default:
		add("reach this machine's own address directly", "tcp", h.OwnAddr, tcpExpect)
	}
	switch {
	case h.HostNet:
		add("reach this machine's own address through the proxy", "skip", "[network] mode = \"host\" has no proxy", Gap)
	case h.RelayPort == 0:
		add("reach this machine's own address through the proxy", "skip", "no proxy", Closed)
	case h.OwnAddr == "":
		add("reach this machine's own address through the proxy", "skip", noOwn, Closed)
	default:
		add("reach this machine's own address through the proxy", "own-proxy", strconv.Itoa(h.RelayPort)+" "+h.OwnAddr, Closed)
	}
	if h.RelayPort != 0 {
		add("reach the proxy relay (control)", "tcp", "127.0.0.1:"+strconv.Itoa(h.RelayPort), Open)
		add("a process of Link's inside (the proxy accepts from outside)", "linkprocs", "", Closed)
	}
	for _, k := range []string{"raw", "packet"} {
		add(k+" socket", k, "", Closed)
	}
	add("ptrace PID 1", "ptrace", "1", Closed)
	add("open /proc/1/mem", "read", "/proc/1/mem", Closed)
	for _, k := range []string{"io_uring_setup", "TIOCSTI", "keyctl", "mount", "unshare(CLONE_NEWUSER)", "bpf"} {
		add(k, k, "", Closed)
	}
	add("a setuid binary gains nothing (every capability set empty, NoNewPrivs 1)", "caps", "", Closed)
	add("/proc shows only the sandbox", "procs", strconv.Itoa(h.LnkPid), Closed)
	add("no leaked fds", "fds", "", Closed)
	add("environment outside the fixed list", "env", strings.Join(allowedEnv(h), ","), Closed)
	return Spec{Probes: p}
}

// memoryPast is how far past the bound the memory probe touches.
const memoryPast = 64 << 20

// defaultProcsTried is how many processes the process probe forks where
// the sandbox has no bound: as many as a bound would allow.
const defaultProcsTried = 4096

// otherAgent is another agent's folder than c's own, or "".
func otherAgent(c *caps.Compiled) string {
	dir := filepath.Join(c.Home, "Link", "Agents")
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if e.IsDir() && e.Name() != c.AgentName {
			return filepath.Join(dir, e.Name())
		}
	}
	return ""
}

// otherTeam is a team's folder under ~/Link/Teams that c's grants don't
// name ([teams.<team>]), or "".
func otherTeam(c *caps.Compiled) string {
	dir := filepath.Join(c.Home, "Link", "Teams")
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if _, granted := c.Teams[e.Name()]; e.IsDir() && !granted {
			return filepath.Join(dir, e.Name())
		}
	}
	return ""
}

// otherHarness is another harness's home of c's agent than c's own
// harness's, or "".
func otherHarness(c *caps.Compiled) string {
	dir := filepath.Dir(c.HarnessHome)
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if e.IsDir() && e.Name() != filepath.Base(c.HarnessHome) {
			return filepath.Join(dir, e.Name())
		}
	}
	return ""
}

func listsAll(c *caps.Compiled) bool {
	for _, n := range c.Commands {
		if n == "*" {
			return true
		}
	}
	return false
}

// listed is the first program [commands] lists that is installed.
func listed(c *caps.Compiled) string {
	for _, n := range c.Commands {
		if n == "*" {
			return "/bin/sh"
		}
		for _, d := range []string{"/usr/local/bin", "/usr/bin", "/bin"} { // the sandbox's PATH
			p := filepath.Join(d, n)
			if strings.Contains(n, "/") {
				p = n
			}
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
				return p
			}
		}
	}
	return "/bin/sh"
}

// notListed is an installed program [commands] does not list.
func notListed(c *caps.Compiled) string {
	listed := map[string]bool{}
	for _, n := range c.Commands {
		listed[filepath.Base(n)] = true
	}
	for _, n := range []string{"id", "uname", "env", "whoami", "hostname", "true"} {
		p := filepath.Join("/usr/bin", n)
		if _, err := os.Stat(p); err == nil && !listed[n] {
			return p
		}
	}
	return "/usr/bin/id"
}

// Failed reports whether any probe found other than it should: a closed
// way found open, a control found closed, or a probe that could not try.
func Failed(rs []Result) bool {
	for _, r := range rs {
		if r.Got == "skipped" {
			continue
		}
		if r.Got == Broken {
			return true
		}
		if (r.Expect == Closed && r.Got != Closed) || (r.Expect == Open && r.Got != Open) {
			return true
		}
	}
	return false
}

// Table prints PROBE / EXPECTED / RESULT.
func Table(w io.Writer, rs []Result) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PROBE\tEXPECTED\tRESULT")
	sorted := append([]Result(nil), rs...)
	sort.SliceStable(sorted, func(i, j int) bool { return bad(sorted[i]) && !bad(sorted[j]) })
	for _, r := range sorted {
		got := r.Got
		if bad(r) {
			got = strings.ToUpper(got) + "  <- FAIL"
		}
		if r.Detail != "" && r.Got != Closed {
			got += " (" + r.Detail + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.Name, r.Expect, got)
	}
	tw.Flush()
}

func bad(r Result) bool { return Failed([]Result{r}) }
