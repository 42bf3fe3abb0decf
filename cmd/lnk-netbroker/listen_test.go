package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/helpers/netbroker"
	"lnk.dev/lnk/internal/landlock"
	"lnk.dev/lnk/internal/testenv"
)

// --listen-fd takes only a listening unix stream socket (or a TCP one
// on 127.0.0.1 alone, for a command with no sandbox: its acceptance is
// TestHarnessCommandsWithTheSandboxOff's), and after the
// grants only a strict netbroker.Told with a full secret; anything else
// is refused, said, before the proxy serves anything.
func TestListenFDRefusesWhatIsNotItsSocket(t *testing.T) {
	testenv.Require(t, landlock.ABI() >= 1, "landlock")
	home := testenv.Home(t)
	grants, _ := json.Marshal(netbroker.Grants{LocalhostPorts: []uint16{9}})
	told, _ := json.Marshal(netbroker.Told{Secret: netbroker.NewSecret()})
	listening := func(t *testing.T) *os.File {
		s, err := netbroker.Listen(home, "")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Remove)
		return s.File
	}
	for _, tc := range []struct {
		name, stdin, want string
		fd                func(t *testing.T) *os.File
	}{
		{"a pipe", string(grants) + string(told), "is no listening unix stream socket", func(t *testing.T) *os.File {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { r.Close(); w.Close() })
			return r
		}},
		{"a socket not listening", string(grants) + string(told), "is no listening unix stream socket", func(t *testing.T) *os.File {
			fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
			if err != nil {
				t.Fatal(err)
			}
			f := os.NewFile(uintptr(fd), "unbound")
			t.Cleanup(func() { f.Close() })
			return f
		}},
		{"a TCP socket on every address", string(grants) + string(told), "not bound to 127.0.0.1 alone", func(t *testing.T) *os.File {
			fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
			if err != nil {
				t.Fatal(err)
			}
			f := os.NewFile(uintptr(fd), "any")
			t.Cleanup(func() { f.Close() })
			if err := unix.Bind(fd, &unix.SockaddrInet4{}); err != nil {
				t.Fatal(err)
			}
			if err := unix.Listen(fd, 1); err != nil {
				t.Fatal(err)
			}
			return f
		}},
		{"no secret told", string(grants), "reading the secret and placeholders on stdin", listening},
		{"a short secret", string(grants) + `{"secret":"ab"}`, "is not 32 bytes of hex", listening},
		{"an unknown field", string(grants) + `{"secret":"` + netbroker.NewSecret() + `","socket":"/tmp/x"}`, "unknown field", listening},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(testenv.Bin(t, "lnk-netbroker"), "--home", home, "--listen-fd", "3")
			cmd.ExtraFiles = []*os.File{tc.fd(t)}
			cmd.Stdin = strings.NewReader(tc.stdin)
			var errb bytes.Buffer
			cmd.Stderr = &errb
			cmd.WaitDelay = 20 * time.Second
			err := cmd.Run()
			if err == nil || !strings.Contains(errb.String(), tc.want) {
				t.Fatalf("lnk-netbroker --listen-fd with %s: %v, said %q; want %q", tc.name, err, errb.String(), tc.want)
			}
		})
	}
}

// --tool-bridge-fd and --relay-fd take only a SOCK_SEQPACKET socket (the
// tool bridge's channel, the sandbox's relay channel; internal/connpass):
// a pipe, a stream socket or stderr is refused, said, before the proxy
// serves anything.
func TestChannelFDsRefuseWhatIsNotAChannel(t *testing.T) {
	testenv.Require(t, landlock.ABI() >= 1, "landlock")
	home := testenv.Home(t)
	grants, _ := json.Marshal(netbroker.Grants{})
	for _, tc := range []struct {
		name, fdArg, want string
		fd                func(t *testing.T) *os.File
	}{
		{"a pipe", "3", "fd 3 is no SOCK_SEQPACKET socket", func(t *testing.T) *os.File {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { r.Close(); w.Close() })
			return r
		}},
		{"a stream socket", "3", "fd 3 is no SOCK_SEQPACKET socket", func(t *testing.T) *os.File {
			fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
			if err != nil {
				t.Fatal(err)
			}
			unix.Close(fds[1])
			f := os.NewFile(uintptr(fds[0]), "stream")
			t.Cleanup(func() { f.Close() })
			return f
		}},
		{"stderr", "2", "is one of stdin, stdout or stderr", nil},
	} {
		for _, flag := range []string{"--tool-bridge-fd", "--relay-fd"} {
			t.Run(flag+" "+tc.name, func(t *testing.T) {
				cmd := exec.Command(testenv.Bin(t, "lnk-netbroker"), "--home", home, flag, tc.fdArg)
				if tc.fd != nil {
					cmd.ExtraFiles = []*os.File{tc.fd(t)}
				}
				cmd.Stdin = strings.NewReader(string(grants))
				var out, errb bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &errb
				cmd.WaitDelay = 20 * time.Second
				err := cmd.Run()
				if err == nil || !strings.Contains(errb.String(), flag) || !strings.Contains(errb.String(), tc.want) || out.Len() != 0 {
					t.Fatalf("lnk-netbroker %s with %s: %v, said %q, printed %q; want %q and nothing served", flag, tc.name, err, errb.String(), out.String(), tc.want)
				}
			})
		}
	}
}
