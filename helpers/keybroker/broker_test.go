package keybroker

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/helpers/keybroker/proof"
	"lnk.dev/lnk/helpers/keybroker/secrets"
	"lnk.dev/lnk/internal/brokerproc"
	"lnk.dev/lnk/internal/sealedgrant"
	"lnk.dev/lnk/internal/secret"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/internal/wire"
)

const (
	agentA = "0123456789abcdef0123456789abcdef"
	agentB = "fedcba9876543210fedcba9876543210"
	// Values no log line, error or child's argv or environment may hold.
	sealedValue = "ghp_SEALED-value-1a2b3c4d5e"
	plainValue  = "sk-PLAIN-value-6f7a8b9c0d"
)

type started struct {
	home string
	proc *brokerproc.Proc
	kc   *Client
	raw  *wire.Client
	log  *testenv.SyncBuffer
}

func newValue(t *testing.T, s string) *secret.Value {
	v, err := secret.FromString(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// startBroker keeps three secrets, starts the real lnk-keybroker as the
// kernel does, and returns a client on its channel.
func startBroker(t *testing.T, args ...string) *started {
	t.Helper()
	bin := testenv.Bin(t, "lnk-keybroker") // before Home: a build under it has no Go cache
	home := testenv.Home(t)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(secrets.Create(home, "GITHUB_TOKEN", newValue(t, sealedValue), "api.github.com"))
	must(secrets.Create(home, "AGENT_MAIN_MODEL_KEY", newValue(t, plainValue), ""))
	must(secrets.Create(home, "OTHER_TOKEN", newValue(t, "other-value"), "api.example.com"))
	must(secrets.Grant(home, "GITHUB_TOKEN", agentA))
	must(secrets.Grant(home, "AGENT_MAIN_MODEL_KEY", agentA))
	must(secrets.Grant(home, "OTHER_TOKEN", agentB))

	files, err := StartFiles(home)
	must(err)
	if len(files) != 2 {
		t.Fatalf("StartFiles gave %d files", len(files))
	}
	defer wire.CloseFiles(files)

	log := &testenv.SyncBuffer{}
	p, err := brokerproc.Start(brokerproc.Options{Path: bin, Args: args, Files: files, Log: log})
	must(err)
	t.Cleanup(p.Kill)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the broker's log:\n%s", log.String())
		}
	})
	raw, err := wire.NewClient(p.Chan)
	must(err)
	t.Cleanup(func() { raw.Close() })
	return &started{home: home, proc: p, kc: NewClient(raw), raw: raw, log: log}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

// TestAgentKeysAndProofs: a key made for this start is written 0600 in a
// 0700 folder, the broker's proofs check against it, and a proof for
// another agent, owner or purpose proves nothing.
func TestAgentKeysAndProofs(t *testing.T) {
	s := startBroker(t)
	c := ctx(t)
	file, err := s.kc.MakeAgentKey(c, agentA)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(s.home, ".lnk", "agents", file)
	st, err := os.Lstat(path)
	if err != nil || st.Mode().Perm() != 0o600 || !st.Mode().IsRegular() {
		t.Fatalf("key file %s: %v %v", path, st, err)
	}
	if dst, _ := os.Lstat(filepath.Dir(path)); dst.Mode().Perm() != 0o700 {
		t.Fatalf("keys folder mode %v", dst.Mode())
	}
	var kf KeyFile
	data, _ := os.ReadFile(path)
	if err := json.Unmarshal(data, &kf); err != nil || kf.AgentID != agentA {
		t.Fatalf("key file: %v %+v", err, kf)
	}
	key, _ := base64.RawURLEncoding.DecodeString(kf.Key)

	pc := proof.Context{AgentID: agentA, Owner: "alice", Purpose: "endpoint"}
	ch := proof.NewChallenge()
	// The harness proves with the key from its file; the broker checks.
	ans, _ := proof.Answer(key, pc, ch)
	if ok, err := s.kc.CheckProof(c, pc, ch, ans[:]); err != nil || !ok {
		t.Fatalf("a right proof refused: %v %v", ok, err)
	}
	// The broker proves; the checker holding the file's key agrees.
	bans, err := s.kc.Prove(c, pc, ch)
	if err != nil || !bytes.Equal(bans, ans[:]) {
		t.Fatalf("broker's answer differs: %v", err)
	}
	for _, other := range []proof.Context{
		{AgentID: agentB, Owner: "alice", Purpose: "endpoint"},
		{AgentID: agentA, Owner: "bob", Purpose: "endpoint"},
		{AgentID: agentA, Owner: "alice", Purpose: "bridge"},
	} {
		ok, err := s.kc.CheckProof(c, other, ch, ans[:])
		if ok {
			t.Errorf("proof for %+v held for %+v", pc, other)
		}
		if other.AgentID == agentB && !errors.Is(err, ErrMissing) {
			t.Errorf("an agent without a key this start: %v", err)
		}
	}
	if _, err := s.kc.Prove(c, pc, [32]byte{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.kc.MakeAgentKey(c, "../../etc"); !errors.Is(err, ErrRefused) {
		t.Fatalf("a path for an agent ID: %v", err)
	}
	// A new start makes a new key: the old proof no longer holds.
	if _, err := s.kc.MakeAgentKey(c, agentA); err != nil {
		t.Fatal(err)
	}
	if ok, _ := s.kc.CheckProof(c, pc, ch, ans[:]); ok {
		t.Fatal("the previous start's key still proves")
	}
	if err := s.kc.DropAgentKey(c, agentA); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("key file after drop: %v", err)
	}
	if _, err := s.kc.CheckProof(c, pc, ch, ans[:]); !errors.Is(err, ErrMissing) {
		t.Fatalf("proof after drop: %v", err)
	}
	if strings.Contains(s.log.String(), kf.Key) {
		t.Fatal("the broker logged a key")
	}
}

// TestKeyFileThroughALinkIsRefused: a key file swapped for a link is
// never read through.
func TestKeyFileThroughALinkIsRefused(t *testing.T) {
	s := startBroker(t)
	c := ctx(t)
	target := filepath.Join(s.home, "planted.json")
	os.WriteFile(target, []byte(`{"agent_id":"`+agentB+`","key":"`+base64.RawURLEncoding.EncodeToString(make([]byte, 32))+`","made":"x"}`), 0o600)
	os.Symlink(target, filepath.Join(s.home, ".lnk", "agents", ".keys", agentB+".json"))
	pc := proof.Context{AgentID: agentB, Owner: "alice", Purpose: "endpoint"}
	ch := proof.NewChallenge()
	ans, _ := proof.Answer(make([]byte, 32), pc, ch)
	if ok, err := s.kc.CheckProof(c, pc, ch, ans[:]); ok || err == nil {
		t.Fatalf("a planted link's key proved: %v %v", ok, err)
	}
}

// TestSealedSecretsGoToTheNetbrokerAlone: on the netbroker's channel,
// bound to agent A by whoever handed it, a sealed secret granted to A
// comes in a sealed memfd; A's plain one, another agent's, a missing one
// and anything asked for another agent ID (B's own secret included) all
// get one and the same refusal, so the asker learns no secret's
// existence; on the kernel's channel the request closes the channel.
func TestSealedSecretsGoToTheNetbrokerAlone(t *testing.T) {
	s := startBroker(t)
	c := ctx(t)
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	theirs := os.NewFile(uintptr(fds[0]), "net-broker-end")
	ours := os.NewFile(uintptr(fds[1]), "net-netbroker-end")
	names, err := s.kc.NetChannel(c, agentA, theirs)
	if err != nil {
		t.Fatal(err)
	}
	theirs.Close()
	if fmt.Sprint(names) != "[GITHUB_TOKEN]" {
		t.Fatalf("the channel serves %v, want agent A's sealed secrets alone", names)
	}
	ncl, err := wire.NewClient(ours)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ncl.Close() })
	nc := sealedgrant.NewNetClient(ncl)
	v, host, err := nc.SealedSecret(c, agentA, "GITHUB_TOKEN")
	if err != nil {
		t.Fatal(err)
	}
	if string(v.Bytes()) != sealedValue || host != "api.github.com" {
		t.Fatalf("sealed secret: %d bytes for %q", v.Len(), host)
	}
	v.Destroy()
	// The grant names no header: the value goes in Authorization alone.
	v, seal, err := nc.SealedGrant(c, agentA, "GITHUB_TOKEN")
	if err != nil || seal.Host != "api.github.com" || strings.Join(seal.Headers, ",") != "Authorization" {
		t.Fatalf("sealed grant: %+v %v", seal, err)
	}
	v.Destroy()
	refusals := []struct{ agent, name string }{
		{agentB, "OTHER_TOKEN"},          // B's own: the channel is A's
		{agentB, "GITHUB_TOKEN"},         // A's, asked as B
		{agentB, "NO_SUCH"},              // nobody's, asked as B
		{agentA, "AGENT_MAIN_MODEL_KEY"}, // kept plain
		{agentA, "OTHER_TOKEN"},          // another agent's
		{agentA, "NO_SUCH"},              // nobody's
		{"main", "GITHUB_TOKEN"},         // a name, not an ID
	}
	var said strings.Builder
	for _, r := range refusals {
		v, _, err := nc.SealedSecret(c, r.agent, r.name)
		if !errors.Is(err, ErrRefused) {
			v.Destroy()
			t.Errorf("%s for %s: %v, want refused", r.name, r.agent, err)
			continue
		}
		want := "keybroker: agent " + agentA + " holds no sealed secret " + r.name + " (lnk secret add NAME --agent AGENT grants one)"
		if err.Error() != want {
			t.Errorf("%s for %s: refused with %q, want the one refusal %q", r.name, r.agent, err, want)
		}
		said.WriteString(err.Error())
	}
	for _, v := range []string{sealedValue, plainValue, "other-value"} {
		if strings.Contains(said.String(), v) {
			t.Fatalf("a refusal holds a secret value: %s", said.String())
		}
	}
	// The kernel's channel has no such request: asking closes it.
	var reply SealedReply
	if _, err := s.raw.Call(c, SpecSealedSecret, &SealedReq{AgentID: agentA, Name: "GITHUB_TOKEN"}, &reply); err == nil {
		t.Fatal("the kernel's channel handed a sealed secret")
	}
	select {
	case <-s.proc.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("the broker kept serving after a request its table lacks")
	}
	checkNoValues(t, s)
}

// checkNoValues: no secret value in the broker's log (every refusal
// above is in it), its argv or its environment.
func checkNoValues(t *testing.T, s *started) {
	t.Helper()
	log := s.log.String()
	if !strings.Contains(log, "refused sealed.secret") {
		t.Fatalf("refusals were not logged:\n%s", log)
	}
	for _, v := range []string{sealedValue, plainValue, "other-value"} {
		if strings.Contains(log, v) {
			t.Fatalf("the broker's log holds a secret value:\n%s", log)
		}
	}
}

// TestNoValueInArgvOrEnvironment reads the running broker's argv and
// environment from /proc: neither holds a value (secrets travel in fds).
func TestNoValueInArgvOrEnvironment(t *testing.T) {
	s := startBroker(t)
	c := ctx(t)
	if _, err := s.kc.MakeAgentKey(c, agentA); err != nil { // the broker is up and serving
		t.Fatal(err)
	}
	pid := s.proc.Pid()
	for _, f := range []string{"cmdline", "environ"} {
		b, err := os.ReadFile(filepath.Join("/proc", itoa(pid), f))
		if errors.Is(err, os.ErrPermission) {
			continue // undumpable: not even the owner's other processes read it
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range []string{sealedValue, plainValue, "other-value"} {
			if bytes.Contains(b, []byte(v)) {
				t.Fatalf("/proc/%d/%s holds a secret value", pid, f)
			}
		}
	}
	status, err := os.ReadFile(filepath.Join("/proc", itoa(pid), "status"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(status), "Seccomp:\t2") || !strings.Contains(string(status), "NoNewPrivs:\t1") {
		t.Fatalf("the broker runs without its seccomp filter:\n%s", status)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestRunBrokerServesOneAgent: a run's broker (lnk-keybroker --agent A)
// binds its netbroker channel to A alone (one for B is refused) and
// serves A's sealed secret.
func TestRunBrokerServesOneAgent(t *testing.T) {
	refusing := startBroker(t, "--agent", agentA)
	s := startBroker(t, "--agent", agentA)
	c := ctx(t)
	pair := func() (*os.File, *os.File) {
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		return os.NewFile(uintptr(fds[0]), "broker-end"), os.NewFile(uintptr(fds[1]), "netbroker-end")
	}
	theirs, ours := pair()
	if _, err := refusing.kc.NetChannel(c, agentB, theirs); !errors.Is(err, ErrRefused) {
		t.Fatalf("agent A's broker bound a channel to agent B: %v", err)
	}
	theirs.Close()
	ours.Close()
	theirs, ours = pair()
	names, err := s.kc.NetChannel(c, agentA, theirs)
	theirs.Close()
	if err != nil || fmt.Sprint(names) != "[GITHUB_TOKEN]" {
		t.Fatalf("agent A's channel: %v %v", names, err)
	}
	ncl, err := wire.NewClient(ours)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ncl.Close() })
	v, _, err := sealedgrant.NewNetClient(ncl).SealedSecret(c, agentA, "GITHUB_TOKEN")
	if err != nil || string(v.Bytes()) != sealedValue {
		t.Fatalf("agent A's sealed secret: %v", err)
	}
	v.Destroy()
	if !strings.Contains(refusing.log.String(), "refused netbroker.channel: this broker serves agent "+agentA+" alone") {
		t.Fatalf("the refusal was not logged:\n%s", refusing.log.String())
	}
}
