package probe_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/kernel/sandbox/probe"
)

// run runs one probe here, in the test's own process: outside any
// sandbox, where every way out is open.
func run(t *testing.T, p probe.Probe) probe.Result {
	t.Helper()
	rs := probe.Run(probe.Spec{Probes: []probe.Probe{p}})
	if len(rs) != 1 {
		t.Fatalf("%d results for one probe", len(rs))
	}
	return rs[0]
}

// TestExecProbesCountOnlyARefusalAsClosed: a drop that fails, or an exec
// failing otherwise than refused (no such file), is Broken and fails the
// check; never Closed, which would pass while proving nothing. The
// dropped program is an ELF that runs here, outside a sandbox.
func TestExecProbesCountOnlyARefusalAsClosed(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		p    probe.Probe
		got  string
	}{
		{"drop into a missing folder", probe.Probe{Kind: "dropped", Arg: filepath.Join(dir, "missing"), Expect: probe.Closed}, probe.Broken},
		{"exec a missing program", probe.Probe{Kind: "exec", Arg: filepath.Join(dir, "missing"), Expect: probe.Closed}, probe.Broken},
		{"drop and run here (control)", probe.Probe{Kind: "dropped", Arg: dir, Expect: probe.Open}, probe.Open},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := run(t, c.p)
			if r.Got != c.got {
				t.Fatalf("got %s (%s), want %s", r.Got, r.Detail, c.got)
			}
			if c.got == probe.Broken && !probe.Failed([]probe.Result{r}) {
				t.Fatalf("a broken probe passed the check")
			}
		})
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("the dropped program was left behind: %v", ents)
	}
}

// TestIsolationProbesFindTheHostOpen: outside a sandbox, this process is
// in the host's namespaces and session and its datagram arrives, so each
// such probe must find open: the probes can tell, and a sandbox that
// passes them is not passing by default.
func TestIsolationProbesFindTheHostOpen(t *testing.T) {
	o, err := probe.Listen()
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	spec := probe.List(&caps.Compiled{Home: t.TempDir()}, o.Host)
	var tried []probe.Probe
	for _, p := range spec.Probes {
		if p.Kind == "ns" || p.Kind == "session" || p.Kind == "udp" {
			tried = append(tried, p)
		}
	}
	if len(tried) < 3 {
		t.Fatalf("only %d namespace, session and UDP probes: %+v", len(tried), tried)
	}
	rs := probe.Run(probe.Spec{Probes: tried})
	o.Settle(rs)
	for _, r := range rs {
		if r.Got != probe.Open {
			t.Errorf("%s: got %s (%s) outside a sandbox, want open", r.Name, r.Got, r.Detail)
		}
	}
}

// TestSettleLeavesABrokenUDPProbeBroken: a UDP probe that could not run
// stays broken, which fails the check; it never becomes closed.
func TestSettleLeavesABrokenUDPProbeBroken(t *testing.T) {
	o, err := probe.Listen()
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	rs := []probe.Result{{Probe: probe.Probe{Name: "udp", Kind: "udp"}, Got: probe.Broken, Detail: "no address"}}
	o.Settle(rs)
	if rs[0].Got != probe.Broken {
		t.Fatalf("a broken UDP probe settled as %s", rs[0].Got)
	}
}

// TestEnvProbeNamesWhatIsOutsideTheList: a variable outside the list is
// found and named.
func TestEnvProbeNamesWhatIsOutsideTheList(t *testing.T) {
	t.Setenv("GITHUB_TOKEN", "ghp_probe")
	var allowed []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k != "GITHUB_TOKEN" {
			allowed = append(allowed, k)
		}
	}
	r := run(t, probe.Probe{Kind: "env", Arg: strings.Join(allowed, ","), Expect: probe.Closed})
	if r.Got != probe.Open || r.Detail != "GITHUB_TOKEN" {
		t.Fatalf("got %s (%s), want open naming GITHUB_TOKEN alone", r.Got, r.Detail)
	}
}

// TestDocumentedEnvIsSecurityMDs: the environment probe's list is the one
// SECURITY.md documents, word for word.
func TestDocumentedEnvIsSecurityMDs(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(testenv.RepoRoot(t), "SECURITY.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.Join(strings.Fields(string(b)), " ")
	const start, end = "The environment is cleared to ", " and the proxy variables."
	_, rest, ok := strings.Cut(doc, start)
	list, _, ok2 := strings.Cut(rest, end)
	if !ok || !ok2 {
		t.Fatalf("SECURITY.md no longer says %q…%q", start, end)
	}
	documented := strings.Split(list, ", ")
	got := append([]string(nil), probe.DocumentedEnv...)
	slices.Sort(documented)
	slices.Sort(got)
	if !slices.Equal(got, documented) {
		t.Fatalf("probe.DocumentedEnv %v, SECURITY.md %v", got, documented)
	}
}
