package main

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lnk.dev/lnk/internal/testenv"
)

// sandboxRun runs `lnk sandbox run args…` with HOME=home and returns its
// stdout and the wire's log. Files, not pipes: a proxy that outlived its
// sandbox can't keep Wait from returning.
func sandboxRun(t *testing.T, home string, args ...string) (string, string) {
	t.Helper()
	cmd := exec.Command(testenv.Bin(t, "lnk"), append([]string{"sandbox", "run"}, args...)...)
	cmd.Env = append(cmd.Environ(), "HOME="+home)
	dir := t.TempDir()
	out, errf := tempFile(t, filepath.Base(dir)+"-out"), tempFile(t, filepath.Base(dir)+"-err")
	cmd.Stdout, cmd.Stderr = out, errf
	cmd.WaitDelay = 30 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait() // the script's own lines say what passed
	o, _ := os.ReadFile(out.Name())
	e, _ := os.ReadFile(errf.Name())
	if strings.Contains(string(e), `"decision"`) {
		t.Errorf("the proxy's log reached the sandbox's stderr: %s", e)
	}
	l, _ := os.ReadFile(filepath.Join(home, ".lnk", "log", "audit.log"))
	t.Logf("stderr: %s", e)
	return string(o), string(l)
}

// Through a real sandbox, curl speaking SOCKS5 (--socks5-hostname, the
// credentials in $ALL_PROXY) reaches a granted loopback server and is
// refused an ungranted port; without credentials, or with a wrong
// secret, it is refused before any target is named; each is logged.
func TestSandboxedCurlThroughSOCKS5(t *testing.T) {
	curl, home, port := sandboxedCurl(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "granted-server") })

	script := fmt.Sprintf(`relay=${HTTP_PROXY##*:}
case "$ALL_PROXY" in socks5h://lnk:*@127.0.0.1:$relay) echo all-proxy=socks5h ;; *) echo "all-proxy=$ALL_PROXY" ;; esac
creds=${ALL_PROXY#socks5h://}
echo "allowed=$(curl -s -m 20 --socks5-hostname "$creds" http://localhost:%[1]d/)"
curl -s -m 20 --socks5-hostname "$creds" http://127.0.0.1:%[2]d/; echo "forbidden-exit=$?"
curl -s -m 20 --socks5-hostname "127.0.0.1:$relay" http://localhost:%[1]d/; echo "noauth-exit=$?"
curl -s -m 20 --socks5-hostname "lnk:wrong-secret@127.0.0.1:$relay" http://localhost:%[1]d/; echo "wrong-exit=$?"
`, port, port+1)
	out, log := sandboxRun(t, home, "--port", fmt.Sprint(port), "--command", curl, "--", "/bin/sh", "-c", script)
	for _, want := range []string{"all-proxy=socks5h\n", "allowed=granted-server\n", "forbidden-exit=97\n", "noauth-exit=97\n", "wrong-exit=97\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in the sandbox's output:\n%s", want, out)
		}
	}
	for _, want := range []string{
		fmt.Sprintf(`"kind":"use","request":"net socks","route":"localhost:%d"`, port),
		fmt.Sprintf(`"kind":"refuse","request":"net socks","route":"127.0.0.1:%d","reason":"address: loopback port %d is not in this sandbox's [localhost] ports"`, port+1, port+1),
		`"kind":"refuse","request":"net socks","reason":"auth: socks5: only username/password authentication with the sandbox's secret is accepted"`,
		`"kind":"refuse","request":"net socks","reason":"auth: socks5: wrong username or secret"`,
	} {
		if !strings.Contains(log, want) {
			t.Errorf("no %s in the wire's log:\n%s", want, log)
		}
	}
	if strings.Contains(log, "wrong-secret") {
		t.Errorf("the log holds a password a client sent:\n%s", log)
	}
}
