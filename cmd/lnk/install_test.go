package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"lnk.dev/lnk/cli"
	"lnk.dev/lnk/internal/landlock"
	"lnk.dev/lnk/internal/testenv"
)

// requireSandbox skips (or under LNK_REQUIRE_SANDBOX=1 fails) where this
// machine cannot build Link's sandbox.
func requireSandbox(t testing.TB) {
	t.Helper()
	_, err := exec.LookPath("bwrap")
	testenv.Require(t, err == nil, "bubblewrap (bwrap)")
	testenv.Require(t, landlock.ABI() > 0, "landlock")
	out, err := exec.Command("bwrap", "--unshare-all", "--ro-bind", "/", "/", "true").CombinedOutput()
	testenv.Require(t, err == nil, "unprivileged user namespaces for bwrap ("+strings.TrimSpace(string(out))+")")
}

// programs lists Link's binaries: the folders under cmd/.
func programs(t *testing.T) []string {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(testenv.RepoRoot(t), "cmd"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out
}

// binDir is the folder holding every one of Link's binaries (LNK_BIN, or
// where testenv builds them).
func binDir(t *testing.T) string {
	t.Helper()
	var dir string
	for _, p := range programs(t) {
		dir = filepath.Dir(testenv.Bin(t, p))
	}
	return dir
}

// script runs one of the repository's scripts with env added, as make
// runs it, and returns its output and error.
func script(t *testing.T, name string, env []string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(filepath.Join(testenv.RepoRoot(t), "scripts", name), args...)
	cmd.Env = append(append(os.Environ(), "HOME="+ownerHome), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// manifestOf reads an install's manifest: its files and its folders.
func manifestOf(t *testing.T, prefix string) (files, dirs []string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(prefix, "share/lnk/install-manifest"))
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		kind, rel, _ := strings.Cut(sc.Text(), " ")
		switch kind {
		case "f":
			files = append(files, rel)
		case "d":
			dirs = append(dirs, rel)
		default:
			t.Fatalf("manifest line %q", sc.Text())
		}
	}
	return files, dirs
}

// filesUnder lists the regular files and links under dir, relative to it.
func filesUnder(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	})
	sort.Strings(out)
	return out
}

// manPage is the text of an installed man page.
func manPage(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	b, err := io.ReadAll(z)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// sandboxTrue runs `lnk sandbox run --command true -- true` with the lnk
// at path and returns its output and error.
func sandboxTrue(path string) (string, error) {
	out, err := exec.Command(path, "sandbox", "run", "--command", "true", "--", "true").CombinedOutput()
	return string(out), err
}

// TestInstallPlacesLinkAndUninstallRemovesExactlyIt installs into a
// PREFIX that already holds files of the owner's, reads back every binary,
// completion and man page and the manifest, runs lnk from the install
// folder and through a link to it (its helpers found beside its real
// file; a lone copy of lnk finds none and says which, with a hint, the
// negative control), then
// uninstalls and finds the owner's files and folders as they were and
// nothing of Link's.
func TestInstallPlacesLinkAndUninstallRemovesExactlyIt(t *testing.T) {
	requireSandbox(t)
	bin := binDir(t)
	prefix := filepath.Join(t.TempDir(), "prefix")
	owners := []string{"bin/owners-tool", "share/man/man1/owners-tool.1.gz"}
	for _, f := range owners {
		os.MkdirAll(filepath.Join(prefix, filepath.Dir(f)), 0o755)
		if err := os.WriteFile(filepath.Join(prefix, f), []byte("the owner's"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{"BIN=" + bin, "PREFIX=" + prefix, "DESTDIR="}
	if out, err := script(t, "install.sh", env, "install"); err != nil {
		t.Fatalf("install: %v\n%s", err, out)
	}

	for _, p := range programs(t) {
		want, _ := os.ReadFile(filepath.Join(bin, p))
		got, err := os.ReadFile(filepath.Join(prefix, "bin", p))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("bin/%s is not the built %s: %v", p, p, err)
		}
		if fi, err := os.Lstat(filepath.Join(prefix, "bin", p)); err != nil || fi.Mode() != 0o755 {
			t.Errorf("bin/%s mode: %v %v", p, fi.Mode(), err)
		}
	}
	for rel, head := range map[string]string{
		"share/bash-completion/completions/lnk":    "# bash completion",
		"share/zsh/site-functions/_lnk":            "#compdef lnk",
		"share/fish/vendor_completions.d/lnk.fish": "# fish completion",
	} {
		b, err := os.ReadFile(filepath.Join(prefix, rel))
		if err != nil || !bytes.HasPrefix(b, []byte(head)) {
			t.Errorf("%s: %v %.40q", rel, err, b)
		}
	}
	// A page for every command the owner can type, from its own help.
	var each func(c *cobra.Command)
	each = func(c *cobra.Command) {
		if !c.IsAvailableCommand() && c.Name() != "lnk" {
			return
		}
		name := strings.ReplaceAll(c.CommandPath(), " ", "-")
		page := manPage(t, filepath.Join(prefix, "share/man/man1", name+".1.gz"))
		if !strings.Contains(page, `.TH "LNK" "1"`) || !strings.Contains(page, ".SH NAME\n"+name+" - "+strings.Fields(c.Short)[0]) {
			t.Errorf("the page of %q lacks its title or its help: %.300s", c.CommandPath(), page)
		}
		for _, s := range c.Commands() {
			each(s)
		}
	}
	root := cli.NewRoot(io.Discard, io.Discard)
	root.InitDefaultCompletionCmd()
	each(root)
	manPage(t, filepath.Join(prefix, "share/man/man1/lnk-completion-fish.1.gz"))
	if page := manPage(t, filepath.Join(prefix, "share/man/man1/lnk-sandbox-run.1.gz")); !strings.Contains(page, `\fB--command\fP`) || !strings.Contains(page, `\fB--read\fP`) {
		t.Errorf("lnk-sandbox-run(1) lacks its flags: %.500s", page)
	}

	// The manifest lists every file placed, and nothing else was placed.
	files, dirs := manifestOf(t, prefix)
	placed := append(append([]string(nil), files...), owners...)
	sort.Strings(placed)
	if got := filesUnder(t, prefix); strings.Join(got, "\n") != strings.Join(placed, "\n") {
		t.Errorf("the prefix holds\n%s\nbut the manifest and the owner's files are\n%s", strings.Join(got, "\n"), strings.Join(placed, "\n"))
	}
	sort.Strings(dirs)
	wantDirs := []string{"share/bash-completion", "share/bash-completion/completions", "share/fish", "share/fish/vendor_completions.d", "share/lnk", "share/zsh", "share/zsh/site-functions"}
	if strings.Join(dirs, " ") != strings.Join(wantDirs, " ") {
		t.Errorf("folders the manifest says install made: %v, want %v", dirs, wantDirs)
	}

	// lnk from the install folder, and through a link to it elsewhere.
	testenv.Home(t)
	if out, err := sandboxTrue(filepath.Join(prefix, "bin", "lnk")); err != nil {
		t.Errorf("installed lnk sandbox run: %v\n%s", err, out)
	}
	elsewhere := t.TempDir()
	os.Chmod(elsewhere, 0o755)
	if err := os.Symlink(filepath.Join(prefix, "bin", "lnk"), filepath.Join(elsewhere, "lnk")); err != nil {
		t.Fatal(err)
	}
	if out, err := sandboxTrue(filepath.Join(elsewhere, "lnk")); err != nil {
		t.Errorf("lnk through a link: %v\n%s", err, out)
	}
	lone := t.TempDir()
	os.Chmod(lone, 0o755)
	b, _ := os.ReadFile(filepath.Join(prefix, "bin", "lnk"))
	if err := os.WriteFile(filepath.Join(lone, "lnk"), b, 0o755); err != nil {
		t.Fatal(err)
	}
	// The first of its programs the run looks for is named (lnk-init or
	// lnk-netbroker, as the run's order has it), with its path beside lnk.
	missing := regexp.MustCompile(`^lnk: (lnk-[a-z]+), one of Link's programs, is not beside lnk: ` + regexp.QuoteMeta(lone) + `/(lnk-[a-z]+)\n`)
	if out, err := sandboxTrue(filepath.Join(lone, "lnk")); err == nil || !missing.MatchString(out) ||
		!strings.Contains(out, "hint: install Link again") {
		t.Errorf("a copy of lnk with no helpers beside it ran a sandbox, or did not say which is missing: %v\n%s", err, out)
	}

	out, err := script(t, "install.sh", env, "uninstall")
	if err != nil {
		t.Fatalf("uninstall: %v\n%s", err, out)
	}
	if got := filesUnder(t, prefix); strings.Join(got, " ") != strings.Join(owners, " ") {
		t.Errorf("after uninstall the prefix holds %v, want the owner's %v", got, owners)
	}
	for _, d := range wantDirs {
		if _, err := os.Lstat(filepath.Join(prefix, d)); !os.IsNotExist(err) {
			t.Errorf("%s, made by install, is still there: %v", d, err)
		}
	}
	for _, d := range []string{"bin", "share/man/man1"} {
		if fi, err := os.Stat(filepath.Join(prefix, d)); err != nil || !fi.IsDir() {
			t.Errorf("the owner's folder %s is gone: %v", d, err)
		}
	}
}

// TestUninstallRefusesWhatInstallNeverPlaced: a manifest naming a file
// install never places (outside the prefix, or any other name) refuses
// the whole uninstall, removing nothing; the manifest put right, the
// same uninstall removes everything, the prefix folder it made too.
// A relative PREFIX, and an uninstall where nothing was installed, are
// refused with a hint.
func TestUninstallRefusesWhatInstallNeverPlaced(t *testing.T) {
	bin := binDir(t)
	top := t.TempDir()
	prefix := filepath.Join(top, "prefix")
	env := []string{"BIN=" + bin, "PREFIX=" + prefix, "DESTDIR="}

	if out, err := script(t, "install.sh", env, "uninstall"); err == nil || !strings.Contains(out, "no manifest") || !strings.Contains(out, "hint: make uninstall PREFIX=") {
		t.Errorf("uninstall with nothing installed: %v\n%s", err, out)
	}
	if out, err := script(t, "install.sh", []string{"BIN=" + bin, "PREFIX=relative/prefix"}, "install"); err == nil || !strings.Contains(out, "not an absolute path") || !strings.Contains(out, "hint: make install PREFIX=") {
		t.Errorf("a relative PREFIX: %v\n%s", err, out)
	}
	if _, err := os.Lstat("relative"); !os.IsNotExist(err) {
		t.Errorf("a relative PREFIX made a folder: %v", err)
	}
	for _, bad := range []string{filepath.Join(top, "Link's"), filepath.Join(top, `a\b`), filepath.Join(top, "a b"), "/"} {
		if out, err := script(t, "install.sh", []string{"BIN=" + bin, "PREFIX=" + bad}, "install"); err == nil || !strings.Contains(out, "hint: make install PREFIX=") {
			t.Errorf("PREFIX=%q: %v\n%s", bad, err, out)
		}
	}
	if ents, _ := os.ReadDir(top); len(ents) != 0 {
		t.Errorf("a refused PREFIX made %v", ents)
	}

	if out, err := script(t, "install.sh", env, "install"); err != nil {
		t.Fatalf("install: %v\n%s", err, out)
	}
	victim := filepath.Join(top, "victim")
	os.WriteFile(victim, []byte("kept"), 0o644)
	manifest := filepath.Join(prefix, "share/lnk/install-manifest")
	good, _ := os.ReadFile(manifest)
	before := filesUnder(t, prefix)
	for _, bad := range []string{"f ../victim", "f etc/passwd", "f bin/lnk/../../../victim", "d ..", "x bin/lnk"} {
		os.WriteFile(manifest, append(append([]byte(nil), good...), bad+"\n"...), 0o644)
		out, err := script(t, "install.sh", env, "uninstall")
		if err == nil || !strings.Contains(out, "nothing changed") {
			t.Errorf("manifest line %q: %v\n%s", bad, err, out)
		}
		if got := filesUnder(t, prefix); strings.Join(got, " ") != strings.Join(before, " ") {
			t.Errorf("manifest line %q: the refused uninstall removed files", bad)
		}
		// A reinstall reads the same manifest and refuses it too.
		if out, err := script(t, "install.sh", env, "install"); err == nil || !strings.Contains(out, "nothing changed") {
			t.Errorf("install over manifest line %q: %v\n%s", bad, err, out)
		}
	}
	if b, _ := os.ReadFile(victim); string(b) != "kept" {
		t.Errorf("the file outside the prefix: %q", b)
	}

	os.WriteFile(manifest, good, 0o644)
	if out, err := script(t, "install.sh", env, "uninstall"); err != nil {
		t.Fatalf("uninstall: %v\n%s", err, out)
	}
	if _, err := os.Lstat(prefix); !os.IsNotExist(err) {
		t.Errorf("the prefix install made is left: %v %v", err, filesUnder(t, prefix))
	}
	if b, _ := os.ReadFile(victim); string(b) != "kept" {
		t.Errorf("the file outside the prefix: %q", b)
	}
}

// TestKernelInstallRefusesAPathSystemdCannotStart: lnk kernel install,
// run from a folder whose name systemd refuses in a program's path,
// writes no unit and says why in one line, then how to install Link
// where it can; the same lnk from a plain folder writes the unit naming
// its own absolute path.
func TestKernelInstallRefusesAPathSystemdCannotStart(t *testing.T) {
	b, err := os.ReadFile(testenv.Bin(t, "lnk"))
	if err != nil {
		t.Fatal(err)
	}
	home := testenv.Home(t)
	for _, name := range []string{`Link's programs`, "plain"} {
		dir := filepath.Join(t.TempDir(), name)
		os.Mkdir(dir, 0o755)
		lnk := filepath.Join(dir, "lnk")
		if err := os.WriteFile(lnk, b, 0o755); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(lnk, "kernel", "install").CombinedOutput()
		unit, rerr := os.ReadFile(filepath.Join(home, ".config", "systemd", "user", "lnk-kernel.service"))
		if name == "plain" {
			if err != nil || rerr != nil || !strings.Contains(string(unit), `ExecStart="`+lnk+`" kernel run`) {
				t.Errorf("from %s: %v %v\n%s\n%s", dir, err, rerr, out, unit)
			}
			continue
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if err == nil || len(lines) != 2 || !strings.HasPrefix(lines[0], "lnk: ") || !strings.Contains(lines[0], "systemd refuses") ||
			!strings.Contains(lines[1], "hint: ") || !strings.Contains(lines[1], "make install PREFIX=~/.local") {
			t.Errorf("from %s: %v\n%s", dir, err, out)
		}
		if rerr == nil {
			t.Errorf("from %s: a unit was written:\n%s", dir, unit)
		}
	}
}
