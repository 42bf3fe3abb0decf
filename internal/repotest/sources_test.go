package repotest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"lnk.dev/lnk/internal/testenv"
)

// eachSource parses every non-test Go file under root (hidden folders
// and vendor left out) outside allowed, and calls fn with its path
// relative to root and names: the local name of each import whose path
// watch reports, to that path (an alias too).
func eachSource(t *testing.T, root string, allowed map[string]string, watch func(path string) bool,
	fn func(rel string, fset *token.FileSet, f *ast.File, names map[string]string)) {
	t.Helper()
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if name := d.Name(); rel != "." && (strings.HasPrefix(name, ".") || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") || isAllowed(rel, allowed) {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		names := map[string]string{} // local name -> import path
		for _, im := range f.Imports {
			path, _ := strconv.Unquote(im.Path.Value)
			if !watch(path) {
				continue
			}
			local := filepath.Base(path)
			if im.Name != nil {
				local = im.Name.Name
			}
			names[local] = path
		}
		fn(rel, fset, f, names)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func isAllowed(rel string, allowed map[string]string) bool {
	for place := range allowed {
		if rel == place || strings.HasSuffix(place, "/") && strings.HasPrefix(rel, place) {
			return true
		}
	}
	return false
}

// plant writes src at rel under root: a file for a guard's own check.
func plant(t *testing.T, root, rel, src string) {
	t.Helper()
	p := filepath.Join(root, rel)
	os.MkdirAll(filepath.Dir(p), 0o700)
	if err := os.WriteFile(p, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
}

// placesExist keeps a guard's list of allowed places honest: a place
// moved or removed leaves no stale entry behind. list is its name.
func placesExist(t *testing.T, list string, allowed map[string]string) {
	t.Helper()
	root := testenv.RepoRoot(t)
	for place := range allowed {
		if _, err := os.Stat(filepath.Join(root, place)); err != nil {
			t.Errorf("%s names %s, which is gone: %v", list, place, err)
		}
	}
}
