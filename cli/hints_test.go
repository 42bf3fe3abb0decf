package cli

import (
	"bytes"
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"lnk.dev/lnk/internal/testenv"
)

// commandNamed finds "lnk" then words in a string: a command line a hint
// or a help text names.
var commandNamed = regexp.MustCompile(`(?:^|[^a-zA-Z0-9_./-])lnk((?: [a-z][a-z0-9-]*)+)`)

// notCommands are words after "lnk " in strings that name no command:
// a label ("lnk proof v1", "lnk sealed stream v1", the terminal's "[lnk
// question …]") or a sentence ("… when lnk exits 0").
var notCommands = map[string]bool{"proof": true, "sealed": true, "question": true, "exits": true}

// TestEveryCommandNamedExists: every `lnk …` a string of Link's code
// names — a refusal's hint, a help text, an example — is a command the
// tree has, down to its last subcommand: words after a command group
// must name one of its subcommands (cobra prints the group's help, exit
// 0, for `lnk agent harness deny --help`, so help alone proves nothing).
// Each command named then answers --help with its own usage. No string
// leaves the owner waiting for "the agent's next start": it names the
// command that starts it.
func TestEveryCommandNamedExists(t *testing.T) {
	root := testenv.RepoRoot(t)
	named := map[string]string{} // the command's words → where first named
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			if strings.Contains(s, "next start") { // since lnk agent start and restart exist
				rel, _ := filepath.Rel(root, p)
				t.Errorf("%s:%d says \"next start\": name the command (lnk agent restart NAME)", rel, fset.Position(lit.Pos()).Line)
			}
			for _, m := range commandNamed.FindAllStringSubmatch(s, -1) {
				words := strings.TrimSpace(m[1])
				if _, ok := named[words]; !ok {
					rel, _ := filepath.Rel(root, p)
					named[words] = rel + ":" + strconv.Itoa(fset.Position(lit.Pos()).Line)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(named) < 10 {
		t.Fatalf("found only %d commands named: the walk is broken", len(named))
	}
	tree := NewRoot(new(bytes.Buffer), new(bytes.Buffer))
	helped := map[string]bool{}
	for words, where := range named {
		w := strings.Fields(words)
		if notCommands[w[0]] {
			continue
		}
		path, err := commandPath(tree, w)
		if err != nil {
			t.Errorf("%s names `lnk %s`: %v", where, words, err)
			continue
		}
		if helped[path] {
			continue
		}
		helped[path] = true
		var out, errb bytes.Buffer
		args := append(strings.Fields(path)[1:], "--help")
		if code := Main(context.Background(), args, &out, &errb); code != 0 || !strings.Contains(out.String(), "\n  "+path) {
			t.Errorf("%s names `lnk %s`: `%s --help` exits %d:\n%s%s", where, words, path, code, out.String(), errb.String())
		}
	}
}

// commandPath is the command words name, as "lnk …": the subcommands
// they name, in order, until a word the command takes as an argument. A
// word after a command that has subcommands must be one of them.
func commandPath(root *cobra.Command, words []string) (string, error) {
	c := root
	for _, w := range words {
		var next *cobra.Command
		for _, sub := range c.Commands() {
			if sub.Name() == w || sub.HasAlias(w) {
				next = sub
				break
			}
		}
		if next == nil {
			if c.HasSubCommands() {
				return "", &noCommandError{c.CommandPath(), w}
			}
			break
		}
		c = next
	}
	return c.CommandPath(), nil
}

type noCommandError struct{ parent, word string }

func (e *noCommandError) Error() string {
	return "`" + e.parent + "` has no command " + strconv.Quote(e.word)
}
