package repotest

import (
	"go/ast"
	"go/token"
	"strconv"
	"strings"
	"testing"

	"lnk.dev/lnk/internal/testenv"
)

// refusalPkg is the one refusal shape's package.
const refusalPkg = "lnk.dev/lnk/internal/refusal"

// refusalAllowed lists where a type named like a refusal may be
// declared freely, each with its reason.
var refusalAllowed = map[string]string{
	"internal/refusal/": "the one shape itself",
}

// TestOneRefusalShape fails on any non-test Go file that declares a type
// named like a refusal (Refusal or Refused in its name, any case) that
// is a second shape: every such type is an alias of a refusal (another
// package's Refusal, ending at internal/refusal's), or a struct that
// embeds refusal.Refusal and adds what it carries (an HTTP status). An
// interface is a method set, not a refusal, and is left alone.
func TestOneRefusalShape(t *testing.T) {
	root := testenv.RepoRoot(t)
	for _, v := range refusalTypes(t, root, refusalAllowed) {
		t.Errorf("%s: refuse with internal/refusal's Refusal (an alias of it, or a struct embedding it), not a type of its own", v)
	}
}

// TestRefusalTypesAreFound is the guard's own check: planted parallel
// types are found (a struct, a named type, a lowercase one, an alias of
// something that is no refusal); an alias of the shape, a struct
// embedding it, an interface, a test file and a listed place are not.
func TestRefusalTypesAreFound(t *testing.T) {
	root := t.TempDir()
	write := func(rel, src string) { plant(t, root, rel, src) }
	write("a/bad.go", `package a

import (
	"errors"

	shape "lnk.dev/lnk/internal/refusal"
)

type Refusal struct{ Reason string }

type pathRefusal struct{ kind string }

type WasRefused int

type NotARefusal = errors.Error

type Alias = shape.Refusal

type Other = b.Refusal

type ProxyRefusal struct {
	shape.Refusal
	Status int
}

type RefusalCounter interface{ Count() }

type Fine struct{}
`)
	write("a/bad_test.go", "package a\n\ntype testRefusal struct{}\n")
	write("ok/fine.go", "package ok\n\ntype Refusal struct{}\n")
	got := refusalTypes(t, root, map[string]string{"ok/": "test"})
	want := []string{"a/bad.go:9: Refusal", "a/bad.go:11: pathRefusal", "a/bad.go:13: WasRefused", "a/bad.go:15: NotARefusal"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("found:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestRefusalAllowedPlacesExist keeps the list honest.
func TestRefusalAllowedPlacesExist(t *testing.T) {
	placesExist(t, "refusalAllowed", refusalAllowed)
}

// refusalTypes lists "file:line: Name" for each type named like a
// refusal, in a non-test Go file under root outside allowed, that is
// neither an alias of a refusal nor a struct embedding the shape.
func refusalTypes(t *testing.T, root string, allowed map[string]string) []string {
	t.Helper()
	var out []string
	watch := func(path string) bool { return path == refusalPkg }
	eachSource(t, root, allowed, watch, func(rel string, fset *token.FileSet, f *ast.File, names map[string]string) {
		// isShape: sel is internal/refusal's Refusal.
		isShape := func(e ast.Expr) bool {
			sel, ok := e.(*ast.SelectorExpr)
			if !ok {
				return false
			}
			id, ok := sel.X.(*ast.Ident)
			return ok && names[id.Name] == refusalPkg && sel.Sel.Name == "Refusal"
		}
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, s := range gd.Specs {
				ts := s.(*ast.TypeSpec)
				name := strings.ToLower(ts.Name.Name)
				if !strings.Contains(name, "refusal") && !strings.Contains(name, "refused") {
					continue
				}
				if refusalShaped(ts, isShape) {
					continue
				}
				out = append(out, rel+":"+strconv.Itoa(fset.Position(ts.Pos()).Line)+": "+ts.Name.Name)
			}
		}
	})
	return out
}

// refusalShaped reports whether ts is the one shape under another name:
// an alias of a package's Refusal (internal/refusal's, or another
// package's alias of it, itself checked where it is declared), a struct
// embedding internal/refusal's, or an interface (no refusal at all).
func refusalShaped(ts *ast.TypeSpec, isShape func(ast.Expr) bool) bool {
	switch ty := ts.Type.(type) {
	case *ast.InterfaceType:
		return true
	case *ast.SelectorExpr:
		return ts.Assign.IsValid() && (isShape(ty) || ty.Sel.Name == "Refusal")
	case *ast.StructType:
		for _, fld := range ty.Fields.List {
			if len(fld.Names) == 0 && isShape(fld.Type) {
				return true
			}
		}
	}
	return false
}
