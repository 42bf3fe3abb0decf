package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"lnk.dev/lnk/internal/testenv"
)

// dpkg runs a dpkg tool and returns its output and error.
func dpkg(tool string, args ...string) (string, error) {
	out, err := exec.Command(tool, args...).CombinedOutput()
	return string(out), err
}

// dpkgChange runs dpkg to change what is installed, waiting (a bounded
// number of times) while another program, such as an apt-get of make
// deps, holds dpkg's lock.
func dpkgChange(args ...string) (string, error) {
	for try := 0; ; try++ {
		out, err := dpkg("dpkg", args...)
		if err == nil || try == 150 || !strings.Contains(out, "locked by another process") {
			return out, err
		}
		time.Sleep(2 * time.Second)
	}
}

// TestDebInstallsRunsAndRemovesCleanly builds the package make deb builds
// (scripts/deb.sh from the built binaries), installs it on this machine
// with dpkg -i, runs lnk version, a sandbox and the kernel (its key
// broker found beside it) from /usr/bin, writes the
// kernel's unit naming /usr/bin/lnk and has systemd-analyze verify it,
// then removes the package (dpkg -r, then --purge) and finds every file
// dpkg -L listed gone, and every folder the package made.
func TestDebInstallsRunsAndRemovesCleanly(t *testing.T) {
	testenv.RequireRoot(t, "dpkg -i installs the package into /usr on this machine")
	requireSandbox(t)
	for _, tool := range []string{"dpkg", "dpkg-deb", "dpkg-shlibdeps", "systemd-analyze"} {
		_, err := exec.LookPath(tool)
		testenv.Require(t, err == nil, tool+" (make deps installs it)")
	}
	if out, _ := dpkg("dpkg-query", "-W", "-f=${Status}", "lnk"); strings.Contains(out, "ok installed") {
		t.Fatalf("the package lnk is installed on this machine already; this test would replace and remove it\nhint: dpkg -r lnk, then run the test again")
	}
	bin := binDir(t)
	arch, err := dpkg("dpkg", "--print-architecture")
	if err != nil {
		t.Fatal(err)
	}
	arch = strings.TrimSpace(arch)

	out, err := script(t, "deb.sh", []string{"BIN=" + bin, "OUT=" + t.TempDir()})
	if err != nil {
		t.Fatalf("deb.sh: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	deb := lines[len(lines)-1]
	if !regexp.MustCompile(`^lnk_[0-9][A-Za-z0-9.+~]*_` + regexp.QuoteMeta(arch) + `\.deb$`).MatchString(filepath.Base(deb)) {
		t.Fatalf("package name %q is not lnk_<version>_%s.deb", filepath.Base(deb), arch)
	}
	depends, err := dpkg("dpkg-deb", "-f", deb, "Depends")
	if err != nil || !strings.Contains(depends, "bubblewrap") || !strings.Contains(depends, "libseccomp2") || !strings.Contains(depends, "libc6") {
		t.Errorf("Depends: %q %v", depends, err)
	}

	// What the package holds, and which of its folders exist already:
	// those stay after its removal, the others go with it.
	list, err := exec.Command("sh", "-c", `dpkg-deb --fsys-tarfile "$1" | tar -t`, "sh", deb).Output()
	if err != nil {
		t.Fatal(err)
	}
	existed := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(string(list)), "\n") {
		if p := strings.TrimSuffix(strings.TrimPrefix(l, "."), "/"); strings.HasSuffix(l, "/") && p != "" {
			_, err := os.Lstat(p)
			existed[p] = err == nil
		}
	}

	if out, err := dpkgChange("-i", deb); err != nil {
		t.Fatalf("dpkg -i: %v\n%s", err, out)
	}
	t.Cleanup(func() { dpkgChange("--purge", "lnk") })
	listed, err := dpkg("dpkg", "-L", "lnk")
	if err != nil {
		t.Fatalf("dpkg -L: %v\n%s", err, listed)
	}
	paths := strings.Fields(listed)
	for _, want := range append(programs(t), "../share/man/man1/lnk.1.gz", "../share/man/man1/lnk-sandbox-run.1.gz",
		"../share/bash-completion/completions/lnk", "../share/zsh/vendor-completions/_lnk", "../share/fish/vendor_completions.d/lnk.fish") {
		p := filepath.Join("/usr/bin", want)
		if !strings.Contains("\n"+listed, "\n"+p+"\n") {
			t.Errorf("dpkg -L lnk lacks %s", p)
		}
	}

	// From /usr/bin: the same lnk as the one built, and a sandbox.
	got, err := dpkg("/usr/bin/lnk", "version")
	want, _ := dpkg(filepath.Join(bin, "lnk"), "version")
	if err != nil || got != want || !strings.Contains(got, "commit ") {
		t.Errorf("/usr/bin/lnk version: %q (%v), the built lnk says %q", got, err, want)
	}
	testenv.Home(t)
	if out, err := sandboxTrue("/usr/bin/lnk"); err != nil {
		t.Errorf("/usr/bin/lnk sandbox run: %v\n%s", err, out)
	}
	// The kernel from /usr/bin starts its key broker from beside itself.
	if out, err := dpkg("/usr/bin/lnk", "kernel", "start"); err != nil {
		t.Fatalf("lnk kernel start: %v\n%s", err, out)
	}
	t.Cleanup(func() { dpkg("/usr/bin/lnk", "kernel", "stop") }) // before the purge above
	status, err := exec.Command("/usr/bin/lnk", "kernel", "status", "--json").Output()
	var st struct {
		Running bool
		Brokers []struct {
			Name string
			Pid  int
		}
	}
	if err != nil || json.Unmarshal(status, &st) != nil || !st.Running || len(st.Brokers) == 0 || st.Brokers[0].Name != "key" || st.Brokers[0].Pid == 0 {
		t.Errorf("lnk kernel status: %v\n%s", err, status)
	} else if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", st.Brokers[0].Pid)); err != nil || exe != "/usr/bin/lnk-keybroker" {
		t.Errorf("the key broker runs %q (%v), not /usr/bin/lnk-keybroker", exe, err)
	}
	if out, err := dpkg("/usr/bin/lnk", "kernel", "stop"); err != nil {
		t.Errorf("lnk kernel stop: %v\n%s", err, out)
	}
	// The unit lnk kernel install writes names the installed lnk, and
	// systemd accepts it.
	if out, err := dpkg("/usr/bin/lnk", "kernel", "install"); err != nil {
		t.Fatalf("lnk kernel install: %v\n%s", err, out)
	}
	unit := filepath.Join(os.Getenv("XDG_CONFIG_HOME"), "systemd", "user", "lnk-kernel.service")
	if b, err := os.ReadFile(unit); err != nil || !strings.Contains(string(b), `ExecStart="/usr/bin/lnk" kernel run`) {
		t.Errorf("the unit: %v\n%s", err, b)
	}
	if out, err := dpkg("systemd-analyze", "verify", unit); err != nil || strings.TrimSpace(out) != "" {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}

	if out, err := dpkgChange("-r", "lnk"); err != nil {
		t.Fatalf("dpkg -r: %v\n%s", err, out)
	}
	if out, err := dpkgChange("--purge", "lnk"); err != nil {
		t.Fatalf("dpkg --purge: %v\n%s", err, out)
	}
	if out, _ := dpkg("dpkg-query", "-W", "-f=${Status}", "lnk"); strings.Contains(out, "installed") && !strings.Contains(out, "not-installed") {
		t.Errorf("after --purge dpkg still knows lnk: %q", out)
	}
	for _, p := range paths {
		if p == "/." {
			continue
		}
		fi, err := os.Lstat(p)
		switch {
		case err != nil && os.IsNotExist(err):
		case err != nil:
			t.Errorf("%s: %v", p, err)
		case !fi.IsDir():
			t.Errorf("%s, a file of the package, is left after its removal", p)
		case !existed[p]:
			t.Errorf("%s, a folder the package made, is left after its removal", p)
		}
	}
	if left, _ := filepath.Glob("/var/lib/dpkg/info/lnk.*"); len(left) != 0 {
		t.Errorf("dpkg's records of lnk are left: %v", left)
	}
}
