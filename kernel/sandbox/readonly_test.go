package sandbox_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/kernel/sandbox"
)

// TestReadOnlyTopsCannotBeMade: in a written folder without .git, .envrc,
// .vscode or .idea, the sandboxed command can make none of them, nor
// write into, remove or replace the empty placeholders; a new file at the
// top is written (the control).
func TestReadOnlyTopsCannotBeMade(t *testing.T) {
	w := newWorld(t)
	f := false
	c := compile(t, w, caps.Grants{Write: []string{w.data}, Commands: []string{"mv", "rm"}, Internet: &f})
	script := `d=$1
for n in .git .envrc .vscode .idea; do
  if echo 'evil' > "$d/$n" 2>/dev/null; then echo "wrote $n"; fi
  if echo 'evil' > "$d/$n/config" 2>/dev/null; then echo "wrote in $n"; fi
  if mv "$d/$n" "$d/$n.aside" 2>/dev/null; then echo "moved $n"; fi
  if rm -rf "$d/$n" 2>/dev/null && [ ! -e "$d/$n" ]; then echo "removed $n"; fi
done
echo control > "$d/new" && mv "$d/new" "$d/new2" && echo control-ok
exit 0`
	code, out, errs := run(t, c, sandbox.Options{}, "sh", "-c", script, "sh", w.data)
	if code != 0 || !strings.Contains(out, "control-ok") {
		t.Fatalf("code %d, out %q, err %q", code, out, errs)
	}
	if strings.TrimSpace(strings.ReplaceAll(out, "control-ok", "")) != "" {
		t.Fatalf("a read-only name was changed from inside: %q", out)
	}
	for _, n := range []string{".git", ".vscode", ".idea"} {
		ents, err := os.ReadDir(filepath.Join(w.data, n))
		if err != nil || len(ents) != 0 {
			t.Errorf("%s: want an empty placeholder folder, got %v, %v", n, ents, err)
		}
	}
	if b, err := os.ReadFile(filepath.Join(w.data, ".envrc")); err != nil || len(b) != 0 {
		t.Errorf(".envrc: want an empty placeholder file, got %q, %v", b, err)
	}
}

// TestReadOnlyTopLinkRefused: a link in .envrc's place at the top of a
// written folder stops the build; bound, it would be followed.
func TestReadOnlyTopLinkRefused(t *testing.T) {
	w := newWorld(t)
	target := filepath.Join(w.home, "elsewhere")
	write(t, target, "")
	if err := os.Symlink(target, filepath.Join(w.data, ".envrc")); err != nil {
		t.Fatal(err)
	}
	f := false
	c := compile(t, w, caps.Grants{Write: []string{w.data}, Internet: &f})
	s, err := sandbox.Build(c, sandbox.Options{Argv: []string{"/bin/true"}, InitPath: testenv.Bin(t, "lnk-init")})
	if err == nil {
		s.Close()
		t.Fatal("built a sandbox with a link in .envrc's place")
	}
	if !errors.Is(err, sandbox.ErrReadOnlyLink) || !strings.Contains(err.Error(), ".envrc") {
		t.Fatalf("want ErrReadOnlyLink naming .envrc, got %v", err)
	}
}
