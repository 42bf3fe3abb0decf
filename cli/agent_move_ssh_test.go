package cli

import (
	"bytes"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/helpers/keybroker/secrets"
	"lnk.dev/lnk/internal/secret"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/services/agentlife"
)

// sshBox starts an sshd of the test's own (its own host key, config and
// authorized key; never the system's), letting in lnktest alone, on the
// loopback of a network namespace the test makes (ip netns: only its
// loopback is up, nothing else reaches it), and returns an ssh config
// file naming it "box": ssh reaches it through socat run in that
// namespace (ProxyCommand), and the namespace's name.
func sshBox(t *testing.T) (string, string) {
	t.Helper()
	sshd := "/usr/sbin/sshd"
	if _, err := os.Stat(sshd); err != nil {
		t.Fatalf("no %s: make deps installs openssh-server", sshd)
	}
	if _, err := exec.LookPath("socat"); err != nil {
		t.Fatalf("no socat: make deps installs it")
	}
	dir, err := os.MkdirTemp("", "lnk-sshbox-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	for _, k := range []string{"host", "client"} {
		if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", filepath.Join(dir, k)).CombinedOutput(); err != nil {
			t.Fatalf("ssh-keygen: %v: %s", err, out)
		}
	}
	clientPub, _ := os.ReadFile(filepath.Join(dir, "client.pub"))
	hostPub, _ := os.ReadFile(filepath.Join(dir, "host.pub"))
	os.WriteFile(filepath.Join(dir, "authorized_keys"), clientPub, 0o644)
	ns := "lnk-sshbox-" + filepath.Base(dir)[len("lnk-sshbox-"):]
	if out, err := exec.Command("ip", "netns", "add", ns).CombinedOutput(); err != nil {
		testenv.Require(t, false, "ip netns add ("+strings.TrimSpace(string(out))+")")
	}
	t.Cleanup(func() { exec.Command("ip", "netns", "delete", ns).Run() })
	if out, err := exec.Command("ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up").CombinedOutput(); err != nil {
		t.Fatalf("loopback up in %s: %v: %s", ns, err, out)
	}
	// The namespace is the test's own: a fixed port is free there.
	const port = 2222
	cfg := strings.Join([]string{
		"Port " + strconv.Itoa(port), "ListenAddress 127.0.0.1", "HostKey " + filepath.Join(dir, "host"),
		"PidFile " + filepath.Join(dir, "sshd.pid"), "AuthorizedKeysFile " + filepath.Join(dir, "authorized_keys"),
		"StrictModes no",
		// lnktest's account is locked (no password): with PAM, sshd leaves
		// the account check to it, which lets a key in.
		"UsePAM yes", "PasswordAuthentication no", "KbdInteractiveAuthentication no",
		"AllowUsers lnktest", "PermitRootLogin no", "X11Forwarding no", "AllowTcpForwarding no", "PrintMotd no",
	}, "\n") + "\n"
	os.WriteFile(filepath.Join(dir, "sshd_config"), []byte(cfg), 0o644)
	// sshd's privilege separation folder, made as its package would.
	os.MkdirAll("/run/sshd", 0o755)
	// ip netns exec execs sshd itself in the namespace: cmd.Process is
	// sshd's.
	cmd := exec.Command("ip", "netns", "exec", ns, sshd, "-D", "-e", "-f", filepath.Join(dir, "sshd_config"))
	var logs bytes.Buffer
	cmd.Stderr = &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("sshd's log:\n%s", logs.String())
		}
	})
	hostKey := strings.Fields(string(hostPub))
	os.WriteFile(filepath.Join(dir, "known_hosts"), []byte("[127.0.0.1]:"+strconv.Itoa(port)+" "+hostKey[0]+" "+hostKey[1]+"\n"), 0o644)
	client := strings.Join([]string{
		"Host box", "  HostName 127.0.0.1", "  Port " + strconv.Itoa(port), "  User lnktest",
		"  IdentityFile " + filepath.Join(dir, "client"), "  IdentitiesOnly yes",
		"  ProxyCommand ip netns exec " + ns + " socat STDIO TCP:127.0.0.1:" + strconv.Itoa(port),
		"  UserKnownHostsFile " + filepath.Join(dir, "known_hosts"), "  StrictHostKeyChecking yes", "  GlobalKnownHostsFile /dev/null",
	}, "\n") + "\n"
	conf := filepath.Join(dir, "ssh_config")
	os.WriteFile(conf, []byte(client), 0o600)
	for i := 0; ; i++ {
		if exec.Command("ssh", "-F", conf, "-o", "BatchMode=yes", "box", "true").Run() == nil {
			break
		}
		if i == 50 {
			t.Fatalf("sshd on port %d never let lnktest in: %s", port, logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	// sshd runs in the namespace, not on this machine's own network.
	if out, err := exec.Command("ip", "netns", "identify", strconv.Itoa(cmd.Process.Pid)).Output(); err != nil || strings.TrimSpace(string(out)) != ns {
		t.Fatalf("sshd (pid %d) is in network namespace %q (%v), want %s", cmd.Process.Pid, out, err, ns)
	}
	return conf, ns
}

// TestMoveOverSSH first moves an agent that does not answer there (its
// port held on the box): nothing of it is kept there, and it stays here
// whole with its key and no moved note. Then it moves the agent (not main, which runs Link Harness
// without a block of ports) from root's HOME to lnktest's over a
// real sshd on the loopback of a network namespace of its own: it
// arrives with its files and conversation, runs there with its ID, and here its own folder and Home are in
// History, its Config and unit file gone, its secret deleted (arrived
// there), the moved note written,
// and lnk agent start refuses its ID; moving it again is refused.
func TestMoveOverSSH(t *testing.T) {
	testenv.RequireRoot(t, "runs an sshd of its own that lets lnktest in")
	u, err := user.Lookup("lnktest")
	if err != nil {
		t.Fatalf("no user lnktest: %v", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	conf, ns := sshBox(t)
	lnk := testenv.Bin(t, "lnk")
	from := testenv.Home(t)
	to, err := os.MkdirTemp("", "lnk-move-to-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(to, 0o700)
	os.Chown(to, uid, gid)
	remote := "HOME=" + to + " " + lnk
	t.Cleanup(func() {
		exec.Command("ssh", "-F", conf, "box", remote, "agent", "stop", "aide").Run()
		exec.Command("ssh", "-F", conf, "box", remote, "kernel", "stop").Run()
		endProcsOf(to) // the kernel and built-in model lnk started there
		os.RemoveAll(to)
	})
	a, err := caps.CreateAgent(from, "aide")
	if err != nil {
		t.Fatal(err)
	}
	lf := caps.Layout{Home: from}
	os.WriteFile(filepath.Join(lf.FilesDir("aide"), "work", "report.md"), []byte("# report\n"), 0o640)
	os.WriteFile(filepath.Join(lf.OwnDir("aide"), "chats", "c.jsonl"), []byte("{\"t\":\"hi\"}\n"), 0o600)
	v, _ := secret.FromString("aide-model-key")
	if err := secrets.Update(from, func(f *secrets.File) error {
		f.Secrets["AGENT_AIDE_MODEL_KEY"] = &secrets.Entry{Value: v, Agents: []string{a.ID}}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	unit := filepath.Join(from, ".config", "systemd", "user", "lnk-agent-"+a.ID+".service")
	os.MkdirAll(filepath.Dir(unit), 0o700)
	os.WriteFile(unit, []byte("[Service]\n"), 0o600)
	// First, the agent does not answer there: another program holds its
	// first port on the box's loopback, so its start there is refused.
	// Nothing of it is kept there, and here it stays whole, paused.
	hold := exec.Command("ip", "netns", "exec", ns, "socat", "TCP-LISTEN:"+strconv.Itoa(agentlife.PortBase)+",bind=127.0.0.1,reuseaddr,fork", "/dev/null")
	if err := hold.Start(); err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		out, _ := exec.Command("ip", "netns", "exec", ns, "ss", "-Hltn", "sport = :"+strconv.Itoa(agentlife.PortBase)).Output()
		if len(bytes.TrimSpace(out)) > 0 {
			break
		}
		if i == 100 {
			t.Fatal("socat never listened in the box")
		}
		time.Sleep(20 * time.Millisecond)
	}
	code, out, errs := runLnk(t, "agent", "move", "aide", "--ssh", "box", "--ssh-config", conf, "--remote-lnk", remote)
	hold.Process.Kill()
	hold.Wait()
	if code != ExitFailure || !strings.Contains(errs, "nothing of it is kept") {
		t.Fatalf("a move whose agent does not answer there: code %d\n%s\n%s", code, out, errs)
	}
	lt := caps.Layout{Home: to}
	if ents, _ := os.ReadDir(lt.Agents()); len(ents) != 0 {
		for _, e := range ents {
			if e.Name() != ".moving" {
				t.Errorf("a move whose agent did not answer left %s there", e.Name())
			}
		}
	}
	if _, err := os.Lstat(filepath.Join(lt.Agents(), ".moving", a.ID)); !os.IsNotExist(err) {
		t.Errorf("its staging folder is left there: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(to, ".lnk", "secrets.toml")); err == nil && strings.Contains(string(b), "AGENT_AIDE_MODEL_KEY") {
		t.Error("its key is left there")
	}
	if _, err := os.Stat(lf.OwnDir("aide")); err != nil {
		t.Fatalf("the agent is not here whole: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(from, ".lnk", "moved", a.ID+".toml")); !os.IsNotExist(err) {
		t.Errorf("a moved note was written: %v", err)
	}
	if here, err := secrets.Load(from); err != nil || here.Secrets["AGENT_AIDE_MODEL_KEY"] == nil {
		t.Fatalf("its key is not here: %v", err)
	} else {
		here.Destroy()
	}

	// The move, its port free there.
	code, out, errs = runLnk(t, "agent", "move", "aide", "--ssh", "box", "--ssh-config", conf, "--remote-lnk", remote)
	if code != ExitOK || !strings.Contains(out, "runs there") {
		t.Fatalf("move: code %d\n%s\n%s", code, out, errs)
	}
	if b, err := os.ReadFile(filepath.Join(lt.OwnDir("aide"), "chats", "c.jsonl")); err != nil || !strings.Contains(string(b), "hi") {
		t.Errorf("the conversation there: %q %v", b, err)
	}
	if b, err := os.ReadFile(filepath.Join(lt.FilesDir("aide"), "work", "report.md")); err != nil || string(b) != "# report\n" {
		t.Errorf("the file there: %q %v", b, err)
	}
	if _, err := os.Lstat(lf.AgentDir("aide")); !os.IsNotExist(err) {
		t.Errorf("the agent is still here: %v", err)
	}
	if _, err := os.Stat(filepath.Join(from, ".lnk", "moved", a.ID+".toml")); err != nil {
		t.Errorf("no moved note: %v", err)
	}
	hist, _ := filepath.Glob(filepath.Join(lf.HistoryAgents(), "aide-*", "Home", "work", "report.md"))
	if len(hist) != 1 {
		t.Errorf("the Home is not kept in History: %v", hist)
	}
	if cfg, _ := filepath.Glob(filepath.Join(lf.HistoryAgents(), "aide-*", "Config")); len(cfg) != 0 {
		t.Errorf("its Config is kept: %v", cfg)
	}
	if _, err := os.Lstat(unit); !os.IsNotExist(err) {
		t.Errorf("its unit file is still here: %v", err)
	}
	here, err := secrets.Load(from)
	if err != nil {
		t.Fatal(err)
	}
	if here.Secrets["AGENT_AIDE_MODEL_KEY"] != nil {
		t.Error("its key is still here")
	}
	here.Destroy()
	if b, err := os.ReadFile(filepath.Join(to, ".lnk", "secrets.toml")); err != nil || !strings.Contains(string(b), "AGENT_AIDE_MODEL_KEY") {
		t.Errorf("its key did not arrive there: %v", err)
	}
	// A copy made here again under the same ID is refused at start.
	if _, _, err := caps.AdoptAgent(from, a, nil); err != nil {
		t.Fatal(err)
	}
	code, _, errs = runLnk(t, "agent", "start", "aide")
	if code != ExitRefused || !strings.Contains(errs, "moved-away") {
		t.Errorf("start of the moved ID: code %d, %s", code, errs)
	}
}

// endProcsOf ends the processes (any uid's: the test runs as root) whose
// HOME is home, a folder this test made: what lnk started on demand
// there as lnktest. SIGTERM, then SIGKILL after 5 s.
func endProcsOf(home string) {
	want := []byte("HOME=" + home + "\x00")
	var pids []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err == nil && (bytes.HasPrefix(env, want) || bytes.Contains(env, append([]byte{0}, want...))) {
			pids = append(pids, pid)
		}
	}
	for _, p := range pids {
		syscall.Kill(p, syscall.SIGTERM)
	}
	deadline := time.Now().Add(5 * time.Second)
	for _, p := range pids {
		for syscall.Kill(p, 0) == nil && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		syscall.Kill(p, syscall.SIGKILL)
	}
}
