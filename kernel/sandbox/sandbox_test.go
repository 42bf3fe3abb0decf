package sandbox_test

import (
	"strings"
	"testing"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/kernel/sandbox"
)

func TestReadsGrantedFolderNotSSH(t *testing.T) {
	w := newWorld(t)
	c := compile(t, w, caps.Grants{Read: []string{w.data}, Commands: []string{"sh", "cat"}})
	code, out, errs := run(t, c, sandbox.Options{}, "sh", "-c",
		`cat "$1/f"; echo; cat "$HOME/.ssh/id_test" && echo SSH-READ; cat "$HOME/.lnk/settings" && echo LNK-READ; exit 0`, "sh", w.data)
	if code != 0 || !strings.Contains(out, "granted-content") {
		t.Fatalf("code %d, out %q, err %q", code, out, errs)
	}
	if strings.Contains(out, "READ") || strings.Contains(out, "secret") {
		t.Fatalf("the sandbox read a hidden file: %q", out)
	}
}
