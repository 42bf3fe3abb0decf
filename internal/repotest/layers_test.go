package repotest

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"lnk.dev/lnk/internal/testenv"
)

// layers orders Link's packages bottom to top by their path (the longest
// prefix wins). A package may import its own layer and those below it,
// never one above: the shared routines cannot come to depend on a
// broker, nor a broker on the kernel that starts it. A package whose
// path no layer names fails the test, so a new top-level folder is
// placed by a reviewer, not by default.
var layers = []struct {
	prefix string
	rank   int
}{
	{"internal", 0},      // small shared routines
	{"caps", 1},          // the spec, grants and their checks
	{"helpers", 2},       // the brokers; no broker (nor its cmd/) imports another's: brokerOf
	{"kernel/proto", 3},  // the kernel's requests and answers
	{"kernel/client", 4}, // what talks to the kernel: links kernel/proto, not the server
	{"kernel", 5},        // the kernel and the sandbox builder it drives
	{"services", 6},      // tool bridge, file tool, …
	{"cli", 7},           // the command line and orchestrator
	{"cmd", 8},           // each binary's main
	{"fuzz", 8},          // the check that every fuzz target has seeds
}

// edge is one import, both ends without the module's prefix.
type edge struct{ from, to string }

// knownUpward lists imports allowed to run upward (or across brokers),
// each with the reason and the step that removes it. It is empty and can
// only shrink: an upward import not on it fails, and so does a line whose
// import no longer exists. Add to it only with a reviewer's agreement.
var knownUpward = map[edge]string{}

// layerOf returns the rank of a package of Link's (its path without the
// module's prefix), or false when no layer names it.
func layerOf(p string) (rank int, prefix string, ok bool) {
	best := -1
	for i, l := range layers {
		if (p == l.prefix || strings.HasPrefix(p, l.prefix+"/")) && (best < 0 || len(l.prefix) > len(layers[best].prefix)) {
			best = i
		}
	}
	if best < 0 {
		return 0, "", false
	}
	return layers[best].rank, layers[best].prefix, true
}

// brokerOf returns the broker a package belongs to: helpers/<broker>/…
// and its binary's main, cmd/lnk-<broker>; "" for any other package.
func brokerOf(p string) string {
	f := strings.Split(p, "/")
	switch {
	case len(f) >= 2 && f[0] == "helpers":
		return f[1]
	case len(f) == 2 && f[0] == "cmd" && strings.HasPrefix(f[1], "lnk-") && strings.HasSuffix(f[1], "broker"):
		return strings.TrimPrefix(f[1], "lnk-")
	}
	return ""
}

// layerViolations returns one message per import of Link's that runs
// upward or from one broker to another and is not in known, and one per
// line of known whose import no longer exists.
func layerViolations(g graph, known map[edge]string) []string {
	var out []string
	seen := map[edge]bool{}
	for _, path := range sortedKeys(g) {
		k := g[path]
		if k.Module != module {
			continue
		}
		from := short(path)
		fr, fp, ok := layerOf(from)
		if !ok {
			out = append(out, fmt.Sprintf("package %s has no layer\nhint: add its folder to layers in internal/repotest/layers_test.go, in its place bottom to top", from))
			continue
		}
		imports := append([]string(nil), k.Imports...)
		sort.Strings(imports)
		for _, q := range imports {
			if q != module && !strings.HasPrefix(q, module+"/") {
				continue
			}
			to := short(q)
			tr, tp, ok := layerOf(to)
			if !ok {
				continue // reported as a package of its own
			}
			var why string
			switch {
			case tr > fr:
				why = fmt.Sprintf("%s (layer %s) imports %s (layer %s, above it)", from, fp, to, tp)
			case brokerOf(from) != "" && brokerOf(to) != "" && brokerOf(from) != brokerOf(to):
				why = fmt.Sprintf("%s imports %s: one broker links another's code", from, to)
			default:
				continue
			}
			e := edge{from, to}
			if _, ok := known[e]; ok {
				seen[e] = true
				continue
			}
			out = append(out, why+"\nhint: move what both need down a layer; an exception goes in knownUpward (internal/repotest/layers_test.go) only with the step that removes it")
		}
	}
	var stale []string
	for e := range known {
		if !seen[e] {
			stale = append(stale, fmt.Sprintf("known upward import %s → %s no longer exists (%s)\nhint: delete its line from knownUpward in internal/repotest/layers_test.go", e.from, e.to, known[e]))
		}
	}
	sort.Strings(stale)
	return append(out, stale...)
}

// TestImportsRunDownward fails for an import of Link's (test files
// aside: they link into no binary) that runs from a lower layer to a
// higher one, or from one broker to another, unless knownUpward lists
// it; and for a line of knownUpward that no longer holds.
func TestImportsRunDownward(t *testing.T) {
	root := testenv.RepoRoot(t)
	g := goList(t, root, true, false, "./...")
	for _, v := range layerViolations(g, knownUpward) {
		t.Error(v)
	}
}

// TestLayerCheckCatchesAPlantedImport shows the check fails on an
// upward import planted into the real graph (a shared routine importing
// the kernel), on a broker importing another, and on a known exception
// that no longer exists; and passes the graph as it is.
func TestLayerCheckCatchesAPlantedImport(t *testing.T) {
	root := testenv.RepoRoot(t)
	g := goList(t, root, true, false, "./...")
	if v := layerViolations(g, knownUpward); len(v) != 0 {
		t.Fatalf("the graph as it is: %q", v)
	}

	v := layerViolations(g.plant(module+"/internal/wire", module+"/kernel"), knownUpward)
	if len(v) != 1 || !strings.HasPrefix(v[0], "internal/wire (layer internal) imports kernel (layer kernel, above it)") {
		t.Errorf("a planted internal/wire → kernel: %q", v)
	}
	v = layerViolations(g.plant(module+"/kernel/client", module+"/kernel/sandbox"), knownUpward)
	if len(v) != 1 || !strings.HasPrefix(v[0], "kernel/client (layer kernel/client) imports kernel/sandbox (layer kernel, above it)") {
		t.Errorf("a planted kernel/client → kernel/sandbox: %q", v)
	}
	v = layerViolations(g.plant(module+"/helpers/fsbroker", module+"/helpers/askbroker"), knownUpward)
	if len(v) != 1 || !strings.HasPrefix(v[0], "helpers/fsbroker imports helpers/askbroker: one broker links another's code") {
		t.Errorf("a planted helpers/fsbroker → helpers/askbroker: %q", v)
	}
	v = layerViolations(g.plant(module+"/cmd/lnk-fsbroker", module+"/helpers/netbroker"), knownUpward)
	if len(v) != 1 || !strings.HasPrefix(v[0], "cmd/lnk-fsbroker imports helpers/netbroker: one broker links another's code") {
		t.Errorf("a planted cmd/lnk-fsbroker → helpers/netbroker: %q", v)
	}
	v = layerViolations(g.plant(module+"/cmd/lnk", module+"/orchestrate"), knownUpward)
	if len(v) != 1 || !strings.HasPrefix(v[0], "package orchestrate has no layer") {
		t.Errorf("a package in no layer: %q", v)
	}

	known := map[edge]string{{"internal/wire", "helpers/fsbroker"}: "a step that already happened"}
	for e, why := range knownUpward {
		known[e] = why
	}
	v = layerViolations(g, known)
	if len(v) != 1 || !strings.HasPrefix(v[0], "known upward import internal/wire → helpers/fsbroker no longer exists") {
		t.Errorf("a stale exception: %q", v)
	}
}
