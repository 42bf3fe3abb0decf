package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"lnk.dev/lnk/internal/testenv"
)

const sealedValue = "sk-sealed-REAL-value-5b9e0c1d7a"

// lnkDo runs lnk with HOME=home and stdin, failing t if it fails.
func lnkDo(t *testing.T, home, stdin string, args ...string) {
	t.Helper()
	cmd := exec.Command(testenv.Bin(t, "lnk"), args...)
	cmd.Env = append(cmd.Environ(), "HOME="+home)
	cmd.Stdin = strings.NewReader(stdin)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("lnk %v: %v\n%s", args, err, out)
	}
}

// An agent's sealed secret through a real `lnk sandbox run --agent`: the
// sandbox is told a placeholder and the route, never the value (not in
// any sandboxed process's environment or memory, read from outside, nor
// in any file under HOME but secrets.toml); the placeholder sent to
// another host stays a placeholder, through the HTTP proxy and SOCKS5;
// the route takes the value from lnk-keybroker (it gets as far as
// judging the secret's host, a loopback name here, which it refuses);
// a secret not granted has no variable and no route.
func TestSandboxedSealedSecret(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	curl, home, port := sandboxedCurl(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
		fmt.Fprint(w, "other-host")
	})
	testenv.Bin(t, "lnk-keybroker")

	lnkDo(t, home, "", "agent", "create", "demo")
	lnkDo(t, home, sealedValue, "secret", "create", "API_KEY", "--internet-host", "api.localhost")
	lnkDo(t, home, "", "secret", "add", "API_KEY", "--agent", "demo")
	lnkDo(t, home, "sk-other-not-granted", "secret", "create", "OTHER_KEY", "--internet-host", "other.localhost")
	lnkDo(t, home, "", "agent", "allow", "demo", "--port", fmt.Sprint(port), "--command", curl)

	script := fmt.Sprintf(`echo "placeholder=$API_KEY"
echo "url=$LNK_SEALED_API_KEY_URL"
echo "other=${OTHER_KEY:-none}"
curl -s -m 20 -H "Authorization: Bearer $API_KEY" http://127.0.0.1:%[1]d/; echo
curl -s -m 20 -x "$ALL_PROXY" -H "Authorization: Bearer $API_KEY" http://127.0.0.1:%[1]d/; echo
echo "route=$(curl --noproxy '*' -s -m 20 -H "Authorization: Bearer $API_KEY" "${LNK_SEALED_API_KEY_URL}v1/models")"
echo "route-via-proxy=$(curl -s -m 20 -H "Authorization: Bearer $API_KEY" "${LNK_SEALED_API_KEY_URL}v1/models")"
echo "other-route=$(curl --noproxy '*' -s -m 20 "${LNK_SEALED_API_KEY_URL%%API_KEY/}OTHER_KEY/v1/models")"
echo READY
read line
`, port)
	cmd := exec.Command(testenv.Bin(t, "lnk"), "sandbox", "run", "--agent", "demo", "--", "/bin/sh", "-c", script)
	cmd.Env = append(cmd.Environ(), "HOME="+home)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	errf := tempFile(t, "stderr")
	cmd.Stderr = errf
	cmd.WaitDelay = 30 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		stdin.Close()
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	})
	lines := map[string]string{}
	var all strings.Builder
	sc := bufio.NewScanner(stdout)
	for sc.Scan() && sc.Text() != "READY" {
		all.WriteString(sc.Text() + "\n")
		k, v, _ := strings.Cut(sc.Text(), "=")
		lines[k] = v
	}
	if sc.Err() != nil || lines["placeholder"] == "" {
		e, _ := os.ReadFile(errf.Name())
		t.Fatalf("the sandbox said:\n%s\nstderr: %s", all.String(), e)
	}

	// While the sandbox waits, search every process in it from outside.
	placeholder := lines["placeholder"]
	if !strings.HasPrefix(placeholder, "lnk-sealed-api_key-") || !strings.Contains(lines["url"], "/sealed/API_KEY/") || lines["other"] != "none" {
		t.Fatalf("told %v", lines)
	}
	procs := sandboxProcs(t, cmd.Process.Pid)
	holder := 0 // a process whose environment holds the placeholder
	for _, pid := range procs {
		env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if err != nil {
			continue // it ended
		}
		if bytes.Contains(env, []byte(sealedValue)) {
			t.Errorf("the value is in the environment of sandboxed pid %d", pid)
		}
		if bytes.Contains(env, []byte(placeholder)) {
			holder = pid
		}
		if found, err := memHolds(pid, []byte(sealedValue)); err != nil {
			t.Logf("pid %d's memory can't be read from here: %v", pid, err)
		} else if found {
			t.Errorf("the value is in the memory of sandboxed pid %d", pid)
		}
	}
	if holder == 0 {
		t.Fatalf("no sandboxed process (of %v) holds the placeholder: the search can't see the sandbox", procs)
	}
	if found, err := memHolds(holder, []byte(placeholder)); err == nil && !found {
		t.Fatalf("pid %d's memory does not hold the placeholder: the memory search is blind", holder)
	}
	stdin.Close()
	<-exited

	mu.Lock()
	got := append([]string(nil), seen...)
	mu.Unlock()
	if len(got) != 2 || got[0] != "Bearer "+placeholder || got[1] != got[0] {
		t.Errorf("the other host saw %q, want the placeholder twice (http proxy, socks)", got)
	}
	if !strings.Contains(lines["route"], "api.localhost resolves to a loopback address") || !strings.Contains(lines["route"], "goes only to a public address") || strings.Contains(lines["route"], "lnk agent allow") {
		t.Errorf("the route did not get the value from the keybroker and judge its host: %q", lines["route"])
	}
	if lines["route-via-proxy"] != lines["route"] {
		t.Errorf("the route asked through HTTP_PROXY (no --noproxy) answered %q, not as asked directly: %q", lines["route-via-proxy"], lines["route"])
	}
	if !strings.Contains(lines["other-route"], "no sealed secret of that name") {
		t.Errorf("a secret not granted: %q", lines["other-route"])
	}
	log, _ := os.ReadFile(filepath.Join(home, ".lnk", "log", "audit.log"))
	if !strings.Contains(string(log), `"kind":"use","agent":"demo","request":"sealed secret","route":"keybroker","reason":"handed sealed secret API_KEY of agent`) {
		t.Errorf("the keybroker's handing is not in the wire's log:\n%s", log)
	}
	if strings.Contains(all.String(), sealedValue) {
		t.Errorf("the value reached the sandbox's output:\n%s", all.String())
	}
	filepath.WalkDir(home, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() || p == filepath.Join(home, ".lnk", "secrets.toml") {
			return nil
		}
		if b, err := os.ReadFile(p); err == nil && bytes.Contains(b, []byte(sealedValue)) {
			t.Errorf("the value is in %s", p)
		}
		return nil
	})
}

// sandboxProcs lists lnk's descendants but the proxy and the keybroker,
// which hold what the sandbox never sees: bubblewrap and the sandbox's
// own processes.
func sandboxProcs(t *testing.T, lnk int) []int {
	t.Helper()
	parent := map[int]int{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(b, ')')
		f := strings.Fields(string(b[i+1:]))
		if len(f) > 1 {
			ppid, _ := strconv.Atoi(f[1])
			parent[pid] = ppid
		}
	}
	var out []int
	var walk func(int)
	walk = func(p int) {
		for pid, pp := range parent {
			if pp != p {
				continue
			}
			exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
			if b := filepath.Base(exe); b == "lnk-netbroker" || b == "lnk-keybroker" {
				continue
			}
			out = append(out, pid)
			walk(pid)
		}
	}
	walk(lnk)
	if len(out) == 0 {
		t.Fatal("no process of the sandbox found")
	}
	return out
}

// memHolds searches pid's readable memory for needle, through
// /proc/<pid>/mem.
func memHolds(pid int, needle []byte) (bool, error) {
	maps, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return false, err
	}
	mem, err := os.Open(fmt.Sprintf("/proc/%d/mem", pid))
	if err != nil {
		return false, err
	}
	defer mem.Close()
	read := 0
	for _, line := range strings.Split(string(maps), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || f[1][0] != 'r' || strings.HasSuffix(line, "[vvar]") || strings.HasSuffix(line, "[vsyscall]") {
			continue
		}
		lo, hi, _ := strings.Cut(f[0], "-")
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil || end-start > 1<<30 {
			continue
		}
		buf := make([]byte, end-start)
		n, err := mem.ReadAt(buf, int64(start))
		if err != nil && err != io.EOF && n == 0 {
			continue
		}
		read += n
		if bytes.Contains(buf[:n], needle) {
			return true, nil
		}
	}
	if read == 0 {
		return false, fmt.Errorf("no region of pid %d could be read", pid)
	}
	return false, nil
}
