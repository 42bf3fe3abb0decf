package kernel_test

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/kernel/client"
	"lnk.dev/lnk/kernel/proto"
)

// keyBrokerPID polls status until the key broker is up with a pid other
// than not.
func keyBrokerPID(t *testing.T, c *client.Client, not int) int {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, err := c.Status(ctx(t))
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range st.Brokers {
			if b.Name == "key" && b.PID != 0 && b.PID != not {
				return b.PID
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no key broker up (pid not %d) within 30 s: %+v", not, st.Brokers)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// The key broker makes an agent's key at its start and removes it at
// its end; killed, it comes back and serves the next start.
func TestAgentKeyLivesAsLongAsItsStart(t *testing.T) {
	testenv.Bin(t, "lnk-keybroker")
	home := testenv.Home(t)
	startKernel(t, home)
	c := connect(t, home)
	makeAgent(t, home, "main")
	first := keyBrokerPID(t, c, 0)
	const id = "0123456789abcdef0123456789abcdef"
	keyFile := filepath.Join(home, ".lnk", "agents", ".keys", id+".json")
	var r proto.StartReply
	if _, err := c.Call(ctx(t), proto.Start, &proto.StartRequest{Agent: "main", AgentID: id, Folders: []proto.Folder{}}, &r); err != nil {
		t.Fatal(err)
	}
	st, err := os.Lstat(keyFile)
	if err != nil || !st.Mode().IsRegular() || st.Mode().Perm() != 0o600 {
		t.Fatalf("the agent key after start: %v %v", st, err)
	}
	if _, err := c.Call(ctx(t), proto.End, &proto.EndRequest{Agent: "main", Start: r.Start}, &proto.EndReply{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(keyFile); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the agent key outlived its start: %v", err)
	}
	syscall.Kill(first, syscall.SIGKILL)
	keyBrokerPID(t, c, first)
	if _, err := c.Call(ctx(t), proto.Start, &proto.StartRequest{Agent: "main", AgentID: id, Folders: []proto.Folder{}}, &r); err != nil {
		t.Fatalf("start after the key broker's restart: %v", err)
	}
	if _, err := os.Lstat(keyFile); err != nil {
		t.Fatalf("no agent key after the restart: %v", err)
	}
	_, err = c.Call(ctx(t), proto.Start, &proto.StartRequest{Agent: "main", AgentID: "../../x", Folders: []proto.Folder{}}, &r)
	refusedWith(t, err, "32 lowercase hex")
}
