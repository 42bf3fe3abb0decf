package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lnk.dev/lnk/internal/testenv"
)

// TestGrantValuesPrintCleaned: a grant's value is a path, and a folder's
// name is anyone's text (an agent made it, a stream or a harness named
// it): lnk agent show --permissions and lnk agent status print it
// through textsafe, so a folder named with an OSC title change or a bidi
// override (…\u202egpj.exe reading as …exe.jpg) reaches the owner's
// terminal as neither; a folder named with accents and an emoji shows as
// written (the positive control). What is granted is the path as it is:
// the file read back holds it unchanged.
func TestGrantValuesPrintCleaned(t *testing.T) {
	home := testenv.Home(t)
	if code, _, errs := runLnk(t, "agent", "create", "ada"); code != ExitOK {
		t.Fatal(errs)
	}
	names := []string{"e\x1b]0;pwned\x07x", "x\u202egpj.exe", "café 🙂"}
	for _, n := range names {
		if err := os.MkdirAll(filepath.Join(home, "Link", n), 0o700); err != nil {
			t.Fatal(err)
		}
		if code, _, errs := runLnk(t, "agent", "allow", "ada", "--read", "~/Link/"+n); code != ExitOK {
			t.Fatalf("allow %q: %s", n, errs)
		}
	}
	spec, err := os.ReadFile(filepath.Join(home, "Link", "Agents", "ada", "Config", "sandbox.toml"))
	if err != nil || !strings.Contains(string(spec), `~/Link/e\u001b]0;pwned\u0007x`) || !strings.Contains(string(spec), "~/Link/café 🙂") {
		t.Fatalf("sandbox.toml does not hold the paths as granted: %v\n%s", err, spec)
	}
	for _, args := range [][]string{{"agent", "show", "ada", "--permissions"}, {"agent", "status", "ada"}} {
		code, out, errs := runLnk(t, args...)
		if code != ExitOK {
			t.Fatalf("%v: exit %d\n%s", args, code, errs)
		}
		if strings.ContainsAny(out, "\x1b\x07\u202e") {
			t.Errorf("%v printed a control or bidi character:\n%q", args, out)
		}
		for _, want := range []string{"~/Link/e]0;pwnedx", "~/Link/xgpj.exe", "~/Link/café 🙂"} {
			if !strings.Contains(out, want) {
				t.Errorf("%v does not show %q:\n%s", args, want, out)
			}
		}
	}
}
