package peercred

import (
	"net"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParseConfinement feeds /proc/PID/status texts, whose Name line the
// peer writes, to the one reader of a peer's confinement: it never
// panics, and a text that says nothing of no_new_privs is an error,
// never "not confined".
func FuzzParseConfinement(f *testing.F) {
	f.Add([]byte("Name:\tlnk\nNoNewPrivs:\t0\nSeccomp:\t0\n"))
	f.Add([]byte("Seccomp:\t2\n"))
	f.Fuzz(func(t *testing.T, status []byte) {
		nnp, filtered, err := ParseConfinement(status)
		if err != nil && (nnp || filtered) {
			t.Fatalf("an error and a verdict: %v %v %v", nnp, filtered, err)
		}
	})
}

func TestParseConfinement(t *testing.T) {
	for _, tc := range []struct {
		status        string
		nnp, filtered bool
		bad           bool
	}{
		{status: "NoNewPrivs:\t0\nSeccomp:\t0\n"},
		{status: "NoNewPrivs:\t1\nSeccomp:\t2\n", nnp: true, filtered: true},
		{status: "NoNewPrivs:\t1\n", nnp: true},
		{status: "Seccomp:\t2\n", bad: true},
		{status: "NoNewPrivs:\t1\nSeccomp:\t2\nNoNewPrivs:\t0\nSeccomp:\t0\n", nnp: true, filtered: true},
	} {
		nnp, filtered, err := ParseConfinement([]byte(tc.status))
		if (err != nil) != tc.bad || nnp != tc.nnp || filtered != tc.filtered {
			t.Errorf("%q: %v %v %v", tc.status, nnp, filtered, err)
		}
	}
}

// TestOwnersOwnTakesThisProcess: a peer of this process's own (the test,
// unconfined) is the owner's own; a pid that can't be read is not.
func TestOwnersOwnTakesThisProcess(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "s")
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: sock, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		c, err := net.Dial("unix", sock)
		if err == nil {
			defer c.Close()
			c.Read(make([]byte, 1))
		}
	}()
	c, err := l.AcceptUnix()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cred, err := OwnersOwn(c)
	if err != nil {
		t.Fatalf("this process's own connection: %v", err)
	}
	if int(cred.Pid) != os.Getpid() {
		t.Fatalf("peer pid %d, want %d", cred.Pid, os.Getpid())
	}
	if why := Confined(0); why == "" {
		t.Fatal("pid 0 was taken as unconfined")
	}
	if why := Confined(1 << 30); why == "" {
		t.Fatal("a pid with no /proc entry was taken as unconfined")
	}
}
