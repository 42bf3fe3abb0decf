package repotest

import (
	"strings"
	"testing"

	"lnk.dev/lnk/internal/testenv"
)

// TestAllowListCatchesAPlantedImport shows the allow-list check fails on
// what it must refuse: a broker made to import net/http, and a package
// of its own that starts importing unsafe, each named with its chain;
// and a line for something no longer linked. The unchanged graph
// against its own list passes (the positive control).
func TestAllowListCatchesAPlantedImport(t *testing.T) {
	root := testenv.RepoRoot(t)
	g := buildGraphs(t, root)["lnk-fsbroker"]
	if g == nil {
		t.Fatal("no graph for lnk-fsbroker")
	}
	have, _ := linked(g, module+"/cmd/lnk-fsbroker")
	if v := allowViolations(g, "lnk-fsbroker", have); len(v) != 0 {
		t.Fatalf("the graph against its own list: %q", v)
	}

	planted := g.plant(module+"/helpers/fsbroker", "net/http")
	v := allowViolations(planted, "lnk-fsbroker", have)
	if len(v) == 0 || !strings.Contains(strings.Join(v, "\n"), "links std net/http, not on its allow-list (cmd/lnk-fsbroker/deps.txt), brought in by cmd/lnk-fsbroker → helpers/fsbroker → net/http") {
		t.Errorf("a planted net/http import: %q", v)
	}
	for _, m := range v {
		if !strings.Contains(m, "hint: ") {
			t.Errorf("no hint in %q", m)
		}
	}

	planted = g.plant(module+"/helpers/fsbroker", "unsafe")
	v = allowViolations(planted, "lnk-fsbroker", have)
	if len(v) != 1 || !strings.Contains(v[0], `now links "own lnk.dev/lnk/helpers/fsbroker unsafe"`) {
		t.Errorf("a planted unsafe import: %q", v)
	}

	stale := map[string]allowEntry{}
	for k, e := range have {
		stale[k] = e
	}
	stale["net/http"] = allowEntry{Kind: "std", Path: "net/http"}
	v = allowViolations(g, "lnk-fsbroker", stale)
	if len(v) != 1 || !strings.Contains(v[0], "no longer links net/http") {
		t.Errorf("a stale line: %q", v)
	}
}

// TestBanListCatchesAPlantedImport shows a ban-list names a banned
// package a broker is made to link, with its chain, and passes the
// graph as it is.
func TestBanListCatchesAPlantedImport(t *testing.T) {
	root := testenv.RepoRoot(t)
	g := buildGraphs(t, root)["lnk-fsbroker"]
	if v := banViolations(g, "lnk-fsbroker", budget["lnk-fsbroker"]); len(v) != 0 {
		t.Fatalf("lnk-fsbroker as it is: %q", v)
	}
	v := banViolations(g.plant(module+"/internal/resolve", "os/exec"), "lnk-fsbroker", budget["lnk-fsbroker"])
	if len(v) != 1 || !strings.Contains(v[0], "lnk-fsbroker links os/exec, which its budget forbids: cmd/lnk-fsbroker → helpers/fsbroker → internal/resolve → os/exec") {
		t.Errorf("a planted os/exec import: %q", v)
	}
}
