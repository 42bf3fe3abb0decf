package cli

import (
	"bytes"
	"crypto/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lnk.dev/lnk/internal/testenv"
)

// TestKeySealOpen seals a stream with lnk key seal, opens it with lnk key
// open, and has open refuse (exit 3) a changed, cut or foreign stream.
func TestKeySealOpen(t *testing.T) {
	lnkBin(t)
	dir := testenv.Home(t)
	keyFile := filepath.Join(dir, "receiver.key")
	out, errs, code := lnkRun(t, nil, "key", "new", "--out", keyFile)
	if code != 0 {
		t.Fatalf("key new: %d %s", code, errs)
	}
	pub := strings.TrimSpace(out)
	if st, err := os.Stat(keyFile); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v", st, err)
	}
	if _, errs, code := lnkRun(t, nil, "key", "new", "--out", keyFile); code == 0 {
		t.Fatalf("key new over an existing file: %s", errs)
	}
	plain := make([]byte, 200_000)
	rand.Read(plain)
	sealed, errs, code := lnkRun(t, plain, "key", "seal", "--to", pub)
	if code != 0 {
		t.Fatalf("seal: %d %s", code, errs)
	}
	opened, errs, code := lnkRun(t, []byte(sealed), "key", "open", "--key", keyFile)
	if code != 0 || !bytes.Equal([]byte(opened), plain) {
		t.Fatalf("open: exit %d, %d bytes back: %s", code, len(opened), errs)
	}
	changed := []byte(sealed)
	changed[len(changed)/2] ^= 1
	for name, s := range map[string][]byte{"changed": changed, "cut": []byte(sealed)[:len(sealed)-20], "trailing": append([]byte(sealed), 'x')} {
		if _, errs, code := lnkRun(t, s, "key", "open", "--key", keyFile); code != 3 || !strings.Contains(errs, "stream:") {
			t.Errorf("%s stream: exit %d: %s", name, code, errs)
		}
	}
	other := filepath.Join(dir, "other.key")
	lnkRun(t, nil, "key", "new", "--out", other)
	if _, errs, code := lnkRun(t, []byte(sealed), "key", "open", "--key", other); code != 3 || !strings.Contains(errs, "not sealed to this key") {
		t.Errorf("another key: exit %d: %s", code, errs)
	}
	if _, _, code := lnkRun(t, nil, "key", "seal", "--to", "age1notours"); code != 2 {
		t.Errorf("seal to a bad key: exit %d", code)
	}
	os.Chmod(keyFile, 0o644)
	if _, _, code := lnkRun(t, []byte(sealed), "key", "open", "--key", keyFile); code != 3 {
		t.Errorf("a key file others may read: exit %d", code)
	}
}
