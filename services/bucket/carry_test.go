package bucket

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lnk.dev/lnk/caps"
)

// TestCarryConf: ReadConf gives the conf Add wrote, byte for byte;
// PutConf writes it to another agent of the same ID (600) and its undo
// puts back the file it replaced, or removes the one it made; a conf of
// another form, or pointing at another agent's folder, is refused and
// nothing written; DeleteConf removes it.
func TestCarryConf(t *testing.T) {
	a, _ := testAgent(t)
	if _, err := a.Add(context.Background(), New{Name: "store", Endpoint: "http://127.0.0.1:1", S3Bucket: testBucket, Encrypt: true,
		KeyID: "AKIACARRYTEST000001", SecretKey: value(t, "carry-test-secret-key-0123456789")}); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(caps.Layout{Home: a.Home}.ConfigDir(a.Name), ConfName)
	onDisk, _ := os.ReadFile(p)
	data, err := a.ReadConf()
	if err != nil || string(data) != string(onDisk) || !strings.Contains(string(data), "password = ") {
		t.Fatalf("ReadConf: %q, %v; want the file Add wrote", data, err)
	}

	// Written where there was none, then undone: no file.
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	undo, err := a.PutConf(data)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(p); err != nil || string(b) != string(onDisk) {
		t.Errorf("PutConf wrote %q, %v", b, err)
	}
	if fi, err := os.Lstat(p); err != nil || fi.Mode() != 0o600 {
		t.Errorf("PutConf's file: %v, %v; want 600", fi, err)
	}
	if err := undo(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("after the undo: %v, want no file", err)
	}

	// Written over another, then undone: the other back.
	other := strings.Replace(string(data), "AKIACARRYTEST000001", "AKIACARRYTEST000002", 1)
	if err := os.WriteFile(p, []byte(other), 0o600); err != nil {
		t.Fatal(err)
	}
	if undo, err = a.PutConf(data); err != nil {
		t.Fatal(err)
	}
	if err := undo(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != other {
		t.Errorf("after the undo: %q, want the file it replaced", b)
	}

	// Refused: another form, another agent's folder. Nothing written.
	for name, bad := range map[string]string{
		"extra-key":    strings.Replace(string(data), "type = crypt\n", "type = crypt\nupload_cutoff = 1\n", 1),
		"other-folder": strings.ReplaceAll(string(data), a.ID, "ffffffffffffffffffffffffffffffff"),
	} {
		if _, err := a.PutConf([]byte(bad)); !errors.Is(err, ErrConf) {
			t.Errorf("%s: %v, want ErrConf", name, err)
		}
		if b, _ := os.ReadFile(p); string(b) != other {
			t.Errorf("%s: the file changed to %q", name, b)
		}
	}
	if err := os.WriteFile(p, []byte(strings.ReplaceAll(string(data), a.ID, "ffffffffffffffffffffffffffffffff")), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := a.ReadConf(); !errors.Is(err, ErrConf) {
		t.Errorf("ReadConf of a conf with another agent's folder: %v, want ErrConf", err)
	}

	if err := a.DeleteConf(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("after DeleteConf: %v", err)
	}
	if err := a.DeleteConf(); err != nil {
		t.Errorf("DeleteConf with no file: %v", err)
	}
}
