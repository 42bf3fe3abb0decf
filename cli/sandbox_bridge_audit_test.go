package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lnk.dev/lnk/internal/testenv"
)

// TestOpenAuditLogRefusesALooseLnkFolder: the bridge's audit log is
// opened only under a ~/.lnk of the owner's alone, as the kernel's is.
func TestOpenAuditLogRefusesALooseLnkFolder(t *testing.T) {
	home := testenv.Home(t)
	os.Mkdir(filepath.Join(home, ".lnk"), 0o700)
	l, err := openAuditLog(home)
	if err != nil {
		t.Fatalf("the positive control: %v", err)
	}
	l.Close()
	os.Chmod(filepath.Join(home, ".lnk"), 0o755)
	if l, err := openAuditLog(home); err == nil || !strings.Contains(err.Error(), "755") {
		if l != nil {
			l.Close()
		}
		t.Errorf("a ~/.lnk others can enter: %v", err)
	}
}
