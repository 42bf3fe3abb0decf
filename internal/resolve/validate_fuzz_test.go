package resolve

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

func FuzzValidatePath(f *testing.F) {
	for _, s := range []string{"a/b.txt", ".", "", "/", "ln/", "ln/.", "ln//", "..", "a/../b", "./a", "a\x00b", strings.Repeat("x", 256), strings.Repeat("a/", 200) + "a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		err := ValidatePath(name)
		again := ValidatePath(name)
		if (err == nil) != (again == nil) {
			t.Fatalf("not deterministic: %v, %v", err, again)
		}
		if err != nil {
			if !errors.Is(err, ErrInvalid) && !errors.Is(err, ErrEscape) {
				t.Fatalf("refusal of an unknown class: %v", err)
			}
			if !errors.Is(err, ErrEscape) && (strings.HasPrefix(name, "/") || hasDotDot(name)) {
				t.Fatalf("%q refused as %v, not as an escape", name, err)
			}
			return
		}
		if name == "." {
			return
		}
		if !filepath.IsLocal(name) || hasDotDot(name) || filepath.Clean(name) != name {
			t.Fatalf("accepted %q: IsLocal %v, Clean %q", name, filepath.IsLocal(name), filepath.Clean(name))
		}
		if strings.IndexByte(name, 0) >= 0 || len(name) > MaxPath {
			t.Fatalf("accepted %q", name)
		}
		// What split gives back is valid too: a name's folder and last part.
		dir, base := split(name)
		if validate(dir) != nil || validate(base) != nil || strings.Contains(base, "/") {
			t.Fatalf("split(%q) = %q, %q", name, dir, base)
		}
	})
}

func hasDotDot(name string) bool {
	for _, c := range strings.Split(name, "/") {
		if c == ".." {
			return true
		}
	}
	return false
}

func FuzzParseVersion(f *testing.F) {
	f.Add("absent")
	f.Add("")
	f.Add("v1:1:2:3:4:5")
	f.Add("v1:fd01:1a2b:0:17b2c3d4e5f6a7b8:17b2c3d4e5f6a7b8")
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseVersion(s)
		if vb, errb := ParseVersionBytes([]byte(s)); vb != v || (errb == nil) != (err == nil) {
			t.Fatalf("%q: ParseVersion %+v (%v), ParseVersionBytes %+v (%v)", s, v, err, vb, errb)
		}
		if err != nil {
			return
		}
		if v.String() != s {
			t.Fatalf("ParseVersion(%q) = %+v, which spells %q", s, v, v.String())
		}
	})
}
