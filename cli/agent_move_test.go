package cli

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/helpers/keybroker/stream"
	"lnk.dev/lnk/internal/moveentry"
	"lnk.dev/lnk/internal/testenv"
)

// TestMoveBetweenTwoUsersThroughAPipe moves an agent from root's HOME to
// lnktest's through `lnk agent state-send | lnk agent receive`, each a
// real lnk process of its user joined by a real pipe: refused before the
// pause, the files, link and conversation then arrive identical and
// owned by lnktest; of its two buckets, the one on the sender's loopback
// is left out and named with the command that gives it again.
func TestMoveBetweenTwoUsersThroughAPipe(t *testing.T) {
	testenv.RequireRoot(t, "runs lnk agent receive as another user (lnktest)")
	u, err := user.Lookup("lnktest")
	if err != nil {
		t.Fatalf("no user lnktest (make deps, or useradd -m lnktest): %v", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	lnk := testenv.Bin(t, "lnk")
	from := testenv.Home(t)
	to, err := os.MkdirTemp("", "lnk-move-to-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(to) })
	os.Chmod(to, 0o700)
	os.Chown(to, uid, gid)
	as := func(home string, other bool, args ...string) *exec.Cmd {
		env := []string{"HOME=" + home, "PATH=/usr/local/bin:/usr/bin:/bin"}
		if other {
			return exec.Command("runuser", append([]string{"-u", "lnktest", "--", "env", "-i"}, append(env, append([]string{lnk}, args...)...)...)...)
		}
		c := exec.Command(lnk, args...)
		c.Env = env
		return c
	}
	if out, err := as(from, false, "agent", "create", "main").CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	lf := caps.Layout{Home: from}
	os.WriteFile(filepath.Join(lf.FilesDir("main"), "work", "report.md"), []byte("# report\n"), 0o640)
	os.Symlink("/etc/passwd", filepath.Join(lf.FilesDir("main"), "pw"))
	os.WriteFile(filepath.Join(lf.OwnDir("main"), "chats", "c.jsonl"), []byte("{\"t\":\"hi\"}\n"), 0o600)
	// A bucket, encrypted, in the form lnk agent bucket add writes it,
	// and one on the sender's loopback, which the receiver leaves out.
	a, err := caps.LoadAgent(from, "main")
	if err != nil {
		t.Fatal(err)
	}
	conf := moveConf(a.ID)
	near := strings.ReplaceAll(strings.SplitN(conf, "\n\n", 2)[1], "store", "near")
	near = strings.Replace(near, "https://s3.example.com", "http://127.0.0.1:1", 1)
	if err := os.WriteFile(filepath.Join(lf.ConfigDir("main"), "rclone.conf"), []byte(conf+"\n"+near), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := as(from, false, "agent", "bucket", "list", "main").CombinedOutput(); err != nil || !strings.Contains(string(out), "store") {
		t.Fatalf("the test's rclone.conf is not read back as Link's: %v: %s", err, out)
	}
	pubOut, err := as(to, true, "key", "new", "--out", filepath.Join(to, "move.key")).Output()
	if err != nil {
		t.Fatalf("lnk key new as lnktest: %v", err)
	}
	pub := strings.TrimSpace(string(pubOut))

	pipe := func() (sendCode, recvCode int, recvOut, errs string) {
		send := as(from, false, "agent", "state-send", "main", "--to", pub)
		recv := as(to, true, "agent", "receive", "--key", filepath.Join(to, "move.key"))
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		var serr, rout, rerr bytes.Buffer
		send.Stdout, send.Stderr = w, &serr
		recv.Stdin, recv.Stdout, recv.Stderr = r, &rout, &rerr
		if err := send.Start(); err != nil {
			t.Fatal(err)
		}
		if err := recv.Start(); err != nil {
			t.Fatal(err)
		}
		w.Close()
		r.Close()
		send.Wait()
		recv.Wait()
		return send.ProcessState.ExitCode(), recv.ProcessState.ExitCode(), rout.String(), serr.String() + rerr.String()
	}
	sc, rc, _, errs := pipe()
	if sc != ExitRefused || rc == 0 || !strings.Contains(errs, "lnk agent pause main") {
		t.Fatalf("before the pause: send %d, receive %d, %s", sc, rc, errs)
	}
	if _, err := os.Lstat(filepath.Join(to, "Link", "Agents", "main")); !os.IsNotExist(err) {
		t.Fatalf("a refused move put the agent in place: %v", err)
	}
	if out, err := as(from, false, "agent", "pause", "main").CombinedOutput(); err != nil {
		t.Fatalf("pause: %v: %s", err, out)
	}
	sc, rc, out, errs := pipe()
	if sc != 0 || rc != 0 || !strings.Contains(out, "arrived") {
		t.Fatalf("send %d, receive %d: %s %s", sc, rc, out, errs)
	}
	if !strings.Contains(out, "  left out, bucket near: its endpoint is a loopback address") ||
		!strings.Contains(out, "lnk agent bucket add main near --s3 'http://127.0.0.1:1' --bucket 'link-bucket' --encrypt --ask-password gives it again") {
		t.Errorf("the receive does not name the bucket left out:\n%s", out)
	}
	lt := caps.Layout{Home: to}
	for _, d := range [][2]string{{lf.FilesDir("main"), lt.FilesDir("main")}, {filepath.Join(lf.OwnDir("main"), "chats"), filepath.Join(lt.OwnDir("main"), "chats")}} {
		if a, b := tree(t, d[0]), tree(t, d[1]); a != b {
			t.Errorf("%s differs:\n%s\n---\n%s", d[1], a, b)
		}
	}
	if ownerOf(t, filepath.Join(lt.FilesDir("main"), "work", "report.md")) != uid {
		t.Error("an arrived file is not lnktest's own")
	}
	// The public bucket arrived, alone: its rclone.conf byte for byte
	// as Link writes one bucket, 600, lnktest's.
	cp := filepath.Join(lt.ConfigDir("main"), "rclone.conf")
	if b, err := os.ReadFile(cp); err != nil || string(b) != conf {
		t.Errorf("rclone.conf there: %q, %v; want it as it left", b, err)
	} else if fi, _ := os.Lstat(cp); fi.Mode() != 0o600 || ownerOf(t, cp) != uid {
		t.Errorf("rclone.conf there: %v, owner %d; want 600, lnktest's", fi.Mode(), ownerOf(t, cp))
	}
	if out, err := as(to, true, "agent", "bucket", "list", "main").CombinedOutput(); err != nil || !strings.Contains(string(out), "store") {
		t.Errorf("lnk agent bucket list there: %v: %s", err, out)
	}
}

// moveConf is an rclone.conf as lnk agent bucket add writes it: bucket
// store, encrypted, in agent id's folder.
func moveConf(id string) string {
	return "# An agent's buckets, written by Link (lnk agent bucket add|remove): a file of\n# another form is refused. The keys and the obscured password are secrets.\n" +
		"\n[store_s3]\ntype = s3\nprovider = Other\nenv_auth = false\nforce_path_style = true\nno_check_bucket = true\n" +
		"endpoint = https://s3.example.com\naccess_key_id = AKIACLIMOVETEST0001\nsecret_access_key = cli-move-test-secret-key-0123456789\n" +
		"\n[store]\ntype = crypt\nremote = store_s3:link-bucket/" + id + "\nfilename_encryption = standard\ndirectory_name_encryption = true\npassword = Zm9vYmFyYmF6cXV1eGNsaW1vdmV0ZXN0b2JzY3VyZWQ\n"
}

func ownerOf(t *testing.T, p string) int {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	return int(fi.Sys().(*syscall.Stat_t).Uid)
}

// tree lists what is under root: each path's type, mode and content's
// hash or link's target.
func tree(t *testing.T, root string) string {
	t.Helper()
	var lines []string
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, _ := os.Lstat(p)
		line := fmt.Sprintf("%s %v", strings.TrimPrefix(p, root), fi.Mode())
		if fi.Mode()&fs.ModeSymlink != 0 {
			tgt, _ := os.Readlink(p)
			line += " -> " + tgt
		} else if fi.Mode().IsRegular() {
			b, _ := os.ReadFile(p)
			line += fmt.Sprintf(" %x", sha256.Sum256(b))
		}
		lines = append(lines, line)
		return nil
	})
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// TestStartRefusesAMovedAgent: with a note that the agent moved away,
// lnk agent start refuses its ID with the rule and a hint; with the note
// gone, start passes that check and stops at the next one (the machine
// refusing --no-sandbox), the positive control.
func TestStartRefusesAMovedAgent(t *testing.T) {
	home := testenv.Home(t)
	os.MkdirAll(filepath.Join(home, ".lnk"), 0o700)
	os.WriteFile(filepath.Join(home, ".lnk", "machine.toml"), []byte("unsandboxed = false\n"), 0o600)
	a, err := caps.CreateAgent(home, "main")
	if err != nil {
		t.Fatal(err)
	}
	if err := caps.WriteMovedNote(home, a, "box1"); err != nil {
		t.Fatal(err)
	}
	code, _, errs := runLnk(t, "agent", "start", "main", "--no-sandbox")
	if code != ExitRefused || !strings.Contains(errs, "rule moved-away") || !strings.Contains(errs, "hint: lnk agent move main") {
		t.Fatalf("moved away: code %d, %s", code, errs)
	}
	if err := caps.RemoveMovedNote(home, a.ID); err != nil {
		t.Fatal(err)
	}
	code, _, errs = runLnk(t, "agent", "start", "main", "--no-sandbox")
	if code == ExitOK || strings.Contains(errs, "moved-away") || !strings.Contains(errs, "unsandboxed") {
		t.Fatalf("back here: code %d, %s", code, errs)
	}
}

// TestReceiveRefusesAStreamForAnotherKey: a move sealed to another key
// is refused, exit 3, saying why, and nothing is put in place.
func TestReceiveRefusesAStreamForAnotherKey(t *testing.T) {
	home := testenv.Home(t)
	pub, _, _ := stream.NewKeyPair()
	keyFile := filepath.Join(home, "k.key")
	if code, _, errs := runLnk(t, "key", "new", "--out", keyFile); code != 0 {
		t.Fatal(errs)
	}
	var sealed bytes.Buffer
	w, _ := stream.NewWriter(&sealed, pub)
	w.Write([]byte(moveentry.Magic))
	w.Close()
	c := exec.Command(testenv.Bin(t, "lnk"), "agent", "receive", "--key", keyFile)
	c.Stdin = &sealed
	out, _ := c.CombinedOutput()
	if c.ProcessState.ExitCode() != ExitRefused || !strings.Contains(string(out), "not sealed to this key") {
		t.Fatalf("code %d: %s", c.ProcessState.ExitCode(), out)
	}
	if ents, _ := os.ReadDir(filepath.Join(home, "Link", "Agents")); len(ents) > 1 {
		t.Errorf("something was put in place: %v", ents)
	}
}
