package repotest

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lnk.dev/lnk/internal/testenv"
)

// TestEveryPackageHasOnePackageDoc fails for a package with no package
// doc comment, or with more than one file carrying one.
func TestEveryPackageHasOnePackageDoc(t *testing.T) {
	root := testenv.RepoRoot(t)
	dirs := map[string][]string{}
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			n := d.Name()
			if p != root && (strings.HasPrefix(n, ".") || n == "testdata" || n == "node_modules" || n == "bin") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_test.go") {
			dirs[filepath.Dir(p)] = append(dirs[filepath.Dir(p)], p)
		}
		return nil
	})
	if len(dirs) < 3 {
		t.Fatalf("found only %d packages under %s", len(dirs), root)
	}
	for dir, files := range dirs {
		var withDoc []string
		for _, f := range files {
			fset := token.NewFileSet()
			af, err := parser.ParseFile(fset, f, nil, parser.PackageClauseOnly|parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			if af.Doc != nil && strings.TrimSpace(af.Doc.Text()) != "" {
				withDoc = append(withDoc, filepath.Base(f))
			}
		}
		rel, _ := filepath.Rel(root, dir)
		switch len(withDoc) {
		case 0:
			t.Errorf("package %s has no package doc comment", rel)
		case 1:
		default:
			t.Errorf("package %s has %d package doc comments (%s): keep one, in doc.go or the main file", rel, len(withDoc), strings.Join(withDoc, ", "))
		}
	}
}
