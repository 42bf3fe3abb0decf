package sandbox_test

import (
	"strings"
	"testing"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/kernel/sandbox"
)

// The relay is born confined (lnk-init starts it from a thread already
// under its landlock domain and the sandbox's seccomp filter), so every
// thread it has is filtered and has NO_NEW_PRIVS — not only the one that
// confined itself, as when the relay confined itself after its start.
// The command first reaches the proxy through the relay, so the relay is
// up and serving when its threads are read.
func TestRelayEveryThreadConfined(t *testing.T) {
	w := newWorld(t)
	sock, _ := testProxy(t, t.TempDir())
	c := compile(t, w, caps.Grants{Commands: []string{"bash", "cat", "grep"}})
	script := `exec 3<>/dev/tcp/127.0.0.1/${HTTP_PROXY##*:}
printf 'GET http://example.test/ HTTP/1.0\r\n\r\n' >&3
cat <&3 >/dev/null
for p in /proc/[0-9]*; do
  if grep -qzx relay $p/cmdline 2>/dev/null; then
    for s in $p/task/*/status; do echo thread $(grep -E '^(Seccomp|NoNewPrivs):' $s); done
  fi
done`
	code, out, errs := run(t, c, sandbox.Options{ProxySocket: sock}, "bash", "-c", script)
	if code != 0 {
		t.Fatalf("code %d: %s", code, errs)
	}
	threads := 0
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if !strings.HasPrefix(l, "thread ") {
			continue
		}
		threads++
		if !strings.Contains(l, "NoNewPrivs: 1") || !strings.Contains(l, "Seccomp: 2") {
			t.Errorf("a relay thread is not confined: %q", l)
		}
	}
	if threads < 2 {
		t.Fatalf("found %d relay threads (a Go program has several): %q %s", threads, out, errs)
	}
}
