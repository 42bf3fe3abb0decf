package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"lnk.dev/lnk/internal/testenv"
)

// peer runs testdata/npm/peer.js, the npm package standardwebhooks.
func peer(t *testing.T, req map[string]any) string {
	t.Helper()
	node, err := exec.LookPath("node")
	_, modErr := os.Stat("testdata/npm/node_modules/standardwebhooks")
	testenv.Require(t, err == nil && modErr == nil, "node and the npm package standardwebhooks (make deps installs them)")
	in, _ := json.Marshal(req)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join("testdata", "npm", "peer.js"))
	cmd.Dir = "."
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node peer: %v\n%s", err, stderr.Bytes())
	}
	return string(out)
}

// TestNpmPeerSignsGoVerifies and the reverse: the npm package
// standardwebhooks and this package agree, now, both ways, and each
// refuses the other's signature over another body.
func TestNpmPeer(t *testing.T) {
	key, _ := NewSecret()
	text, _ := FormatSecret(key)
	defer text.Destroy()
	now := time.Now()
	ts := now.Unix()
	body := `{"event":"push","n":1}`
	id := "msg_" + strconv.FormatInt(now.UnixNano(), 36)

	sig := peer(t, map[string]any{"op": "sign", "secret": string(text.Bytes()), "id": id, "timestamp": ts, "body": body})
	if err := Verify(Keys{Current: key}, Headers{id, strconv.FormatInt(ts, 10), sig}, []byte(body), now); err != nil {
		t.Fatalf("Go refused npm's signature %q: %v", sig, err)
	}
	if err := Verify(Keys{Current: key}, Headers{id, strconv.FormatInt(ts, 10), sig}, []byte(body+" "), now); err == nil {
		t.Fatal("Go took npm's signature over another body")
	}

	ours := Sign(key, id, ts, []byte(body))
	req := map[string]any{"op": "verify", "secret": string(text.Bytes()), "id": id, "timestamp": ts, "body": body, "signature": ours}
	if got := peer(t, req); got != "ok" {
		t.Fatalf("npm refused Go's signature: %s", got)
	}
	req["body"] = body + " "
	if got := peer(t, req); got == "ok" {
		t.Fatal("npm took Go's signature over another body")
	}
}
