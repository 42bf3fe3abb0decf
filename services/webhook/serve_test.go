package webhook

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	scheme "lnk.dev/lnk/helpers/keybroker/webhook"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/services/harness/endpoint"
)

// TestServeEndToEnd: lnk agent webhook serve, the real lnk-webhook, the
// agent's real way in (reached from serve's own process, proved with the
// way-in key) and the harness's real endpoint: a signed post reaches the
// agent as the webhook's stranger after the endpoint's proof, 202; an
// unsigned one never does.
func TestServeEndToEnd(t *testing.T) {
	lnk := testenv.Bin(t, "lnk")
	testenv.Bin(t, "lnk-webhook")
	a := testAgent(t)
	added, err := a.Add("ci", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	defer added.Secret.Destroy()
	tr := &turner{release: make(chan struct{}), ended: make(chan struct{}, 4)}
	close(tr.release)
	startHarness(t, a, testKey(7), testKey(7), tr)
	openWayIn(t, a)
	var logs testenv.SyncBuffer
	cmd := exec.Command(lnk, "agent", "webhook", "serve", "helper")
	cmd.Env = append(os.Environ(), "HOME="+a.Home)
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() }()

	url := fmt.Sprintf("http://127.0.0.1:%d/h/%s", added.Port, added.Hook.ID)
	k, _ := scheme.ParseSecret(append([]byte(nil), added.Secret.Bytes()...))
	defer k.Destroy()
	post := func(signed bool, id string) int {
		body := []byte(`{"ref":"main"}`)
		req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if signed {
			ts := time.Now().Unix()
			req.Header.Set("webhook-id", id)
			req.Header.Set("webhook-timestamp", strconv.FormatInt(ts, 10))
			req.Header.Set("webhook-signature", scheme.Sign(k, id, ts, body))
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	deadline := time.Now().Add(10 * time.Second)
	for post(false, "") == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("serve never listened:\n%s", logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	want(t, "unsigned", post(false, ""), 401)
	// 127.0.0.1 alone: another loopback address at the same port finds
	// nothing listening.
	if c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.2:%d", added.Port), time.Second); err == nil {
		c.Close()
		t.Fatal("the listener answers on 127.0.0.2: it listens on more than 127.0.0.1")
	}
	want(t, "signed", post(true, "e2e-1"), 202)
	if got := tr.messages(); len(got) != 1 || got[0] != (endpoint.Message{Thread: "webhook:ci", From: "stranger:webhook:ci", Text: `{"ref":"main"}`}) {
		t.Fatalf("the harness got %+v\n%s", got, logs.String())
	}
}
