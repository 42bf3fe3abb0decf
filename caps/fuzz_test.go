package caps

import (
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParseSpec: no input makes ParseSpec panic; what it takes encodes
// and parses again to the same grants, and compiling it never panics.
func FuzzParseSpec(f *testing.F) {
	f.Add([]byte("[files]\nread = [\"~\"]\nwrite = [\"work\"]\n"))
	f.Add([]byte("[internet]\non = true\nhosts = [\"api.example.com\"]\nper_minute = 30\ntcp = [\"db.example.com:5432\"]\n"))
	f.Add([]byte("[localhost]\nports = [8080, \"*\"]\n[network]\nmode = \"host\"\n"))
	f.Add([]byte("[tools]\nstrangers = [\"memory\"]\n[tools.grant.gh]\nallow = [\"search\"]\nask = \"none\"\n"))
	f.Add([]byte("[teams.t]\nread = [\"docs\"]\n[model]\nallow = [\"m\"]\n[tool.run]\ntimeout = \"90s\"\n"))
	home := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseSpec("f.toml", data)
		if err != nil {
			if ruleOf(err) == "" || strings.Contains(err.Error(), "\n") {
				t.Fatalf("refusal %q has no rule or is not one line", err)
			}
			return
		}
		out, err := EncodeSpec(s)
		if err != nil {
			return // a value TOML can't write back (e.g. a key needing quotes) is still refused nowhere
		}
		if _, err := ParseSpec("f.toml", out); err != nil {
			t.Fatalf("encoded spec does not parse again: %v\n%s", err, out)
		}
		CompileSpec(home, home, s)
	})
}

// FuzzGrantPath: whatever the owner writes, a path GrantPath takes is
// absolute, cleaned, without NUL or "..", and under base when relative.
func FuzzGrantPath(f *testing.F) {
	for _, s := range []string{"~", "~/Projects/x", "/srv/data", "work", "a/../b", "~root", "x\x00y", "", "//a//b/", "~/.ssh", "./."} {
		f.Add(s)
	}
	home, base := "/home/u", "/home/u/Link/Agents/a/Home"
	c := checker{l: Layout{Home: home}, self: "a"}
	f.Fuzz(func(t *testing.T, p string) {
		abs, err := GrantPath(home, base, p)
		if err != nil {
			if ruleOf(err) == "" {
				t.Fatalf("refusal %v has no rule", err)
			}
			return
		}
		if !filepath.IsAbs(abs) || filepath.Clean(abs) != abs || strings.ContainsRune(abs, 0) {
			t.Fatalf("%q -> %q", p, abs)
		}
		for _, part := range strings.Split(abs, "/") {
			if part == ".." {
				t.Fatalf("%q -> %q has ..", p, abs)
			}
		}
		if !strings.HasPrefix(p, "/") && !strings.HasPrefix(p, "~") && !within(abs, base) {
			t.Fatalf("relative %q -> %q left base", p, abs)
		}
		if c.checkWrite(abs) == nil && (within(home, abs) || within(abs, home+"/.lnk") || within(abs, home+"/Link/Agents/b")) {
			t.Fatalf("%q -> %q written", p, abs)
		}
	})
}
