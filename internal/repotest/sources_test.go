package repotest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
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
