package memsock

import (
	"bufio"
	"context"
	"net"
	"path/filepath"
	"strings"
	"testing"
)

// answering listens on a socket of this uid and answers each need line
// with answer; with retire it stops listening after the first.
func answering(t *testing.T, answer string, retire bool) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), SocketName)
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			line, _ := bufio.NewReader(c).ReadString('\n')
			if line == NeedPrefix+"ada\n" {
				if retire {
					l.Close()
				}
				c.Write([]byte(answer))
			}
			c.Close()
		}
	}()
	return sock
}

// Need: a service serving the agent, or one older than the need line
// (it refuses it as a bad first line), leaves the session to go on; one
// retiring is waited for until it no longer listens; nothing listening
// is no error; any other answer is.
func TestNeed(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		answer string
		retire bool
		ok     bool
	}{
		{"served\n", false, true},
		{"refused: the session's first line is not \"lnk-memory/1 agent \"<agent id>\n", false, true},
		{"retiring\n", true, true},
		{"maybe\n", false, false},
		{"", false, false},
	} {
		sock := answering(t, c.answer, c.retire)
		err := Need(ctx, sock, "ada")
		if (err == nil) != c.ok {
			t.Errorf("answer %q: %v", c.answer, err)
		}
		if c.retire && err == nil {
			if conn, err := net.Dial("unix", sock); err == nil {
				conn.Close()
				t.Errorf("Need returned while the retiring service still listens")
			}
		}
	}
	if err := Need(ctx, filepath.Join(t.TempDir(), SocketName), "ada"); err != nil {
		t.Errorf("nothing listening: %v", err)
	}
	if err := Need(ctx, filepath.Join(t.TempDir(), SocketName), "ADA"); err == nil || !strings.Contains(err.Error(), "not an agent ID") {
		t.Errorf("a bad ID: %v", err)
	}
}
