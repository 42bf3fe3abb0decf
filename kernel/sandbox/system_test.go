package sandbox_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/kernel/sandbox"
)

// TestEtcCopiesAreReadOnly: /etc's listed files reach the sandbox as
// they are on the host (copied, not bound), /etc/shadow does not, and
// neither a copy nor the sandbox's root can be written. The copies are
// the sandbox uid's own (0444), so the mount itself must be read-only
// (EROFS) for chmod to fail, and a file made at the root meets EROFS
// before landlock is asked.
func TestEtcCopiesAreReadOnly(t *testing.T) {
	w := newWorld(t)
	host, err := os.ReadFile("/etc/passwd")
	testenv.Require(t, err == nil, "a readable /etc/passwd")
	c := compile(t, w, caps.Grants{Commands: []string{"sh", "cat", "chmod"}})
	// A small folder is copied too: its files are the host's.
	var folder []byte
	names, _ := filepath.Glob("/etc/ld.so.conf.d/*")
	for _, n := range names {
		b, err := os.ReadFile(n)
		testenv.Require(t, err == nil, "a readable "+n)
		folder = append(folder, b...)
	}
	code, out, errs := run(t, c, sandbox.Options{}, "sh", "-c", `cat /etc/passwd; echo '--'
cat /etc/ld.so.conf.d/* 2>/dev/null; echo '--'
cat /etc/shadow && echo SHADOW-READ
{ chmod 0644 /etc/passwd; } 2>&1
{ echo x >> /etc/passwd; } 2>/dev/null && echo PASSWD-WRITTEN
{ echo > /made-at-root; } 2>&1
exit 0`)
	if code != 0 {
		t.Fatalf("code %d: %s", code, errs)
	}
	got, rest, _ := strings.Cut(out, "--\n")
	if got != string(host) {
		t.Fatalf("/etc/passwd inside is not the host's:\n%q\nwant\n%q", got, host)
	}
	got, rest, _ = strings.Cut(rest, "--\n")
	if got != string(folder) {
		t.Fatalf("/etc/ld.so.conf.d inside is not the host's:\n%q\nwant\n%q", got, folder)
	}
	if strings.Contains(rest, "SHADOW-READ") || strings.Contains(rest, "PASSWD-WRITTEN") {
		t.Fatalf("/etc/shadow read or /etc/passwd written: %q", rest)
	}
	if n := strings.Count(rest, "Read-only file system"); n != 2 {
		t.Fatalf("want chmod and the file at the root refused by a read-only mount, got %q", rest)
	}
}
