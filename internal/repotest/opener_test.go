package repotest

import (
	"go/ast"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"lnk.dev/lnk/internal/testenv"
)

// forbidden are the calls that open or move a file by name beneath a
// folder: outside internal/ownerfile each would be a second copy of the
// owner-file routine (no link followed, O_CLOEXEC, one mode check, atomic
// write), free to drift from it.
var forbidden = map[string][]string{
	"golang.org/x/sys/unix": {"Openat", "Openat2", "Renameat", "Renameat2", "Rename"},
	"syscall":               {"Openat", "Renameat", "Rename"},
	"os":                    {"Rename"},
}

// openerAllowed lists where those calls may stay (a folder ends in /),
// each with its reason: none of them opens one of Link's own files.
var openerAllowed = map[string]string{
	"internal/ownerfile/":         "the one routine itself",
	"internal/resolve/":           "the resolver of the agent's files, sandbox side, with its own tests and fuzzing",
	"kernel/sandbox/system.go":    "copies /etc (system files, each checked regular and bounded) into the sandbox",
	"kernel/sandbox/probe/":       "the sandbox's own probe: tries, from inside, what the sandbox must refuse",
	"cmd/lnk-askbroker/probe.go":  "the ask broker's probe: tries, from inside its sandbox, a write it must or must not be allowed",
	"cmd/lnk-toolbridge/probe.go": "the tool bridge's probe: tries, once confined, a read and a write it must or must not be allowed",
	"kernel/folders.go":           "walks .. up from a folder the kernel holds, O_PATH, to compare device and inode with Link's own folders; opens nothing by name",
}

// TestOwnerFilesOpenedOnlyByOwnerfile fails on any non-test Go file that
// calls one of the forbidden functions outside the places listed.
func TestOwnerFilesOpenedOnlyByOwnerfile(t *testing.T) {
	root := testenv.RepoRoot(t)
	for _, v := range forbiddenCalls(t, root, openerAllowed) {
		t.Errorf("%s: open or rename the owner's files through internal/ownerfile (or list this file, with its reason, in openerAllowed)", v)
	}
}

// TestForbiddenCallsAreFound is the guard's own check: a planted call of
// each kind (under an alias too) is found, and a listed place is not.
func TestForbiddenCallsAreFound(t *testing.T) {
	root := t.TempDir()
	write := func(rel, src string) { plant(t, root, rel, src) }
	write("a/bad.go", `package a

import (
	"os"
	sys "golang.org/x/sys/unix"
)

func f() {
	sys.Openat(0, "x", 0, 0)
	sys.Openat2(0, "x", nil)
	sys.Renameat2(0, "x", 0, "y", 0)
	os.Rename("x", "y")
	g := sys.Renameat
	_ = g
}
`)
	write("a/bad_test.go", "package a\n\nimport \"os\"\n\nfunc h() { os.Rename(\"x\", \"y\") }\n")
	write("ok/fine.go", "package ok\n\nimport \"golang.org/x/sys/unix\"\n\nfunc f() { unix.Openat(0, \"x\", 0, 0) }\n")
	write("b/other.go", "package b\n\nimport \"golang.org/x/sys/unix\"\n\nfunc f() { unix.Open(\"x\", 0, 0); unix.Fstat(0, nil) }\n")
	got := forbiddenCalls(t, root, map[string]string{"ok/": "test"})
	want := []string{"a/bad.go:9: unix.Openat", "a/bad.go:10: unix.Openat2", "a/bad.go:11: unix.Renameat2", "a/bad.go:12: os.Rename", "a/bad.go:13: unix.Renameat"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("found:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// forbiddenCalls lists "file:line: pkg.Name" for each use of a forbidden
// function in a non-test Go file under root outside allowed.
func forbiddenCalls(t *testing.T, root string, allowed map[string]string) []string {
	t.Helper()
	var out []string
	watch := func(path string) bool { _, ok := forbidden[path]; return ok }
	eachSource(t, root, allowed, watch, func(rel string, fset *token.FileSet, f *ast.File, names map[string]string) {
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			id, ok := sel.X.(*ast.Ident)
			if !ok {
				return true
			}
			path, ok := names[id.Name]
			if !ok {
				return true
			}
			for _, fn := range forbidden[path] {
				if sel.Sel.Name == fn {
					out = append(out, rel+":"+strconv.Itoa(fset.Position(sel.Pos()).Line)+": "+filepath.Base(path)+"."+fn)
				}
			}
			return true
		})
	})
	return out
}

// TestOpenerAllowedPlacesExist keeps the list honest: a place moved or
// removed leaves no stale entry behind.
func TestOpenerAllowedPlacesExist(t *testing.T) {
	placesExist(t, "openerAllowed", openerAllowed)
}
