package cli

import (
	"encoding/json"
	"runtime/debug"
	"strings"
	"testing"
)

// TestBuildVersionPrefersLinkTimeValues: the Makefile's values win over
// Go's vcs stamp; without them the stamp names the commit; with neither
// the commit is said to be unknown, never left out.
func TestBuildVersionPrefersLinkTimeValues(t *testing.T) {
	stamp := &debug.BuildInfo{GoVersion: "go1.99", Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "1111111111111111111111111111111111111111"},
		{Key: "vcs.modified", Value: "true"},
	}}
	v := buildVersion("v1.2-3-gabcdef0-dirty", "abcdef0abcdef0abcdef0abcdef0abcdef0abcd", stamp)
	if v.Version != "v1.2-3-gabcdef0-dirty" || v.Commit != "abcdef0abcdef0abcdef0abcdef0abcdef0abcd" || !v.Modified || v.Go != "go1.99" {
		t.Errorf("link-time values: %+v", v)
	}
	v = buildVersion("", "", stamp)
	if v.Commit != "1111111111111111111111111111111111111111" || !v.Modified || v.Version != "111111111111-dirty" {
		t.Errorf("vcs fallback: %+v", v)
	}
	if s := v.String(); !strings.Contains(s, "commit 1111111111111111111111111111111111111111 (modified)") || !strings.Contains(s, "go1.99") {
		t.Errorf("line: %q", s)
	}
	v = buildVersion("", "", nil)
	if v.Version != "dev" || v.Commit != "" || !strings.Contains(v.String(), "commit unknown") {
		t.Errorf("nothing known: %+v %q", v, v.String())
	}
}

// TestVersionJSON: --json prints the four fields; without it one line.
func TestVersionJSON(t *testing.T) {
	code, out, errs := runLnk(t, "version", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for _, k := range []string{"version", "commit", "modified", "go"} {
		if _, ok := v[k]; !ok {
			t.Errorf("no %q in %s", k, out)
		}
	}
	code, out, _ = runLnk(t, "version")
	if code != 0 || !strings.HasPrefix(out, "lnk ") || !strings.Contains(out, "(commit ") || strings.Count(out, "\n") != 1 {
		t.Errorf("version: %d %q", code, out)
	}
}
