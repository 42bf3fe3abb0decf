package cli

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/services/toolbridge/tooldef"
)

// tool add keeps --env values (given, or read from stdin) in the
// definition, 0600, and prints none; tool list names the variables and
// never their values; tool remove removes it, and a second remove says
// there is none; an argument written relative to the folder it was added
// in is refused.
func TestToolAddListRemove(t *testing.T) {
	lnkBin(t)
	home := testenv.Home(t)
	const given, read = "val-given-31a9", "val-read-77c2"
	out, errOut, code := lnkRun(t, []byte(read+"\n"), "sandbox", "tool", "add", "notes", "--env", "API_KEY="+given, "--env", "TOKEN", "--", "/bin/cat")
	if code != 0 {
		t.Fatalf("tool add: %d %q %q", code, out, errOut)
	}
	store := tooldef.Store{Home: home}
	fi, err := os.Stat(store.Path("notes"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the definition: %v %v", fi, err)
	}
	d, err := store.Load("notes")
	if err != nil {
		t.Fatal(err)
	}
	if string(d.Env["API_KEY"].Bytes()) != given || string(d.Env["TOKEN"].Bytes()) != read {
		t.Error("the --env values are not what was given and read")
	}
	d.Destroy()
	for _, args := range [][]string{{"sandbox", "tool", "list"}, {"sandbox", "tool", "list", "--json"}} {
		out, errOut, code := lnkRun(t, nil, args...)
		if code != 0 || !strings.Contains(out, "notes") || strings.Contains(out+errOut, given) || strings.Contains(out+errOut, read) {
			t.Errorf("%v: %d %q %q", args, code, out, errOut)
		}
		if strings.HasSuffix(args[len(args)-1], "json") {
			var rows []struct {
				Name string   `json:"name"`
				Env  []string `json:"env"`
			}
			if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 1 || !strings.Contains(strings.Join(rows[0].Env, ","), "API_KEY") {
				t.Errorf("tool list --json: %v %s", err, out)
			}
		}
	}
	for _, rel := range []string{"./x", "../x", "."} {
		if _, _, code := lnkRun(t, nil, "sandbox", "tool", "add", "rel", "--", "/bin/cat", rel); code == 0 {
			t.Errorf("an argument relative to the folder it was added in, %q, was taken", rel)
		}
	}
	if out, errOut, code := lnkRun(t, nil, "sandbox", "tool", "remove", "notes"); code != 0 || !strings.Contains(out, "removed tool notes") {
		t.Fatalf("tool remove: %d %q %q", code, out, errOut)
	}
	if _, err := os.Stat(store.Path("notes")); !os.IsNotExist(err) {
		t.Errorf("the definition is left after remove: %v", err)
	}
	if _, _, code := lnkRun(t, nil, "sandbox", "tool", "remove", "notes"); code == 0 {
		t.Error("removing a tool there is none of succeeded")
	}
}
