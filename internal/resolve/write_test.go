package resolve

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteAndVersions(t *testing.T) {
	bothWalks(t, func(t *testing.T, r *Root) {
		v1, err := r.WriteFile("a/new-"+t.Name()[len(t.Name())-3:], []byte("one"), WriteOptions{Expect: Absent})
		if err != nil {
			t.Fatal(err)
		}
		name := "a/new-" + t.Name()[len(t.Name())-3:]
		if _, err := r.WriteFile(name, []byte("x"), WriteOptions{Expect: Absent}); !errors.Is(err, ErrExists) {
			t.Fatalf("Absent over an existing file: %v", err)
		}
		b, v, err := r.ReadFile(name, 10)
		if err != nil || string(b) != "one" || v != v1 {
			t.Fatalf("read back %q %v %v (wrote %v)", b, v, err, v1)
		}
		v2, err := r.Replace(name, []byte("two"), v1)
		if err != nil {
			t.Fatal(err)
		}
		if v2 == v1 {
			t.Fatal("a replace kept the version")
		}
		if _, err := r.Replace(name, []byte("three"), v1); !errors.Is(err, ErrChanged) {
			t.Fatalf("replace naming a stale version: %v", err)
		}
		if _, err := r.Replace(name, []byte("three"), Version{}); !errors.Is(err, ErrChanged) {
			t.Fatalf("replace naming no version: %v", err)
		}
		if _, err := r.Replace("a/never", []byte("x"), v2); !errors.Is(err, ErrChanged) {
			t.Fatalf("replace of a missing file naming a version: %v", err)
		}
		b, _, _ = r.ReadFile(name, 10)
		if string(b) != "two" {
			t.Fatalf("file holds %q after refused replaces", b)
		}
		// The zero version replaces whatever regular file is there.
		if _, err := r.WriteFile(name, []byte("four"), WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		must(t, r.Remove(name))
	})
}

func TestWriteRefusesLinksAndSpecials(t *testing.T) {
	bothWalks(t, func(t *testing.T, r *Root) {
		for _, c := range []struct {
			name string
			want error
		}{
			{"ln-out/secret", ErrLink},
			{"ln-abs/secret", ErrLink},
			{"ln-in/b/x", ErrLink},
			{"ln-dangling", ErrLink},
			{"ln-out", ErrLink},
			{"fifo", ErrNotRegular},
			{"a", ErrNotRegular},
			{".", ErrInvalid},
			{"../outside/secret", ErrEscape},
			{"a/..", ErrEscape},
			{"missing/x", ErrNotFound},
		} {
			if _, err := r.WriteFile(c.name, []byte("x"), WriteOptions{}); !errors.Is(err, c.want) {
				t.Errorf("WriteFile(%q) = %v; want %v", c.name, err, c.want)
			}
		}
	})
}

func TestWriteModeAndCleanup(t *testing.T) {
	base := testTree(t)
	r := openRoot(t, filepath.Join(base, "root"))
	if _, err := r.WriteFile("m", []byte("x"), WriteOptions{Mode: 0o7755}); err != nil {
		t.Fatal(err)
	}
	st, err := os.Lstat(filepath.Join(base, "root", "m"))
	if err != nil || st.Mode() != 0o755 {
		t.Fatalf("mode %v (%v); want 0755 without setuid, setgid, sticky", st.Mode(), err)
	}
	// Rewriting without a mode keeps it.
	if _, err := r.WriteFile("m", []byte("y"), WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Lstat(filepath.Join(base, "root", "m")); st.Mode() != 0o755 {
		t.Fatalf("mode %v after a rewrite; want kept", st.Mode())
	}
	if _, err := r.WriteFile("n", []byte("x"), WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Lstat(filepath.Join(base, "root", "n")); st.Mode() != 0o600 {
		t.Fatalf("new file mode %v; want 0600", st.Mode())
	}
	// No temporary file is left beside the targets, also after a refusal.
	r.WriteFile("fifo", []byte("x"), WriteOptions{})
	ents, _ := os.ReadDir(filepath.Join(base, "root"))
	for _, e := range ents {
		if len(e.Name()) > 0 && e.Name()[0] == '.' {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}

func TestVersionToken(t *testing.T) {
	for _, v := range []Version{{}, Absent, {Dev: 1, Ino: 2, Size: 3, MtimeNs: -4, CtimeNs: 1 << 62}} {
		got, err := ParseVersion(v.String())
		if err != nil || got != v {
			t.Errorf("ParseVersion(%q) = %+v, %v; want %+v", v.String(), got, err, v)
		}
	}
	for _, s := range []string{"v1:1:2:3:4", "v1:1:2:3:4:5:6", "v1:01:2:3:4:5", "v2:1:2:3:4:5", "ABSENT", "v1:1:2:3:4:5 "} {
		if _, err := ParseVersion(s); err == nil {
			t.Errorf("ParseVersion(%q) accepted", s)
		}
	}
}
