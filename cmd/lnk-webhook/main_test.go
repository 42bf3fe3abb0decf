package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"lnk.dev/lnk/helpers/keybroker/webhookcheck"
	"lnk.dev/lnk/internal/testenv"
)

// run starts the built lnk-webhook with stdin and the request on fd 3.
func run(t *testing.T, stdin string, req []byte) (*exec.Cmd, *bytes.Buffer, *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(testenv.Bin(t, "lnk-webhook"))
	cmd.Env = []string{}
	cmd.Stdin = strings.NewReader(stdin)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.ExtraFiles = []*os.File{r}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r.Close()
	if req != nil {
		w.Write(req)
		w.Close()
		return cmd, &out, nil
	}
	return cmd, &out, w
}

// TestChecksGitHubsExample: the real program, given GitHub's documented
// example, answers 200 with the delivery's id; given another body, 401.
func TestChecksGitHubsExample(t *testing.T) {
	for body, want := range map[string]int{"Hello, World!": 200, "Hello, World?": 401} {
		var b bytes.Buffer
		webhookcheck.WriteRequest(&b, webhookcheck.Request{Method: "POST", Body: []byte(body), Headers: map[string]string{
			"x-hub-signature-256": "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17",
			"x-github-delivery":   "d-1"}})
		cmd, out, _ := run(t, "It's a Secret to Everybody\n", b.Bytes())
		if err := cmd.Wait(); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		var v webhookcheck.Verdict
		if err := json.Unmarshal(out.Bytes(), &v); err != nil || v.Status != want {
			t.Fatalf("%q: %s, want %d", body, out, want)
		}
	}
}

// TestConfinedBeforeItReads: while it waits for the post, the program
// already runs under seccomp's filter with no_new_privs (so no exec, no
// socket, as its policy says), before it has read a byte.
func TestConfinedBeforeItReads(t *testing.T) {
	cmd, out, w := run(t, "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw\n", nil)
	defer func() { w.Close(); cmd.Wait() }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, err := os.ReadFile("/proc/" + itoa(cmd.Process.Pid) + "/status")
		if err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		if strings.Contains(string(st), "Seccomp:\t2") && strings.Contains(string(st), "NoNewPrivs:\t1") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not confined while waiting for the post:\n%s", st)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
