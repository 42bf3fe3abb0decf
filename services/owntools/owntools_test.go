package owntools

import (
	"errors"
	"strings"
	"testing"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/services/toolbridge/tooldef"
)

// TestDefinedOnlyWithTheSandbox: a sandboxed agent gets run-<id>,
// file-<id>, memory-<id> and scheduler-<id>, each serving that agent from Link's folder;
// with its sandbox off it gets none. No added tool may take either name and no
// grant may name either.
func TestDefinedOnlyWithTheSandbox(t *testing.T) {
	a := caps.Agent{ID: "0123456789abcdef0123456789abcdef", Name: "ada"}
	defs, err := For("/home/o", "/opt/lnk/bin", a, true)
	if err != nil || len(defs) != 4 {
		t.Fatalf("%v %v", defs, err)
	}
	want := map[string]string{
		"run-" + a.ID:       "/opt/lnk/bin/lnk-run-tool serve --agent ada",
		"file-" + a.ID:      "/opt/lnk/bin/lnk-file-tool serve --agent ada",
		"memory-" + a.ID:    "/opt/lnk/bin/lnk-memory connect --agent ada",
		"scheduler-" + a.ID: "/opt/lnk/bin/lnk-scheduler-tool serve --agent ada",
	}
	for _, d := range defs {
		if got := strings.Join(d.Command, " "); got != want[d.Name] {
			t.Errorf("%s runs %q, want %q", d.Name, got, want[d.Name])
		}
		if string(d.Env["HOME"].Bytes()) != "/home/o" || len(d.Env) != 2 {
			t.Errorf("%s's environment: %v", d.Name, d.Environ())
		}
		if err := tooldef.CheckName(d.Name); !errors.Is(err, tooldef.ErrName) {
			t.Errorf("%s could be an added tool's name: %v", d.Name, err)
		}
		spec := caps.Spec{Tools: &caps.ToolsSpec{Grant: map[string]caps.ToolSpec{d.Name: {}}}}
		if _, err := caps.CompileSpec(t.TempDir(), "/", &spec); !errors.Is(err, caps.ErrOwnTool) {
			t.Errorf("a grant may name %s: %v", d.Name, err)
		}
	}
	if defs, err := For("/home/o", "/opt/lnk/bin", a, false); err != nil || len(defs) != 0 {
		t.Fatalf("with the sandbox off: %v %v", defs, err)
	}
}
