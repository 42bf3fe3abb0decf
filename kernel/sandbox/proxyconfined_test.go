package sandbox_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/landlock"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/kernel/sandbox"
)

// bornConfinedProbe stands in for lnk-netbroker: from its main thread
// and from a thread of its own it reads a file beneath the sockets'
// folder lnk hands it (the proxy's domain allows that) and one in HOME
// (it does not), and says what each could.
const bornConfinedProbe = `package main

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"syscall"
)

func try(home string, netDir int) string {
	_, outside := os.ReadFile(home + "/outside")
	fd, inside := syscall.Openat(netDir, "inside", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if inside == nil {
		syscall.Close(fd)
	}
	return fmt.Sprintf("inside=%v outside=%v", inside == nil, outside == nil)
}

func main() {
	runtime.LockOSThread() // the main thread runs nothing else
	netDir, err := strconv.Atoi(os.Getenv("LNK_NETBROKER_NETDIR_FD"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "probe: no sockets' folder handed")
		os.Exit(1)
	}
	home := os.Args[2] // --home HOME
	other := make(chan string)
	go func() { other <- try(home, netDir) }()
	fmt.Fprintf(os.Stderr, "main: %s\nother: %s\n", try(home, netDir), <-other)
}
`

// TestProxyBornConfined: on a kernel with landlock but no TSYNC, lnk
// starts the proxy from a thread already in the proxy's domain, so every
// thread of it is born confined and it starts once (no re-exec). A
// static stand-in for lnk-netbroker, started as StartProxy starts it,
// reads beneath the sockets' folder and nothing in HOME, from its main
// thread and from another. Where landlock has TSYNC (ABI 8 on), lnk
// leaves every thread to the proxy, which confines them all itself: the
// stand-in, which confines nothing, then reads both.
func TestProxyBornConfined(t *testing.T) {
	requireSandbox(t)
	want := "main: inside=true outside=false\nother: inside=true outside=false\n"
	if landlock.ABI() >= 8 {
		want = "main: inside=true outside=true\nother: inside=true outside=true\n"
	}
	probe := buildStatic(t, bornConfinedProbe) // before HOME changes: the build cache is the caller's
	home := testenv.Home(t)
	write(t, filepath.Join(home, "outside"), "owner's")
	netDir := filepath.Join(home, ".lnk", "agents", ".net")
	if err := os.MkdirAll(netDir, 0o700); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(netDir, "inside"), "proxy's")
	on := true
	c, err := caps.CompileFlags(home, home, caps.Grants{Internet: &on})
	if err != nil {
		t.Fatal(err)
	}
	errf, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	defer errf.Close()
	p, err := sandbox.StartProxy(c, probe, false, errf, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The probe says what it could, then ends; Stop would end it sooner.
	var b []byte
	for deadline := time.Now().Add(20 * time.Second); strings.Count(string(b), "\n") < 2 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
		b, _ = os.ReadFile(errf.Name())
	}
	p.Stop()
	if string(b) != want {
		t.Fatalf("the proxy's threads:\n%s\nwant\n%s", b, want)
	}
}

// buildStatic builds the Go program src (the standard library only)
// static, as lnk-netbroker is.
func buildStatic(t *testing.T, src string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	out := filepath.Join(dir, "probe")
	cmd := exec.Command(goBin, "build", "-o", out, "main.go")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GO111MODULE=off", "GOFLAGS=", "GOPROXY=off")
	if msg, err := cmd.CombinedOutput(); err != nil {
		testenv.Require(t, false, "a Go toolchain to build a static probe ("+strings.TrimSpace(string(msg))+")")
	}
	return out
}
