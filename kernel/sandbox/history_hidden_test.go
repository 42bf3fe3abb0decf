package sandbox_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/kernel/sandbox"
)

// TestDeletedAgentHiddenUnderAGrantedHome: an agent deleted by
// caps.DeleteAgent lands in ~/Link/History/Agents, where a sandbox granted
// the whole home (--read '~') neither reads its files nor lists the
// entry; the granted folder reads (the positive control), and the
// deleted agent's file is there outside the sandbox.
func TestDeletedAgentHiddenUnderAGrantedHome(t *testing.T) {
	w := newWorld(t)
	if _, err := caps.CreateAgent(w.home, "gone"); err != nil {
		t.Fatal(err)
	}
	l := caps.Layout{Home: w.home}
	write(t, filepath.Join(l.FilesDir("gone"), "work", "secret"), "gone-agent-secret")
	dest, err := caps.DeleteAgent(w.home, "gone")
	if err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(dest, "Home", "work", "secret")
	if b, err := os.ReadFile(secret); err != nil || string(b) != "gone-agent-secret" {
		t.Fatalf("outside the sandbox, the deleted agent's file: %q %v", b, err)
	}
	f := false
	c := compile(t, w, caps.Grants{Read: []string{w.home}, Internet: &f})
	code, out, errs := run(t, c, sandbox.Options{}, "sh", "-c",
		`cat "$1/data/f"; echo; cat "$2"; ls -aR "$1/Link/History" "$1/Link/Agents"; exit 0`, "sh", w.home, secret)
	if code != 0 || !strings.Contains(out, "granted-content") {
		t.Fatalf("code %d, out %q, err %q", code, out, errs)
	}
	if strings.Contains(out, "gone-agent-secret") || strings.Contains(out, filepath.Base(dest)) {
		t.Fatalf("~/Link/History showed under a granted home: %q", out)
	}
}
