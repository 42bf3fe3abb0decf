package netbroker

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/helpers/keybroker/secrets"
	"lnk.dev/lnk/internal/testenv"
)

// modelNetnsEnv marks the test child that runs in user, network and
// mount namespaces of its own: its "internet" is one test host in a
// namespace of its own behind a veth pair (hostNet), whose name the
// child's /etc/hosts gives and whose certificate a test CA, put in place
// of /etc/ssl/certs, signs. Link's code is unchanged: lnk-netbroker
// resolves, judges and trusts exactly as it does for the owner.
const modelNetnsEnv = "LNK_NETBROKER_MODELNS"

const (
	modelHost     = "api.model.test"
	modelHostAddr = "203.0.113.10" // a public address, not the machine's own
	modelOurAddr  = "203.0.113.1"  // the child's end of the veth: its own
	modelKey      = "sk-model-REAL-key-8c1f2e0d4b7a9"
	plainToken    = "tok-plain-REAL-value-61d0e3a5"
)

// inModelNetns is inNetns for this file's test, with a mount namespace
// too, and none of TestMain's loopback addresses.
func inModelNetns(t *testing.T) bool {
	t.Helper()
	if os.Getenv(modelNetnsEnv) == "1" {
		return true
	}
	for _, p := range []string{"bwrap", "curl"} {
		_, err := exec.LookPath(p)
		testenv.Require(t, err == nil, p)
	}
	for _, p := range []string{"/etc/ssl/certs", "/etc/hosts"} {
		_, err := os.Stat(p) // the child mounts over them
		testenv.Require(t, err == nil, p)
	}
	// lnk finds the others beside itself: the child takes them from here.
	var bin string
	for _, b := range []string{"lnk", "lnk-init", "lnk-netbroker", "lnk-keybroker"} {
		bin = filepath.Dir(testenv.Bin(t, b))
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.count=1", "-test.v", "-test.timeout=4m")
	cmd.Env = append(os.Environ(), modelNetnsEnv+"=1", "LNK_BIN="+bin)
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNET | syscall.CLONE_NEWNS,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
		Pdeathsig:   syscall.SIGKILL,
	}
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		testenv.Require(t, false, "user, network and mount namespaces ("+err.Error()+")")
		return false
	}
	if err != nil || !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		t.Fatalf("in its namespaces: %v\n%s", err, out)
	}
	return false
}

// upstreamCall is what the model's host was sent.
type upstreamCall struct {
	Method, Path, Key, Auth string
	Body                    map[string]any
}

// The agent's model key through a real `lnk sandbox run --agent` (a real
// lnk-keybroker reading a real secrets file, a real lnk-netbroker and
// bubblewrap): a sandboxed curl posts to $LNK_SEALED_<model key>_URL
// with the placeholder as its key in x-api-key, the header the key's
// grant names (lnk secret create --header), and the model's host, over https at a
// public address, gets the real key and the request without its web
// search, code execution and MCP server; files, a batch and an image by
// URL are refused 403 and logged, and never reach the host; another
// sealed secret of the agent, to the same host, stays a plain sealed
// secret (its /v1/files passes). The key is in neither the sandbox's
// environment, its output nor any file but secrets.toml.
func TestModelKeyThroughSandboxRun(t *testing.T) {
	if !inModelNetns(t) {
		return
	}
	calls := modelHostInNetns(t)
	home := testenv.Home(t)
	keyName := ModelKeyName("demo")
	if keyName != secrets.AgentSecretName("demo", secrets.ModelKey) || keyName != "AGENT_DEMO_MODEL_KEY" {
		t.Fatalf("the model key's name: %q", keyName)
	}
	curl, _ := exec.LookPath("curl")
	lnkCLI(t, "", "agent", "create", "demo")
	lnkCLI(t, modelKey, "secret", "create", keyName, "--internet-host", modelHost, "--header", "x-api-key")
	lnkCLI(t, "", "secret", "add", keyName, "--agent", "demo")
	lnkCLI(t, plainToken, "secret", "create", "DEMO_TOKEN", "--internet-host", modelHost)
	lnkCLI(t, "", "secret", "add", "DEMO_TOKEN", "--agent", "demo")
	lnkCLI(t, "", "agent", "allow", "demo", "--command", curl)

	const tools = `"tools":[{"type":"web_search_20250305","name":"web_search"},{"type":"code_execution_20250522","name":"code_execution"},{"name":"get_weather","input_schema":{"type":"object"}}]`
	script := `M="$LNK_SEALED_` + keyName + `_URL"; K="$` + keyName + `"
ask() { name=$1; shift; echo "== $name"; curl -s -m 30 -w '\n== status %{http_code}\n' "$@"; }
ask messages -H "x-api-key: $K" -H 'content-type: application/json' "${M}v1/messages" -d '{"model":"m","messages":[{"role":"user","content":"hi"}],` + tools + `,"mcp_servers":[{"type":"url","url":"https://mcp.example/sse","name":"x"}]}'
ask models -H "x-api-key: $K" "${M}v1/models"
ask files -H "x-api-key: $K" "${M}v1/files" -F 'file=@/dev/null'
ask batch -H "x-api-key: $K" "${M}v1/messages/batches" -d '{"requests":[]}'
ask image -H "x-api-key: $K" "${M}v1/messages" -d '{"model":"m","messages":[{"role":"user","content":[{"type":"image","source":{"type":"url","url":"https://img.example/a.png"}}]}]}'
ask plain -H "Authorization: Bearer $DEMO_TOKEN" "${LNK_SEALED_DEMO_TOKEN_URL}v1/files"
echo "== env"; export -p
echo "== placeholder $K"
`
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, testenv.Bin(t, "lnk"), "sandbox", "run", "--agent", "demo", "--", "/bin/sh", "-c", script)
	cmd.WaitDelay = 30 * time.Second
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	answers := sections(string(out))
	placeholder := strings.TrimSpace(answers["placeholder"])
	if err != nil || !strings.HasPrefix(placeholder, "lnk-sealed-agent_demo_model_key-") {
		t.Fatalf("lnk sandbox run: %v\n%s\nstderr: %s", err, out, stderr.String())
	}
	status := func(name string) string {
		_, s, _ := strings.Cut(answers[name], "\n== status ")
		return strings.TrimSpace(s)
	}
	for name, want := range map[string]string{"messages": "200", "models": "200", "files": "403", "batch": "403", "image": "403", "plain": "200"} {
		if got := status(name); got != want {
			t.Errorf("%s: status %s, want %s: %q", name, got, want, answers[name])
		}
	}
	if !strings.Contains(answers["files"], "not an inference call") || !strings.Contains(answers["batch"], "not an inference call") || !strings.Contains(answers["image"], "fetch a URL") {
		t.Errorf("the refusals do not say why: %q %q %q", answers["files"], answers["batch"], answers["image"])
	}
	// The host echoed the key it got: the sandbox sees the placeholder.
	if !strings.Contains(answers["messages"], `"key":"`+placeholder+`"`) {
		t.Errorf("the answer, scrubbed: %q", answers["messages"])
	}

	got := calls()
	byPath := map[string]upstreamCall{}
	for _, c := range got {
		byPath[c.Method+" "+c.Path] = c
	}
	if len(got) != 3 {
		t.Errorf("the model's host was sent %d requests, want 3 (messages, models, the plain secret's): %+v", len(got), got)
	}
	msg, ok := byPath["POST /v1/messages"]
	if !ok || msg.Key != modelKey {
		t.Fatalf("the model's host did not get the real key on /v1/messages: %+v", got)
	}
	if _, ok := msg.Body["mcp_servers"]; ok {
		t.Errorf("mcp_servers reached the provider: %v", msg.Body)
	}
	if tl, _ := msg.Body["tools"].([]any); len(tl) != 1 || tl[0].(map[string]any)["name"] != "get_weather" {
		t.Errorf("the provider's own tools reached it: %v", msg.Body["tools"])
	}
	if m := byPath["GET /v1/models"]; m.Key != modelKey {
		t.Errorf("/v1/models: %+v", m)
	}
	if p := byPath["GET /v1/files"]; p.Auth != "Bearer "+plainToken {
		t.Errorf("the plain sealed secret's /v1/files: %+v", p)
	}

	for _, v := range []string{modelKey, plainToken} {
		if strings.Contains(string(out), v) {
			t.Errorf("a value reached the sandbox (its environment or output):\n%s", out)
		}
	}
	if !strings.Contains(answers["env"], keyName+"='"+placeholder+"'") && !strings.Contains(answers["env"], keyName+"="+placeholder) {
		t.Errorf("the sandbox's environment lacks the placeholder: the search is blind:\n%s", answers["env"])
	}
	filepath.WalkDir(home, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() || p == filepath.Join(home, ".lnk", "secrets.toml") {
			return nil
		}
		if b, err := os.ReadFile(p); err == nil && (strings.Contains(string(b), modelKey) || strings.Contains(string(b), placeholder)) {
			t.Errorf("the key or its placeholder is in %s", p)
		}
		return nil
	})
	checkModelLog(t, home, placeholder)
}

// checkModelLog: the wire's log has each refusal once, with its reason,
// and the passed call with what was removed; never a value, the
// placeholder (a header's value) or a route's path.
func checkModelLog(t *testing.T, home, placeholder string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(home, ".lnk", "log", "audit.log"))
	if err != nil {
		t.Fatal(err)
	}
	log := string(b)
	for _, never := range []string{modelKey, plainToken, placeholder, "/_link/", "/v1/"} {
		if strings.Contains(log, never) {
			t.Errorf("the wire's log holds %q:\n%s", never, log)
		}
	}
	for what, n := range map[string]int{"not an inference call": 2, "fetch a URL": 1, "a model's key: inference only; 3 provider tools removed": 1} {
		if got := strings.Count(log, what); got != n {
			t.Errorf("the wire's log has %q %d times, want %d:\n%s", what, got, n, log)
		}
	}
}

// modelHostInNetns makes the child's mounts and network and serves the
// model's host: https on modelHostAddr:443, its certificate signed by a
// CA the child's /etc/ssl/certs holds alone. It returns what the host
// was sent so far.
func modelHostInNetns(t *testing.T) func() []upstreamCall {
	t.Helper()
	caPEM, leaf := testCA(t, modelHost)
	dir := t.TempDir()
	certs := filepath.Join(dir, "certs")
	hosts := filepath.Join(dir, "hosts")
	must(t, os.Mkdir(certs, 0o755))
	must(t, os.WriteFile(filepath.Join(certs, "ca-certificates.crt"), caPEM, 0o644))
	must(t, os.WriteFile(hosts, []byte("127.0.0.1 localhost\n::1 localhost\n"+modelHostAddr+" "+modelHost+"\n"), 0o644))
	must(t, unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""))
	must(t, unix.Mount(certs, "/etc/ssl/certs", "", unix.MS_BIND, ""))
	must(t, unix.Mount(hosts, "/etc/hosts", "", unix.MS_BIND, ""))
	must(t, ifaceUp("lo", ""))
	ln, err := hostNet(modelOurAddr, modelHostAddr, 443)
	must(t, err)
	var mu sync.Mutex
	var calls []upstreamCall
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := upstreamCall{Method: r.Method, Path: r.URL.Path, Key: r.Header.Get("X-Api-Key"), Auth: r.Header.Get("Authorization")}
		b, _ := io.ReadAll(r.Body)
		json.Unmarshal(b, &c.Body)
		mu.Lock()
		calls = append(calls, c)
		mu.Unlock()
		fmt.Fprintf(w, `{"host":%q,"key":%q}`, r.Host, c.Key)
	}))
	srv.Listener = ln
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{leaf}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return func() []upstreamCall {
		mu.Lock()
		defer mu.Unlock()
		return append([]upstreamCall(nil), calls...)
	}
}

// testCA makes a CA and a certificate it signs for host.
func testCA(t *testing.T, host string) ([]byte, tls.Certificate) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must(t, err)
	now := time.Now()
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "lnk test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	must(t, err)
	ca, err = x509.ParseCertificate(caDER)
	must(t, err)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must(t, err)
	leaf := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: host}, DNSNames: []string{host},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, leaf, ca, &key.PublicKey, caKey)
	must(t, err)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// lnkCLI runs lnk (HOME is testenv.Home's) with stdin, failing t if it
// fails.
func lnkCLI(t *testing.T, stdin string, args ...string) {
	t.Helper()
	cmd := exec.Command(testenv.Bin(t, "lnk"), args...)
	cmd.Stdin = strings.NewReader(stdin)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("lnk %v: %v\n%s", args, err, out)
	}
}

// sections splits the script's output at its "== name" lines.
func sections(out string) map[string]string {
	m := map[string]string{}
	name := ""
	for _, line := range strings.SplitAfter(out, "\n") {
		if n, ok := strings.CutPrefix(line, "== "); ok && !strings.HasPrefix(n, "status ") {
			name, _, _ = strings.Cut(strings.TrimSpace(n), " ")
			if rest, ok := strings.CutPrefix(strings.TrimSpace(n), name+" "); ok {
				m[name] = rest
			}
			continue
		}
		m[name] += line
	}
	return m
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
