package repotest

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// module is the path every package of Link's own starts with.
const module = "lnk.dev/lnk"

// pkg is one package as go list sees it under one build configuration.
type pkg struct {
	Path     string
	Standard bool
	Module   string // "" for the standard library
	Cgo      bool   // it has C parts (CgoFiles)
	Imports  []string
}

// graph is a set of packages by import path.
type graph map[string]*pkg

// goList runs go list once, with cgo on or off (as the Makefile builds
// the binary), and returns the packages named and, with deps, all they
// import. It never reaches the network (GOPROXY=off, -mod=readonly): a
// module missing from the cache fails the test rather than being fetched.
// Imports are the non-test imports: what a binary links.
func goList(t *testing.T, root string, cgo, deps bool, patterns ...string) graph {
	t.Helper()
	args := []string{"list"}
	if deps {
		args = append(args, "-deps")
	}
	args = append(args, "-f", "{{.ImportPath}}\t{{.Standard}}\t{{with .Module}}{{.Path}}{{end}}\t{{len .CgoFiles}}\t{{join .Imports \" \"}}")
	args = append(args, patterns...)
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	cgoEnv := "CGO_ENABLED=0"
	if cgo {
		cgoEnv = "CGO_ENABLED=1"
	}
	cmd.Env = append(os.Environ(), cgoEnv, "GOPROXY=off", "GOFLAGS="+strings.TrimSpace(os.Getenv("GOFLAGS")+" -mod=readonly"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	g := graph{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if len(f) != 5 {
			t.Fatalf("go list: unexpected line %q", sc.Text())
		}
		ncgo, err := strconv.Atoi(f[3])
		if err != nil {
			t.Fatalf("go list: unexpected line %q", sc.Text())
		}
		g[f[0]] = &pkg{Path: f[0], Standard: f[1] == "true", Module: f[2], Cgo: ncgo > 0, Imports: strings.Fields(f[4])}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(g) == 0 {
		t.Fatalf("go %s listed no packages", strings.Join(args, " "))
	}
	return g
}

// reach returns every package root links, itself included.
func (g graph) reach(root string) map[string]bool {
	seen := map[string]bool{root: true}
	todo := []string{root}
	for len(todo) > 0 {
		p := todo[0]
		todo = todo[1:]
		if g[p] == nil {
			continue
		}
		for _, q := range g[p].Imports {
			if !seen[q] {
				seen[q] = true
				todo = append(todo, q)
			}
		}
	}
	return seen
}

// chain returns the shortest import path from root to target, both
// included ("root → … → target"), or "" when root does not link target.
func (g graph) chain(root, target string) string {
	from := map[string]string{root: ""}
	todo := []string{root}
	for len(todo) > 0 {
		p := todo[0]
		todo = todo[1:]
		if p == target {
			var path []string
			for q := p; q != ""; q = from[q] {
				path = append(path, short(q))
			}
			for i, j := 0, len(path)-1; i < j; i, j = i+1, j-1 {
				path[i], path[j] = path[j], path[i]
			}
			return strings.Join(path, " → ")
		}
		if g[p] == nil {
			continue
		}
		for _, q := range g[p].Imports {
			if _, ok := from[q]; !ok {
				from[q] = p
				todo = append(todo, q)
			}
		}
	}
	return ""
}

// short drops the module's prefix from one of Link's own packages.
func short(p string) string {
	if p == module {
		return "."
	}
	return strings.TrimPrefix(p, module+"/")
}

// plant returns a copy of g in which from also imports to: the tests
// of the tests use it to show a check catches an edge it must refuse.
func (g graph) plant(from, to string) graph {
	c := graph{}
	for k, v := range g {
		cp := *v
		cp.Imports = append([]string(nil), v.Imports...)
		c[k] = &cp
	}
	if c[to] == nil {
		c[to] = &pkg{Path: to, Module: module}
	}
	c[from].Imports = append(c[from].Imports, to)
	return c
}
