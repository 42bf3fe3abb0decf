package repotest

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"lnk.dev/lnk/internal/testenv"
)

// update rewrites every cmd/<binary>/deps.txt from what the binary links.
var update = flag.Bool("update", false, "rewrite cmd/*/deps.txt from what each binary links")

const updateCmd = "go test ./internal/repotest -run TestDependencyAllowList -update"

// An allow-list (cmd/<binary>/deps.txt) names everything a binary links,
// as Tailscale's depaware.txt does: each of Link's own packages, each
// third-party module, and the standard library packages that change what
// the binary can do (securityStd). A line is "own|module|std PATH
// [cgo] [unsafe]": cgo where the package (or a package of the module)
// has C parts, unsafe where it imports unsafe. The ban-lists in
// budget_test.go say what a binary must never link; the allow-list makes
// every addition a line a reviewer reads.

// securityStd reports whether a standard library package is one whose
// presence changes what a binary can do: reach the network, start a
// process, hold or use keys, step outside Go's memory safety, load code.
func securityStd(p string) bool {
	if strings.HasPrefix(p, "internal/") || strings.HasPrefix(p, "vendor/") || strings.Contains(p, "/internal/") || strings.HasSuffix(p, "/internal") {
		return false
	}
	switch p {
	case "os/exec", "os/user", "plugin", "reflect", "unsafe", "syscall", "runtime/cgo", "crypto":
		return true
	}
	return p == "net" || strings.HasPrefix(p, "net/") || strings.HasPrefix(p, "crypto/")
}

// allowEntry is one line of an allow-list: its kind, path and marks.
type allowEntry struct {
	Kind, Path, Marks string
}

func (e allowEntry) String() string {
	if e.Marks == "" {
		return e.Kind + " " + e.Path
	}
	return e.Kind + " " + e.Path + " " + e.Marks
}

// linked returns the allow-list entries for what root links in g, and
// for each entry the package that stands for it in an import chain (a
// module's first package found).
func linked(g graph, root string) (map[string]allowEntry, map[string]string) {
	entries := map[string]allowEntry{}
	witness := map[string]string{}
	marks := map[string]map[string]bool{}
	for p := range g.reach(root) {
		k := g[p]
		if k == nil || p == "C" {
			continue
		}
		var e allowEntry
		switch {
		case k.Standard:
			if !securityStd(p) {
				continue
			}
			e = allowEntry{Kind: "std", Path: p}
		case k.Module == module:
			e = allowEntry{Kind: "own", Path: p}
		case k.Module != "":
			e = allowEntry{Kind: "module", Path: k.Module}
		default:
			continue
		}
		if _, ok := entries[e.Path]; !ok || p < witness[e.Path] {
			witness[e.Path] = p
		}
		entries[e.Path] = e
		if e.Kind == "std" {
			continue // every std package imports unsafe or links one that does
		}
		if marks[e.Path] == nil {
			marks[e.Path] = map[string]bool{}
		}
		if k.Cgo {
			marks[e.Path]["cgo"] = true
		}
		for _, q := range k.Imports {
			if q == "unsafe" {
				marks[e.Path]["unsafe"] = true
			}
		}
	}
	for path, m := range marks {
		e := entries[path]
		var ms []string
		for _, x := range []string{"cgo", "unsafe"} {
			if m[x] {
				ms = append(ms, x)
			}
		}
		e.Marks = strings.Join(ms, " ")
		entries[path] = e
	}
	return entries, witness
}

// allowViolations compares what bin links (in g) with its allow-list
// and returns one message per difference: a package or module not on
// the list (with the import chain that brought it in), a mark that
// changed, or a line for something it no longer links.
func allowViolations(g graph, bin string, allowed map[string]allowEntry) []string {
	root := module + "/cmd/" + bin
	have, witness := linked(g, root)
	var out []string
	for _, path := range sortedKeys(have) {
		e := have[path]
		a, ok := allowed[path]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("%s links %s %s, not on its allow-list (cmd/%s/deps.txt), brought in by %s\nhint: if it is meant, run `%s` and justify the new line in review",
				bin, e.Kind, path, bin, g.chain(root, witness[path]), updateCmd))
		case a.Kind != e.Kind || a.Marks != e.Marks:
			out = append(out, fmt.Sprintf("%s: cmd/%s/deps.txt has %q, it now links %q (%s)\nhint: if it is meant, run `%s` and justify the change in review",
				bin, bin, a.String(), e.String(), g.chain(root, witness[path]), updateCmd))
		}
	}
	for _, path := range sortedKeys(allowed) {
		if _, ok := have[path]; !ok {
			out = append(out, fmt.Sprintf("%s no longer links %s, which cmd/%s/deps.txt still allows\nhint: run `%s` so the list shows what it links", bin, path, bin, updateCmd))
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// readAllowList parses cmd/<bin>/deps.txt.
func readAllowList(path string) (map[string]allowEntry, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := map[string]allowEntry{}
	for i, l := range strings.Split(string(b), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		f := strings.Fields(l)
		if f[0] != "own" && f[0] != "module" && f[0] != "std" || len(f) < 2 {
			return nil, fmt.Errorf("%s:%d: %q is not \"own|module|std PATH [cgo] [unsafe]\"", path, i+1, l)
		}
		if _, dup := out[f[1]]; dup {
			return nil, fmt.Errorf("%s:%d: %s listed twice", path, i+1, f[1])
		}
		out[f[1]] = allowEntry{Kind: f[0], Path: f[1], Marks: strings.Join(f[2:], " ")}
	}
	return out, nil
}

// formatAllowList renders entries as deps.txt: own packages, then
// modules, then the standard library's, each sorted.
func formatAllowList(bin string, entries map[string]allowEntry) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "# Everything cmd/%s links: Link's own packages (own), third-party\n", bin)
	b.WriteString("# modules (module) and the standard library packages that change what\n")
	b.WriteString("# it can do (std: network, processes, keys, unsafe, reflect, plugin).\n")
	b.WriteString("# cgo: has C parts; unsafe: imports unsafe. internal/repotest fails on a\n")
	fmt.Fprintf(&b, "# difference; after a reviewed change, regenerate with\n#   %s\n", updateCmd)
	for _, kind := range []string{"own", "module", "std"} {
		b.WriteString("\n")
		for _, path := range sortedKeys(entries) {
			if entries[path].Kind == kind {
				b.WriteString(entries[path].String() + "\n")
			}
		}
	}
	return []byte(b.String())
}

// staticBinaries reads the Makefile's STATIC list: those binaries are
// built CGO_ENABLED=0, which changes what they link (no runtime/cgo, the
// pure Go resolver), so their lists are computed the same way.
func staticBinaries(t *testing.T, root string) map[string]bool {
	b, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^STATIC\s*:=(.*)$`).FindSubmatch(b)
	if m == nil {
		t.Fatal("Makefile has no STATIC := line: cannot tell which binaries are built without cgo")
	}
	out := map[string]bool{}
	for _, f := range strings.Fields(string(m[1])) {
		out[f] = true
	}
	return out
}

// binaries lists the folders under cmd/.
func binaries(t *testing.T, root string) []string {
	ents, err := os.ReadDir(filepath.Join(root, "cmd"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	if len(out) == 0 {
		t.Fatal("no binaries under cmd/")
	}
	return out
}

// buildGraphs lists every binary's packages, one go list for the cgo
// binaries and one for the static ones.
func buildGraphs(t *testing.T, root string) map[string]graph {
	static := staticBinaries(t, root)
	var withCgo, without []string
	for _, b := range binaries(t, root) {
		if static[b] {
			without = append(without, "./cmd/"+b)
		} else {
			withCgo = append(withCgo, "./cmd/"+b)
		}
	}
	out := map[string]graph{}
	for _, set := range []struct {
		cgo  bool
		pats []string
	}{{true, withCgo}, {false, without}} {
		if len(set.pats) == 0 {
			continue
		}
		g := goList(t, root, set.cgo, true, set.pats...)
		for _, p := range set.pats {
			out[strings.TrimPrefix(p, "./cmd/")] = g
		}
	}
	return out
}

// TestDependencyAllowList fails when a binary links anything its
// cmd/<binary>/deps.txt does not list, or no longer links a line of it.
func TestDependencyAllowList(t *testing.T) {
	root := testenv.RepoRoot(t)
	graphs := buildGraphs(t, root)
	for _, bin := range sortedKeys(graphs) {
		g := graphs[bin]
		t.Run(bin, func(t *testing.T) {
			file := filepath.Join(root, "cmd", bin, "deps.txt")
			if *update {
				have, _ := linked(g, module+"/cmd/"+bin)
				if err := writeAtomic(file, formatAllowList(bin, have)); err != nil {
					t.Fatal(err)
				}
			}
			allowed, err := readAllowList(file)
			if os.IsNotExist(err) {
				t.Fatalf("cmd/%s has no allow-list (deps.txt)\nhint: run `%s` and review what it lists", bin, updateCmd)
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range allowViolations(g, bin, allowed) {
				t.Error(v)
			}
		})
	}
}

// writeAtomic replaces path with b through a temporary file and a rename.
func writeAtomic(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".deps-*.txt")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
