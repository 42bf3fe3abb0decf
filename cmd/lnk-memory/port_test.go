package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/landlock"
	"lnk.dev/lnk/internal/ownerfile"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/services/memory"
	"lnk.dev/lnk/services/memory/filter"
)

// portEnv makes the test binary the confined service's stand-in:
// "HOME|MODELPORT|PORT,PORT…" (MODELPORT 0: no model).
const portEnv = "LNK_MEMORY_TEST_PORTS"

func TestMain(m *testing.M) {
	if v := os.Getenv(portEnv); v != "" {
		os.Exit(dialConfined(v))
	}
	os.Exit(m.Run())
}

// dialConfined confines itself exactly as lnk-memory serve does (its
// confine, then the filter serve loads: ServiceModel with a model,
// Service without) for agent ada of HOME, then connects to each port of
// 127.0.0.1 and prints "ok PORT" or "refused PORT: why".
func dialConfined(v string) int {
	parts := strings.Split(v, "|")
	home := parts[0]
	model, _ := strconv.Atoi(parts[1])
	agentsDir, err := openPath(home+"/Link/Agents", ownerfile.PrivateDir)
	if err != nil {
		fmt.Println("open:", err)
		return 1
	}
	dir, err := openPath(home+"/Link/Agents/.memory/owner", ownerfile.PrivateDir)
	if err != nil {
		fmt.Println("open:", err)
		return 1
	}
	a, err := openAgent(int(agentsDir.Fd()), "ada", "ada")
	if err != nil {
		fmt.Println("open:", err)
		return 1
	}
	logFD, err := ownerfile.Open(int(dir.Fd()), "memory.log", unix.O_WRONLY|unix.O_APPEND|unix.O_CREAT, 0o600)
	if err != nil {
		fmt.Println("open:", err)
		return 1
	}
	runFD, err := ownerfile.MakeDir(int(dir.Fd()), "run", unix.O_PATH, ownerfile.PrivateDir)
	if err != nil {
		fmt.Println("open:", err)
		return 1
	}
	log, run := os.NewFile(uintptr(logFD), "memory.log"), os.NewFile(uintptr(runFD), "run")
	if err := confine(map[string]*memory.Agent{"ada": a}, own{dir: dir, run: run, log: log}, uint16(model)); err != nil {
		fmt.Println("confine:", err)
		return 1
	}
	load := filter.Service
	if model != 0 {
		load = filter.ServiceModel
	}
	if err := load(); err != nil {
		fmt.Println("filter:", err)
		return 1
	}
	// Of its own folder: run/ written, the log appended to, nothing else.
	report := func(what string, err error) {
		if err != nil {
			fmt.Printf("refused %s: %v\n", what, err)
		} else {
			fmt.Printf("ok %s\n", what)
		}
	}
	_, err = log.WriteString("a line\n")
	report("append log", err)
	report("write run", os.WriteFile(home+"/Link/Agents/.memory/owner/run/x", []byte("x"), 0o600))
	report("write records", os.WriteFile(home+"/Link/Agents/.memory/owner/served.json", []byte("x"), 0o600))
	report("replace log", os.Rename(home+"/Link/Agents/.memory/owner/run/x", home+"/Link/Agents/.memory/owner/memory.log"))
	report("remove log", os.Remove(home+"/Link/Agents/.memory/owner/memory.log"))
	report("link log", os.Symlink("/etc/passwd", home+"/Link/Agents/.memory/owner/log2"))
	for _, p := range strings.Split(parts[2], ",") {
		c, err := net.Dial("tcp", "127.0.0.1:"+p)
		if err != nil {
			fmt.Printf("refused %s: %v\n", p, err)
			continue
		}
		c.Close()
		fmt.Printf("ok %s\n", p)
	}
	return 0
}

// Inside the service's confinement, the model's port of 127.0.0.1 is
// reached (the positive control) and another listening port of
// 127.0.0.1 is not; with no model named, neither is. Of its own folder
// it writes only run/ (its socket's) and appends to its log: no record
// beside them, no log replaced, removed or made a link.
func TestServiceReachesOnlyItsModelsPort(t *testing.T) {
	testenv.Require(t, landlock.ABI() >= 4, "landlock ABI 4 (TCP rules)")
	home := t.TempDir()
	for _, d := range []string{"/Link/Agents/ada/Home/memory", "/Link/Agents/ada/Agent/chats", "/Link/Agents/.memory/owner"} {
		if err := os.MkdirAll(home+d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{"/Link", "/Link/Agents"} {
		os.Chmod(home+d, 0o700)
	}
	var ports []string
	for i := 0; i < 2; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
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
				c.Close()
			}
		}()
		ports = append(ports, strconv.Itoa(l.Addr().(*net.TCPAddr).Port))
	}
	model, other := ports[0], ports[1]
	run := func(modelPort string) string {
		cmd := exec.Command("/proc/self/exe", "-test.run=^$")
		cmd.Env = []string{"HOME=" + home, portEnv + "=" + home + "|" + modelPort + "|" + model + "," + other}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("the confined stand-in: %v\n%s", err, out)
		}
		return string(out)
	}
	got := run(model)
	if !strings.Contains(got, "ok "+model+"\n") {
		t.Errorf("the model's port was not reached from inside the confinement:\n%s", got)
	}
	if !strings.Contains(got, "refused "+other+":") {
		t.Errorf("another loopback port was reached from inside the confinement:\n%s", got)
	}
	got = run("0")
	for _, p := range ports {
		if !strings.Contains(got, "refused "+p+":") {
			t.Errorf("with no model, port %s was reached:\n%s", p, got)
		}
	}
	// Of its own folder it writes only run/ and appends to its log.
	for what, want := range map[string]string{"append log": "ok", "write run": "ok",
		"write records": "refused", "replace log": "refused", "remove log": "refused", "link log": "refused"} {
		if !strings.Contains(got, want+" "+what) {
			t.Errorf("%s: want %s\n%s", what, want, got)
		}
	}
	if b, err := os.ReadFile(home + "/Link/Agents/.memory/owner/memory.log"); err != nil || !strings.Contains(string(b), "a line\n") {
		t.Errorf("memory.log: %q %v", b, err)
	}

}
