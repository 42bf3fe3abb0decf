package caps

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"lnk.dev/lnk/internal/testenv"
)

func mustWrite(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

func names(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	sort.Strings(out)
	return out
}

// TestDeleteAgentKeepsItsOwnFolderAndHome: History keeps Agent/, Home and
// the logs; its Config/ and its harnesses' homes (where a harness keeps
// its .env of keys) are gone, and so is the agent from ~/Link/Agents.
func TestDeleteAgentKeepsItsOwnFolderAndHome(t *testing.T) {
	home := testenv.Home(t)
	l := Layout{Home: home}
	a, err := CreateAgent(home, "a")
	if err != nil {
		t.Fatal(err)
	}
	mustWrite(t, l.FilesDir("a")+"/work/notes.md", "kept")
	mustWrite(t, l.OwnDir("a")+"/chats/1.json", "chat")
	mustWrite(t, l.AgentDir("a")+"/Harnesses/h/.env", "MODEL_KEY=secret")
	mustWrite(t, l.LogsDir("a")+"/harness.log", "log")
	before := time.Now().UTC()
	dest, err := DeleteAgent(home, "a")
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(dest) != l.HistoryAgents() || !strings.HasPrefix(filepath.Base(dest), "a-"+a.ID[:8]+"-") {
		t.Fatalf("entry %s", dest)
	}
	when, ok := parseHistoryName(filepath.Base(dest))
	if !ok || when.Before(before.Add(-time.Second)) || when.After(time.Now().Add(time.Second)) {
		t.Fatalf("entry name %s does not parse to now (%v %v)", dest, when, ok)
	}
	if got := names(t, dest); strings.Join(got, ",") != "Agent,Home,logs" {
		t.Fatalf("entry holds %v, want Agent, Home, logs", got)
	}
	for p, want := range map[string]string{dest + "/Home/work/notes.md": "kept", dest + "/Agent/chats/1.json": "chat", dest + "/logs/harness.log": "log"} {
		if b, err := os.ReadFile(p); err != nil || string(b) != want {
			t.Fatalf("%s: %q %v", p, b, err)
		}
	}
	for _, gone := range []string{l.AgentDir("a"), filepath.Dir(l.LogsDir("a"))} {
		if _, err := os.Lstat(gone); !os.IsNotExist(err) {
			t.Fatalf("%s still there: %v", gone, err)
		}
	}
	wantMode(t, l.History(), os.ModeDir|0o700)
	wantMode(t, l.HistoryAgents(), os.ModeDir|0o700)
	// A new agent of the name starts with nothing of the old one.
	if _, err := CreateAgent(home, "a"); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(l.LogsDir("a")); len(ents) != 0 {
		t.Fatalf("the new agent has the old one's logs: %v", ents)
	}
}

// TestSweepHistory: an entry past keep_moved goes, with what is in it,
// never following a link inside it; a recent one, a name Link does not
// make, and a link with an expired entry's name all stay.
func TestSweepHistory(t *testing.T) {
	home := testenv.Home(t)
	l := Layout{Home: home}
	now := time.Now()
	outside := t.TempDir()
	mustWrite(t, outside+"/precious", "mine")
	old := historyName("old", NewID(), now.Add(-31*24*time.Hour))
	recent := historyName("recent", NewID(), now.Add(-29*24*time.Hour))
	linked := historyName("linked", NewID(), now.Add(-40*24*time.Hour))
	mustWrite(t, l.HistoryAgents()+"/"+old+"/Home/f", "x")
	if err := os.Symlink(outside, l.HistoryAgents()+"/"+old+"/Home/out"); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, l.HistoryAgents()+"/"+recent+"/Home/f", "x")
	mustWrite(t, l.HistoryAgents()+"/notes-of-mine/f", "x")
	// A delete cut short after its rename: the sweep finishes it.
	staged := historyName("cut", NewID(), now.Add(-time.Hour))
	mustWrite(t, l.HistoryAgents()+"/.deleting-"+staged+"/Harnesses/h/.env", "KEY=secret")
	mustWrite(t, l.HistoryAgents()+"/.deleting-"+staged+"/Config/agent.toml", "id")
	mustWrite(t, l.HistoryAgents()+"/.deleting-"+staged+"/Home/f", "kept")
	if err := os.Symlink(outside, l.HistoryAgents()+"/"+linked); err != nil {
		t.Fatal(err)
	}
	os.Chmod(l.History(), 0o700)
	swept, err := SweepHistory(home, DefaultKeepMoved, now)
	if err != nil || len(swept) != 1 || swept[0] != old {
		t.Fatalf("swept %v %v, want only %s", swept, err, old)
	}
	want := []string{linked, "notes-of-mine", recent, staged}
	sort.Strings(want)
	if got := names(t, l.HistoryAgents()); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("left %v, want %v", got, want)
	}
	if b, err := os.ReadFile(outside + "/precious"); err != nil || string(b) != "mine" {
		t.Fatalf("the sweep reached through a link: %q %v", b, err)
	}
	if got := names(t, l.HistoryAgents()+"/"+staged); strings.Join(got, ",") != "Home" {
		t.Fatalf("the staged entry, finished, holds %v", got)
	}
	// keep_moved shorter than the recent one's age: it goes too.
	if swept, err := SweepHistory(home, 7*24*time.Hour, now.Add(2*time.Hour)); err != nil || len(swept) != 1 || swept[0] != recent {
		t.Fatalf("with keep_moved 7d: %v %v", swept, err)
	}
}

// TestMigrateMoved: what an older Link kept in ~/Link/Agents/.moved moves
// to History named from its agent.toml, and .moved goes; a link there is
// left and named.
func TestMigrateMoved(t *testing.T) {
	home := testenv.Home(t)
	l := Layout{Home: home}
	id := NewID()
	moved := l.Agents() + "/.moved"
	mustWrite(t, moved+"/x-1/Config/agent.toml", "id = \""+id+"\"\nname = \"bob\"\nowner = \"u\"\ncreated = \"2020-01-01T00:00:00Z\"\n")
	mustWrite(t, moved+"/x-1/Home/f", "kept")
	mustWrite(t, moved+"/plain/Home/g", "kept")
	now := time.Now()
	got, err := MigrateMoved(home, now)
	if err != nil || len(got) != 2 {
		t.Fatalf("migrated %v %v", got, err)
	}
	if _, err := os.Lstat(moved); !os.IsNotExist(err) {
		t.Fatalf(".moved is still there: %v", err)
	}
	ents := names(t, l.HistoryAgents())
	if len(ents) != 2 || !strings.HasPrefix(ents[0], "bob-"+id[:8]+"-") || !strings.HasPrefix(ents[1], "plain-") {
		t.Fatalf("history holds %v", ents)
	}
	if b, _ := os.ReadFile(l.HistoryAgents() + "/" + ents[1] + "/Home/g"); string(b) != "kept" {
		t.Fatal("the files did not move with it")
	}
	// Kept keep_moved from now, not swept at once.
	if swept, err := SweepHistory(home, DefaultKeepMoved, now); err != nil || len(swept) != 0 {
		t.Fatalf("swept %v %v", swept, err)
	}
	// A link in .moved is not moved, and is named.
	outside := t.TempDir()
	os.MkdirAll(moved, 0o700)
	os.Symlink(outside, moved+"/evil")
	got, err = MigrateMoved(home, now)
	if err == nil || !strings.Contains(err.Error(), "evil") || len(got) != 0 {
		t.Fatalf("a link in .moved: %v %v", got, err)
	}
	if fi, err := os.Lstat(moved + "/evil"); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was touched: %v", err)
	}
}
