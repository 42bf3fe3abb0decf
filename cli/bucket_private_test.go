package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/internal/testenv/s3peer"
)

// TestBucketPrivateHostFlag: `lnk agent bucket add … --private-host`
// writes the owner's mark to ~/.lnk/agents/<id>/bucket-private-hosts
// (600; read back after the command), not to the agent's rclone.conf;
// `list` shows it (and shows a bucket added without it unmarked, the
// control); the mark never unlocks loopback (a push to
// https://localhost:PORT stays refused); remove takes the mark away.
func TestBucketPrivateHostFlag(t *testing.T) {
	lnkBin(t)
	_, err := exec.LookPath("rclone")
	testenv.Require(t, err == nil, "rclone (scripts/install-deps.sh installs it)")
	home := testenv.Home(t)
	p := s3peer.Start(t, "lnk-cli")
	port := strings.TrimPrefix(p.URL, "http://127.0.0.1")
	run := func(stdin string, want int, args ...string) string {
		t.Helper()
		out, errs, code := lnkRun(t, []byte(stdin), args...)
		if code != want {
			t.Fatalf("lnk %s: exit %d, want %d\n%s%s", strings.Join(args, " "), code, want, out, errs)
		}
		return out + errs
	}
	run("", 0, "agent", "create", "helper")
	a, err := caps.LoadAgent(home, "helper")
	if err != nil {
		t.Fatal(err)
	}
	marks := filepath.Join(home, ".lnk", "agents", a.ID, "bucket-private-hosts")
	keys := s3peer.KeyID + "\n" + s3peer.Secret + "\n"
	run(keys, 0, "agent", "bucket", "add", "helper", "nas", "--s3", "https://localhost"+port, "--bucket", "lnk-cli", "--private-host")
	run(keys, 0, "agent", "bucket", "add", "helper", "pub", "--s3", "https://s3.lnk-test.example", "--bucket", "lnk-cli")
	got, err := os.ReadFile(marks)
	if err != nil || string(got) != "nas https://localhost"+port+"\n" {
		t.Fatalf("the mark read back: %q, %v", got, err)
	}
	if st, err := os.Stat(marks); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("the mark's file: %v, %v", st, err)
	}
	conf, _ := os.ReadFile(filepath.Join(caps.Layout{Home: home}.ConfigDir("helper"), "rclone.conf"))
	if strings.Contains(string(conf), "private") {
		t.Fatalf("rclone.conf holds the mark:\n%s", conf)
	}
	var l []struct {
		Name        string `json:"name"`
		PrivateHost bool   `json:"private_host"`
	}
	if err := json.Unmarshal([]byte(run("", 0, "agent", "bucket", "list", "helper", "--json")), &l); err != nil || len(l) != 2 || l[0].Name != "nas" || !l[0].PrivateHost || l[1].PrivateHost {
		t.Fatalf("list --json: %+v, %v", l, err)
	}
	if out := run("", 0, "agent", "bucket", "list", "helper"); !strings.Contains(out, "PRIVATE HOST") {
		t.Fatalf("list: %s", out)
	}
	out := run("", 3, "bucket", "push", "helper", "nas")
	if !strings.Contains(out, "resolves to a loopback address") {
		t.Fatalf("a --private-host bucket at localhost: %s", out)
	}
	if keys := p.Keys(t, "lnk-cli"); len(keys) != 0 {
		t.Fatalf("the server holds %v", keys)
	}
	run("", 0, "agent", "bucket", "remove", "helper", "nas")
	if got, err := os.ReadFile(marks); err != nil || len(got) != 0 {
		t.Fatalf("after remove, the marks: %q, %v", got, err)
	}
}
