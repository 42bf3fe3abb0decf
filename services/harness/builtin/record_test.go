package builtin

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lnk.dev/lnk/internal/testenv"
)

// TestRecordRoundTrip: the record is written 600 in a 700 folder, read
// back as written, and removed only by the process it names.
func TestRecordRoundTrip(t *testing.T) {
	home := testenv.Home(t)
	if _, err := ReadRecord(home); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("no record: %v, want os.ErrNotExist", err)
	}
	r := Record{URL: BaseURL(40123), Port: 40123, PID: 77, Obedient: true}
	if err := WriteRecord(home, r); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(home, ".lnk", "models", RecordName)
	for path, mode := range map[string]os.FileMode{p: 0o600, filepath.Dir(p): 0o700 | os.ModeDir} {
		if st, err := os.Lstat(path); err != nil || st.Mode() != mode {
			t.Fatalf("%s: %v %v, want %v", path, st.Mode(), err, mode)
		}
	}
	got, err := ReadRecord(home)
	if err != nil || got != r {
		t.Fatalf("%+v %v, want %+v", got, err, r)
	}
	if err := RemoveRecord(home, 78); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("another's pid removed the record: %v", err)
	}
	if err := RemoveRecord(home, 77); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Fatalf("the record stays: %v", err)
	}
	if err := RemoveRecord(home, 77); err != nil {
		t.Fatalf("removing none: %v", err)
	}
}

// TestRecordRefusals: a link at the record or its folder, a record
// others can read, one that doesn't decode strictly or names a port off
// 127.0.0.1, is refused; nothing is written through a link.
func TestRecordRefusals(t *testing.T) {
	good := Record{URL: BaseURL(40123), Port: 40123, PID: 1}
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, home, dir, p string)
		want  string
	}{
		{"record is a link", func(t *testing.T, home, dir, p string) {
			os.WriteFile(filepath.Join(home, "elsewhere"), []byte(`{"url":"http://127.0.0.1:1/v1","port":1,"pid":1}`), 0o600)
			os.Symlink(filepath.Join(home, "elsewhere"), p)
		}, "link"},
		{"models is a link", func(t *testing.T, home, dir, p string) {
			os.MkdirAll(filepath.Join(home, "m"), 0o700)
			os.WriteFile(filepath.Join(home, "m", RecordName), []byte(`{"url":"http://127.0.0.1:1/v1","port":1,"pid":1}`), 0o600)
			os.Symlink(filepath.Join(home, "m"), dir)
		}, "link"},
		{"readable by others", func(t *testing.T, home, dir, p string) {
			os.WriteFile(p, []byte(`{"url":"http://127.0.0.1:1/v1","port":1,"pid":1}`), 0o644)
		}, "not the owner's own"},
		{"folder open to others", func(t *testing.T, home, dir, p string) {
			os.WriteFile(p, []byte(`{"url":"http://127.0.0.1:1/v1","port":1,"pid":1}`), 0o600)
			os.Chmod(dir, 0o755)
		}, "mode 0700"},
		{"unknown field", func(t *testing.T, home, dir, p string) {
			os.WriteFile(p, []byte(`{"url":"http://127.0.0.1:1/v1","port":1,"pid":1,"host":"0.0.0.0"}`), 0o600)
		}, "unknown field"},
		{"url off loopback", func(t *testing.T, home, dir, p string) {
			os.WriteFile(p, []byte(`{"url":"http://model.test:1/v1","port":1,"pid":1}`), 0o600)
		}, "is not http://127.0.0.1:1/v1"},
		{"port out of range", func(t *testing.T, home, dir, p string) {
			os.WriteFile(p, []byte(`{"url":"http://127.0.0.1:70000/v1","port":70000,"pid":1}`), 0o600)
		}, "not a TCP port"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := testenv.Home(t)
			if err := os.MkdirAll(filepath.Join(home, ".lnk"), 0o700); err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(home, ".lnk", "models")
			p := filepath.Join(dir, RecordName)
			if tc.name != "models is a link" {
				os.Mkdir(dir, 0o700)
			}
			tc.setup(t, home, dir, p)
			if _, err := ReadRecord(home); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("read: %v, want %q", err, tc.want)
			}
		})
	}
	// Writing never goes through a link: the file it points to stays.
	home := testenv.Home(t)
	os.MkdirAll(filepath.Join(home, ".lnk", "models"), 0o700)
	target := filepath.Join(home, "target")
	os.WriteFile(target, []byte("mine"), 0o600)
	os.Symlink(target, filepath.Join(home, ".lnk", "models", RecordName))
	if err := WriteRecord(home, good); err == nil {
		t.Fatal("wrote over a link")
	}
	if b, _ := os.ReadFile(target); string(b) != "mine" {
		t.Fatalf("the link's target became %q", b)
	}
	// The positive control: the same write in a clean home.
	if err := WriteRecord(testenv.Home(t), good); err != nil {
		t.Fatal(err)
	}
	if err := WriteRecord(testenv.Home(t), Record{URL: "http://0.0.0.0:1/v1", Port: 1, PID: 1}); err == nil {
		t.Fatal("wrote a record off 127.0.0.1")
	}
}
