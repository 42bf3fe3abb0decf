package sandbox_test

import (
	"encoding/json"
	"strings"
	"testing"

	"lnk.dev/lnk/kernel/sandbox/probe"
)

// check runs lnk sandbox check --json with flags and returns its exit
// code, results by kind and name, and stderr.
func check(t *testing.T, run func(*testing.T, ...string) (int, string, string), flags ...string) (int, []probe.Result, string) {
	t.Helper()
	code, out, errs := run(t, append([]string{"sandbox", "check", "--json"}, flags...)...)
	var rs []probe.Result
	if err := json.Unmarshal([]byte(out), &rs); err != nil {
		t.Fatalf("exit %d, no JSON: %v\n%s\n%s", code, err, out, errs)
	}
	return code, rs, errs
}

func resultsOf(rs []probe.Result, kind string) []probe.Result {
	var out []probe.Result
	for _, r := range rs {
		if r.Kind == kind {
			out = append(out, r)
		}
	}
	return out
}

// TestCheckProbesNamespacesSessionAndUDP: the sandbox has its own user,
// pid, ipc, uts, cgroup and net namespaces and its own session, and a
// datagram it sends to the host's 127.0.0.1 never arrives; each is tried,
// not skipped. With the host's network, the net namespace and the
// datagram are found open (the probes can tell), the rest still closed.
func TestCheckProbesNamespacesSessionAndUDP(t *testing.T) {
	w := newWorld(t)
	for _, c := range []struct {
		name     string
		flags    []string
		openKind map[string]bool // "ns:net", "udp": found open, a known gap
	}{
		{"own network", []string{"--read", w.data}, nil},
		{"host network", []string{"--network-mode", "host", "--port", "*", "--read", w.data}, map[string]bool{"ns:net": true, "udp": true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, rs, errs := check(t, lnk, c.flags...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			ns := resultsOf(rs, "ns")
			if len(ns) != len(probe.Namespaces) {
				t.Fatalf("%d namespace probes tried, want %d: %+v", len(ns), len(probe.Namespaces), ns)
			}
			for _, r := range append(append(ns, resultsOf(rs, "session")...), resultsOf(rs, "udp")...) {
				key := r.Kind
				if r.Kind == "ns" {
					key += ":" + strings.SplitN(r.Arg, ":", 2)[0]
				}
				want := probe.Closed
				if c.openKind[key] {
					want = probe.Open
				}
				if r.Got != want {
					t.Errorf("%s: got %s (%s), want %s", r.Name, r.Got, r.Detail, want)
				}
			}
			if len(resultsOf(rs, "session")) != 1 || len(resultsOf(rs, "udp")) != 1 {
				t.Fatalf("no session or UDP probe: %+v", rs)
			}
		})
	}
}

// TestCheckEnvIsTheDocumentedList: with SSH_AUTH_SOCK and a token in
// lnk's own environment, the sandbox has neither, and the environment
// probe allows exactly SECURITY.md's list (probe.DocumentedEnv, held to
// the document by its own test) and the proxy variables, never what the
// sandbox happened to be built with.
func TestCheckEnvIsTheDocumentedList(t *testing.T) {
	w := newWorld(t)
	t.Setenv("SSH_AUTH_SOCK", "/tmp/ssh-agent.sock")
	t.Setenv("GITHUB_TOKEN", "ghp_lnkcheckprobe")
	code, rs, errs := check(t, lnk, "--read", w.data)
	env := resultsOf(rs, "env")
	if code != 0 || len(env) != 1 || env[0].Got != probe.Closed {
		t.Fatalf("exit %d, env probe %+v: %s", code, env, errs)
	}
	want := strings.Join(append(append([]string(nil), probe.DocumentedEnv...), probe.ProxyEnv...), ",")
	if env[0].Arg != want {
		t.Fatalf("the env probe allowed %q, want the documented list %q", env[0].Arg, want)
	}
	code, out, errs := lnk(t, "sandbox", "run", "--", "sh", "-c", `echo "${SSH_AUTH_SOCK-none} ${GITHUB_TOKEN-none}"`)
	if code != 0 || strings.TrimSpace(out) != "none none" {
		t.Fatalf("inside: exit %d, %q (%s)", code, out, errs)
	}
}

// TestCheckFailsWhenAProbeFindsItOpen: on a kernel without landlock, with
// --degraded, check runs, finds the program landlock would refuse open,
// names it and exits 1; a program dropped in /tmp stays closed, by the
// noexec mount alone.
func TestCheckFailsWhenAProbeFindsItOpen(t *testing.T) {
	w := newWorld(t)
	code, out, errs := lnkWithout(t, "landlock", "sandbox", "check", "--internet=false", "--degraded", "--read", w.data)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, out, errs)
	}
	line := lineWith(out, "run a program not in [commands]  ")
	if !strings.Contains(line, "OPEN") || !strings.Contains(line, "FAIL") {
		t.Errorf("the unlisted program not named open: %q\n%s", line, out)
	}
	if line := lineWith(out, "run a program dropped in /tmp"); strings.Contains(line, "OPEN") || !strings.Contains(line, "closed") {
		t.Errorf("a program dropped in /tmp ran without landlock: /tmp is not noexec: %q\n%s", line, out)
	}
}

func lineWith(s, sub string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, sub) {
			return l
		}
	}
	return ""
}
