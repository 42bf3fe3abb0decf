package runtool

import (
	"testing"
)

// FuzzParseCall: no input panics; what parses has a program, no NUL, and
// a folder that is clean and relative.
func FuzzParseCall(f *testing.F) {
	f.Add([]byte(`{"argv":["true"]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseCall(b)
		if err != nil {
			return
		}
		if len(c.Argv) == 0 || c.Argv[0] == "" {
			t.Fatalf("no program: %q", b)
		}
		if _, err := ParseCall(b); err != nil {
			t.Fatal("not the same twice")
		}
		if c.Folder != "" {
			if c.Folder[0] == '/' {
				t.Fatalf("absolute folder %q", c.Folder)
			}
		}
	})
}

// FuzzParseRef: what parses has a valid ID and an offset not below 0.
func FuzzParseRef(f *testing.F) {
	f.Add([]byte(`{"id":"0123456789abcdef","offset":3}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := ParseRef(b)
		if err == nil && (!validID(r.ID) || r.Offset < 0) {
			t.Fatalf("%+v from %q", r, b)
		}
	})
}

// FuzzParseRecord: what parses re-encodes to a record that parses the
// same; a running one names a group, a supervisor and a boot.
func FuzzParseRecord(f *testing.F) {
	f.Add([]byte(`{"id":"0123456789abcdef","thread":"t","argv":["sleep","9"],"state":"running","boot":"b","supervisor":{"pid":5,"start":1},"group":{"pid":6,"start":2}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := ParseRecord(b)
		if err != nil {
			return
		}
		if r.State == StateRunning && (r.Group.PID <= 1 || r.Supervisor.PID <= 1 || r.Boot == "") {
			t.Fatalf("running naming nothing: %q", b)
		}
		r2, err := ParseRecord(r.encode())
		if err != nil || r2.ID != r.ID || r2.State != r.State || r2.Group != r.Group {
			t.Fatalf("re-encoded: %+v %v", r2, err)
		}
	})
}

// TestParseCallRefusals: each malformed call is refused, before any
// sandbox.
func TestParseCallRefusals(t *testing.T) {
	for _, bad := range []string{`{}`, `{"argv":[]}`, `{"argv":[""]}`, `{"argv":["a\u0000b"]}`, `{"argv":["x"],"folder":"/etc"}`,
		`{"argv":["x"],"folder":"../x"}`, `{"argv":["x"],"folder":"a//b"}`, `{"argv":["x"],"extra":1}`, `{"argv":["x"]} {}`, `{"argv":["x"],"argv":"y"}`, `{"argv":["x"],"argv":["y"]}`, `{"ARGV":["x"]}`, `[1]`} {
		if _, err := ParseCall([]byte(bad)); err == nil {
			t.Errorf("%s parsed", bad)
		}
	}
	if c, err := ParseCall([]byte(`{"argv":["sh","-c","x"],"folder":"work/a"}`)); err != nil || c.Folder != "work/a" {
		t.Fatalf("a good call: %+v %v", c, err)
	}
}

// TestCheckCommand: a name or path [commands] names passes, as does a
// path whose last name a bare entry names (the sandbox resolves it);
// two different paths, a relative path and a name not listed do not;
// with "*" anything passes untouched.
func TestCheckCommand(t *testing.T) {
	list := []string{"git", "/usr/bin/python3"}
	for _, ok := range [][]string{{"git"}, {"/usr/bin/git"}, {"/usr/bin/python3"}, {"python3"}} {
		if err := checkCommand(ok, list); err != nil {
			t.Errorf("%v: %v", ok, err)
		}
	}
	for _, bad := range [][]string{{"id"}, {"/opt/python3"}, {"./git"}, {"bin/git"}, {""}, {}} {
		if err := checkCommand(bad, list); err == nil {
			t.Errorf("%v passed", bad)
		}
	}
	if err := checkCommand([]string{"/no/such"}, []string{"*"}); err != nil {
		t.Fatal(err)
	}
}
