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

// rightsFuncs are the calls that take fds from a socket's control data,
// by package; each names the argument that is its control buffer (-1:
// the call parses control data, so any use counts). Outside
// internal/scmrights each would be a second SCM_RIGHTS receiver, free to
// forget MSG_CTRUNC, the fd cap, the rights' length or the fds of a
// refused message; a raw recvmsg system call number counts too. A
// receive whose control buffer is the literal nil takes no fds and is
// not one.
var rightsFuncs = map[string]map[string]int{
	"golang.org/x/sys/unix": {"ParseUnixRights": -1, "ParseSocketControlMessage": -1, "Recvmsg": 2, "RecvmsgBuffers": 2, "SYS_RECVMSG": -1, "SYS_RECVMMSG": -1},
	"syscall":               {"ParseUnixRights": -1, "ParseSocketControlMessage": -1, "Recvmsg": 2, "SYS_RECVMSG": -1, "SYS_RECVMMSG": -1},
}

// rightsMethods are methods (of net.UnixConn, on any value: a textual
// check) that receive control data, with their control buffer argument.
var rightsMethods = map[string]int{"ReadMsgUnix": 1}

// rightsAllowed lists where those calls may stay (a folder ends in /),
// each with its reason.
var rightsAllowed = map[string]string{
	"internal/scmrights/": "the one routine itself",
}

// TestFDsReceivedOnlyByScmrights fails on any non-test Go file that
// receives or parses SCM_RIGHTS outside the places listed.
func TestFDsReceivedOnlyByScmrights(t *testing.T) {
	root := testenv.RepoRoot(t)
	for _, v := range rightsCalls(t, root, rightsAllowed) {
		t.Errorf("%s: receive fds through internal/scmrights.Recv (or list this file, with its reason, in rightsAllowed)", v)
	}
}

// TestRightsCallsAreFound is the guard's own check: a planted call of
// each kind (under an alias, and as a value) is found; a receive with a
// nil control buffer and a listed place are not.
func TestRightsCallsAreFound(t *testing.T) {
	root := t.TempDir()
	write := func(rel, src string) { plant(t, root, rel, src) }
	write("a/bad.go", `package a

import (
	"net"
	"syscall"
	sys "golang.org/x/sys/unix"
)

func f(c *net.UnixConn, oob []byte) {
	sys.Recvmsg(0, nil, oob, 0)
	m, _ := sys.ParseSocketControlMessage(oob)
	sys.ParseUnixRights(&m[0])
	syscall.Recvmsg(0, nil, make([]byte, 24), 0)
	c.ReadMsgUnix(nil, oob)
	g := sys.ParseUnixRights
	_ = g
	sys.Syscall(sys.SYS_RECVMSG, 0, 0, 0)
	sys.Recvmsg(0, nil, nil, 0)
	c.ReadMsgUnix(nil, nil)
}
`)
	write("a/bad_test.go", "package a\n\nimport \"golang.org/x/sys/unix\"\n\nfunc h() { unix.ParseUnixRights(nil) }\n")
	write("ok/fine.go", "package ok\n\nimport \"golang.org/x/sys/unix\"\n\nfunc f(b []byte) { unix.Recvmsg(0, b, b, 0) }\n")
	got := rightsCalls(t, root, map[string]string{"ok/": "test"})
	want := []string{"a/bad.go:10: unix.Recvmsg", "a/bad.go:11: unix.ParseSocketControlMessage", "a/bad.go:12: unix.ParseUnixRights",
		"a/bad.go:13: syscall.Recvmsg", "a/bad.go:14: .ReadMsgUnix", "a/bad.go:15: unix.ParseUnixRights",
		"a/bad.go:17: unix.SYS_RECVMSG"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("found:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestRightsAllowedPlacesExist keeps the list honest.
func TestRightsAllowedPlacesExist(t *testing.T) {
	placesExist(t, "rightsAllowed", rightsAllowed)
}

// rightsCalls lists "file:line: pkg.Name" for each receive of control
// data in a non-test Go file under root outside allowed.
func rightsCalls(t *testing.T, root string, allowed map[string]string) []string {
	t.Helper()
	var out []string
	watch := func(path string) bool { _, ok := rightsFuncs[path]; return ok }
	eachSource(t, root, allowed, watch, func(rel string, fset *token.FileSet, f *ast.File, names map[string]string) {
		// oobArg is the control-buffer argument of sel's call (-1: any
		// use counts), and whether sel is one of the calls at all.
		oobArg := func(sel *ast.SelectorExpr) (string, int, bool) {
			if id, ok := sel.X.(*ast.Ident); ok {
				if path, ok := names[id.Name]; ok {
					arg, ok := rightsFuncs[path][sel.Sel.Name]
					return filepath.Base(path) + "." + sel.Sel.Name, arg, ok
				}
			}
			arg, ok := rightsMethods[sel.Sel.Name]
			return "." + sel.Sel.Name, arg, ok
		}
		seen := map[*ast.SelectorExpr]bool{}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				sel, ok := n.Fun.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				if _, arg, ok := oobArg(sel); ok && arg >= 0 && arg < len(n.Args) {
					if id, isID := n.Args[arg].(*ast.Ident); isID && id.Name == "nil" {
						seen[sel] = true // no control buffer: no fds
					}
				}
			case *ast.SelectorExpr:
				if name, _, ok := oobArg(n); ok && !seen[n] {
					out = append(out, rel+":"+strconv.Itoa(fset.Position(n.Pos()).Line)+": "+name)
				}
			}
			return true
		})
	})
	return out
}
