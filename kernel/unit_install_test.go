package kernel

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInstallUnitWritesThroughNoLink writes the unit (read back, 0600),
// then refuses a link in place of systemd/ or of the unit itself, and a
// folder others may write, writing nothing through any of them.
func TestInstallUnitWritesThroughNoLink(t *testing.T) {
	home := t.TempDir()
	p, err := InstallUnit(home, "", "/usr/bin/lnk")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil || !strings.Contains(string(b), "/usr/bin/lnk") {
		t.Fatalf("read back %q: %v", b, err)
	}
	if fi, _ := os.Lstat(p); fi.Mode().Perm() != 0o600 || !fi.Mode().IsRegular() {
		t.Errorf("unit mode %v", fi.Mode())
	}

	elsewhere := t.TempDir()
	cfg := filepath.Join(t.TempDir(), "cfg")
	os.Mkdir(cfg, 0o700)
	os.Symlink(elsewhere, filepath.Join(cfg, "systemd"))
	if _, err := InstallUnit(home, cfg, "/usr/bin/lnk"); err == nil || !strings.Contains(err.Error(), "link") {
		t.Errorf("systemd/ a link: %v", err)
	}
	if ents, _ := os.ReadDir(elsewhere); len(ents) != 0 {
		t.Errorf("written behind the link: %v", ents)
	}

	cfg2 := filepath.Join(t.TempDir(), "cfg")
	os.MkdirAll(filepath.Join(cfg2, "systemd", "user"), 0o700)
	target := filepath.Join(elsewhere, "target")
	os.WriteFile(target, []byte("kept"), 0o600)
	os.Symlink(target, filepath.Join(cfg2, "systemd", "user", UnitName))
	if _, err := InstallUnit(home, cfg2, "/usr/bin/lnk"); err == nil || !strings.Contains(err.Error(), "link") {
		t.Errorf("the unit a link: %v", err)
	}
	if b, _ := os.ReadFile(target); string(b) != "kept" {
		t.Errorf("written through the link: %q", b)
	}

	cfg3 := filepath.Join(t.TempDir(), "cfg")
	os.MkdirAll(filepath.Join(cfg3, "systemd"), 0o700)
	os.Chmod(filepath.Join(cfg3, "systemd"), 0o777)
	if _, err := InstallUnit(home, cfg3, "/usr/bin/lnk"); err == nil || !strings.Contains(err.Error(), "777") {
		t.Errorf("systemd/ open to others' writes: %v", err)
	}
}
