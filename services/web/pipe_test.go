package web

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/testenv"
)

// TestAnswerPipeGrown: the lnk-web binary grows the pipe on its stdout to
// 256 KiB (or pipe-max-size where that is less; read back with
// F_GETPIPE_SZ from the client's end), so a 100 KB page's answer is one
// write; that answer comes back whole, and nothing is said on stderr.
func TestAnswerPipeGrown(t *testing.T) {
	page := strings.Repeat("0123456789abcdef", 100<<10/16)
	s := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "text/plain")
		io.WriteString(rw, page)
	}))
	defer s.Close()
	cmd := exec.Command(testenv.Bin(t, "lnk-web"), "--private-host", "127.0.0.1")
	var stderr testenv.SyncBuffer
	cmd.Stderr = &stderr
	w, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	r, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close(); cmd.Wait() })
	before, err := unix.FcntlInt(r.(*os.File).Fd(), unix.F_GETPIPE_SZ, 0)
	if err != nil {
		t.Fatal(err)
	}
	c := startRaw(t, w, r) // its answer to initialize: Stdio has run
	size, err := unix.FcntlInt(r.(*os.File).Fd(), unix.F_GETPIPE_SZ, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := 256 << 10
	if b, err := os.ReadFile("/proc/sys/fs/pipe-max-size"); err != nil {
		t.Fatal(err)
	} else if max, err := strconv.Atoi(strings.TrimSpace(string(b))); err != nil {
		t.Fatal(err)
	} else if max < want {
		want = max
	}
	if size != want || before >= want {
		t.Fatalf("stdout's pipe is %d bytes (%d before lnk-web ran), want %d", size, before, want)
	}
	if text := c.fetch(s.URL); !strings.Contains(text, page) {
		t.Fatalf("the page's answer is not whole: %d bytes", len(text))
	}
	if stderr.String() != "" {
		t.Errorf("lnk-web said on stderr: %s", stderr.String())
	}
}
