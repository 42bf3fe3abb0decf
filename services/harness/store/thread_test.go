package store

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestThreadNamesAreAtMost128BytesNeverAPath: letters, digits, -, _, .,
// one : and at most one ~, at most 128 bytes, never a path.
func TestThreadNamesAreAtMost128BytesNeverAPath(t *testing.T) {
	for _, ok := range []string{"main", "link:bob", "schedule:daily~2", "a.b-c_d", strings.Repeat("a", 128), "~", ":", "..."} {
		if err := CheckThread(ok); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
	for _, bad := range []string{"", ".", "..", "a/b", "../x", "/etc", "a:b:c", "a~b~c", strings.Repeat("a", 129),
		"a b", "é", "a\x00", "a\n", "a\\b", "tab\t", "$x"} {
		if err := CheckThread(bad); err == nil {
			t.Errorf("%q taken", bad)
		}
	}
}

// FuzzCheckThread: a name CheckThread takes is one folder's name in
// chats/: no '/', not "." or "..", at most 128 bytes of the allowed
// characters, at most one ':' and one '~'.
func FuzzCheckThread(f *testing.F) {
	f.Fuzz(func(t *testing.T, name string) {
		if CheckThread(name) != nil {
			return
		}
		if filepath.Base(name) != name || name == "." || name == ".." || strings.ContainsAny(name, "/\x00") || len(name) > MaxThread || len(name) == 0 {
			t.Fatalf("%q taken", name)
		}
		if strings.Count(name, ":") > 1 || strings.Count(name, "~") > 1 {
			t.Fatalf("%q taken", name)
		}
		if strings.Trim(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.:~") != "" {
			t.Fatalf("%q taken", name)
		}
	})
}
