package repotest

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lnk.dev/lnk/internal/testenv"
)

// npmPackage is what an npm lock's entry (or a package.json) names.
type npmPackage struct {
	Version              string                             `json:"version"`
	Dependencies         map[string]string                  `json:"dependencies"`
	OptionalDependencies map[string]string                  `json:"optionalDependencies"`
	PeerDependencies     map[string]string                  `json:"peerDependencies"`
	PeerDependenciesMeta map[string]struct{ Optional bool } `json:"peerDependenciesMeta"`
	DevDependencies      map[string]string                  `json:"devDependencies"`
	Link                 bool                               `json:"link"`
	Extraneous           bool                               `json:"extraneous"`
}

// npmLock is a package-lock.json of lockfileVersion 2 or 3.
type npmLock struct {
	LockfileVersion int                   `json:"lockfileVersion"`
	Packages        map[string]npmPackage `json:"packages"`
}

// npmLockFaults lists where lock is out of step with manifest: the root
// entry's dependencies differ from package.json's, or a locked package
// needs one (a dependency, an optional one, a peer not marked optional)
// that Node's lookup from its folder upward finds nowhere in the lock.
// These are the locks `npm ci` refuses as "Missing: ... from lock file".
func npmLockFaults(manifest npmPackage, lock npmLock) []string {
	var faults []string
	if lock.LockfileVersion < 2 {
		return []string{"lockfileVersion is below 2: no packages map to check"}
	}
	root := lock.Packages[""]
	for _, kind := range []struct {
		name      string
		want, got map[string]string
	}{
		{"dependencies", manifest.Dependencies, root.Dependencies},
		{"optionalDependencies", manifest.OptionalDependencies, root.OptionalDependencies},
		{"devDependencies", manifest.DevDependencies, root.DevDependencies},
	} {
		if !maps.Equal(kind.want, kind.got) && len(kind.want)+len(kind.got) > 0 {
			faults = append(faults, "package.json's "+kind.name+" are not the lock's")
		}
	}
	for _, at := range sortedKeys(lock.Packages) {
		p := lock.Packages[at]
		if at == "" || p.Link || p.Extraneous {
			continue
		}
		needs := map[string]bool{}
		for n := range p.Dependencies {
			needs[n] = true
		}
		for n := range p.OptionalDependencies {
			needs[n] = true
		}
		for n := range p.PeerDependencies {
			if !p.PeerDependenciesMeta[n].Optional {
				needs[n] = true
			}
		}
		for _, n := range sortedKeys(needs) {
			if npmLookup(lock, at, n) == "" {
				faults = append(faults, at+" needs "+n+", which the lock does not hold")
			}
		}
	}
	return faults
}

// npmLookup is where Node finds name from the package at from: its own
// node_modules, then each enclosing one up to the top; "" for nowhere.
func npmLookup(lock npmLock, from, name string) string {
	for cur := from; ; {
		cand := "node_modules/" + name
		if cur != "" {
			cand = cur + "/" + cand
		}
		if _, ok := lock.Packages[cand]; ok {
			return cand
		}
		if cur == "" {
			return ""
		}
		if i := strings.LastIndex(cur, "/node_modules/"); i >= 0 {
			cur = cur[:i]
		} else {
			cur = ""
		}
	}
}

// TestNpmLocksInStep fails for a */testdata/npm folder whose
// package-lock.json `npm ci` would refuse as out of step with its
// package.json: scripts/install-deps.sh installs only with npm ci and
// fails where it refuses, so a lock out of step stops make deps.
func TestNpmLocksInStep(t *testing.T) {
	root := testenv.RepoRoot(t)
	var dirs []string
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || p != root && strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if d.IsDir() && d.Name() == "npm" && filepath.Base(filepath.Dir(p)) == "testdata" {
			dirs = append(dirs, p)
			return filepath.SkipDir
		}
		return nil
	})
	if len(dirs) == 0 {
		t.Fatalf("found no testdata/npm folder under %s", root)
	}
	for _, dir := range dirs {
		rel, _ := filepath.Rel(root, dir)
		var manifest npmPackage
		var lock npmLock
		for name, v := range map[string]any{"package.json": &manifest, "package-lock.json": &lock} {
			b, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Fatalf("%s: %v", rel, err)
			}
			if err := json.Unmarshal(b, v); err != nil {
				t.Fatalf("%s/%s: %v", rel, name, err)
			}
		}
		for _, f := range npmLockFaults(manifest, lock) {
			t.Errorf("%s/package-lock.json is out of step: %s (hint: run npm install --package-lock-only there)", rel, f)
		}
	}
}

// TestNpmLockFaultsFound shows the check above catches an optional
// dependency missing from a lock (the fault npm ci refused in
// services/toolbridge's lock) and a root out of step with package.json,
// and passes the same lock once it holds them.
func TestNpmLockFaultsFound(t *testing.T) {
	manifest := npmPackage{Dependencies: map[string]string{"a": "1.0.0"}}
	lock := npmLock{LockfileVersion: 3, Packages: map[string]npmPackage{
		"":                              {Dependencies: map[string]string{"a": "1.0.0"}},
		"node_modules/a":                {Version: "1.0.0", Dependencies: map[string]string{"b": "^2"}, OptionalDependencies: map[string]string{"win": "^0.1"}},
		"node_modules/a/node_modules/b": {Version: "2.0.0", PeerDependencies: map[string]string{"a": "*", "opt": "*"}, PeerDependenciesMeta: map[string]struct{ Optional bool }{"opt": {Optional: true}}},
	}}
	got := npmLockFaults(manifest, lock)
	if len(got) != 1 || got[0] != "node_modules/a needs win, which the lock does not hold" {
		t.Fatalf("faults = %q, want the missing optional win only", got)
	}
	lock.Packages["node_modules/win"] = npmPackage{Version: "0.1.0"}
	if got := npmLockFaults(manifest, lock); len(got) != 0 {
		t.Fatalf("a lock in step has faults %q", got)
	}
	manifest.Dependencies["c"] = "1.0.0"
	if got := npmLockFaults(manifest, lock); len(got) != 1 || !strings.Contains(got[0], "package.json's dependencies") {
		t.Fatalf("a root out of step: faults = %q", got)
	}
}
