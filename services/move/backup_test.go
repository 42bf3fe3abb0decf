package move_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/services/move"
)

// backupAgent makes agent name under home as makeAgent does, with Link
// Harness's home (notes, a conversation store, a link, a .env of keys),
// instructions, a skill and a scheduled job.
func backupAgent(t *testing.T, home, name string) *caps.Agent {
	t.Helper()
	a := makeAgent(t, home, name)
	l := caps.Layout{Home: home}
	hh := filepath.Join(l.AgentDir(name), "Harnesses", caps.LinkHarness)
	write(t, filepath.Join(hh, "state", "notes.md"), "# notes\nthe owner likes tea\n", 0o600)
	write(t, filepath.Join(hh, "state", "deep", "conv.db"), "conversation store", 0o640)
	write(t, filepath.Join(hh, ".env"), "MODEL_KEY=sk-secret\n", 0o600)
	if err := os.Symlink("state/notes.md", filepath.Join(hh, "notes")); err != nil {
		t.Fatal(err)
	}
	own := l.OwnDir(name)
	write(t, filepath.Join(own, "instructions", "instruction.md"), "be brief\n", 0o600)
	write(t, filepath.Join(own, "skills", "tea", "SKILL.md"), "# tea\n", 0o600)
	write(t, filepath.Join(own, "chats", "c2.jsonl"), "{\"role\":\"assistant\",\"text\":\"hello\"}\n", 0o600)
	write(t, filepath.Join(own, "schedule", "job.json"), "{\"every\":\"1h\"}\n", 0o600)
	return a
}

func backup(t *testing.T, home, name string) *move.BackedUp {
	t.Helper()
	got, err := (&move.Backup{Home: home, Name: name}).Run(context.Background())
	if err != nil {
		t.Fatalf("backup: %v", err)
	}
	return got
}

// restore goes back to agent name's backup, the agent taken as stopped.
func restore(t *testing.T, home, name string, full bool) (*move.Restored, error) {
	t.Helper()
	ar, err := move.OpenBackup(home, name)
	if err != nil {
		return nil, err
	}
	defer ar.Close()
	r := &move.Restore{Home: home, Name: name, Full: full, Stopped: func() error { return nil }}
	return r.Run(context.Background(), ar)
}

func harnessHome(home, name string) string {
	return filepath.Join(caps.Layout{Home: home}.AgentDir(name), "Harnesses", caps.LinkHarness)
}

// TestBackupRestoreRoundTrip backs an agent up, changes and deletes its
// conversations, notes, instructions and skills, and restores: each is
// back byte for byte (and mode), its .env, settings, memory's index and
// scheduled jobs are as they were just before the restore (never in a
// backup), its files folder is untouched, and no .restoring-* is left.
func TestBackupRestoreRoundTrip(t *testing.T) {
	home := testenv.Home(t)
	backupAgent(t, home, "main")
	l := caps.Layout{Home: home}
	own, hh := l.OwnDir("main"), harnessHome(home, "main")
	noEnv := func(s string) string {
		var keep []string
		for _, line := range strings.Split(s, "\n") {
			if !strings.HasPrefix(line, "/.env ") {
				keep = append(keep, line)
			}
		}
		return strings.Join(keep, "\n")
	}
	before := map[string]string{}
	for _, d := range []string{hh, own + "/chats", own + "/instructions", own + "/skills"} {
		before[d] = snapshot(t, d)
	}
	got := backup(t, home, "main")
	if got.Harness != caps.LinkHarness || len(got.Written) != 2 {
		t.Fatalf("backed up %+v, want link.tar and Agent.tar", got)
	}

	// Changed, deleted, added after the backup.
	write(t, filepath.Join(hh, "state", "notes.md"), "# notes\nforgotten\n", 0o600)
	os.Remove(filepath.Join(hh, "state", "deep", "conv.db"))
	write(t, filepath.Join(hh, "state", "new.md"), "after the backup", 0o600)
	write(t, filepath.Join(own, "chats", "c1.jsonl"), "rewritten\n", 0o600)
	os.Remove(filepath.Join(own, "chats", "c2.jsonl"))
	os.RemoveAll(filepath.Join(own, "instructions"))
	write(t, filepath.Join(own, "skills", "other", "SKILL.md"), "# other\n", 0o600)
	// Never in a backup: changed now, left as changed by the restore.
	write(t, filepath.Join(hh, ".env"), "MODEL_KEY=sk-rotated\n", 0o600)
	write(t, filepath.Join(own, "memory", "index.db"), "newer index", 0o600)
	write(t, filepath.Join(own, "schedule", "job.json"), "{\"every\":\"2h\"}\n", 0o600)
	if _, err := caps.Allow(home, "main", caps.Grants{InternetHosts: []string{"example.org"}}); err != nil {
		t.Fatal(err)
	}
	kept := map[string]string{}
	for _, d := range []string{own + "/memory", own + "/schedule", l.ConfigDir("main"), l.FilesDir("main")} {
		kept[d] = snapshot(t, d)
	}
	env, _ := os.ReadFile(filepath.Join(hh, ".env"))

	res, err := restore(t, home, "main", false)
	if err != nil {
		t.Fatalf("restore: %v", err)
	}
	if strings.Join(res.Placed, ",") != "home,chats,instructions,skills" {
		t.Errorf("placed %v", res.Placed)
	}
	for d, want := range before {
		now := snapshot(t, d)
		if d == hh { // its .env is never in a backup: compared apart
			now, want = noEnv(now), noEnv(want)
		}
		if now != want {
			t.Errorf("%s after the restore:\n%s\nwant, as backed up:\n%s", d, now, want)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(hh, "state", "notes.md")); string(b) != "# notes\nthe owner likes tea\n" {
		t.Errorf("notes.md: %q, want the backup's", b)
	}
	if b, _ := os.ReadFile(filepath.Join(hh, "state", "deep", "conv.db")); string(b) != "conversation store" {
		t.Errorf("conv.db: %q, want the backup's", b)
	}
	if tgt, err := os.Readlink(filepath.Join(hh, "notes")); err != nil || tgt != "state/notes.md" {
		t.Errorf("the home's link came back as %q, %v", tgt, err)
	}
	for d, want := range kept {
		if now := snapshot(t, d); now != want {
			t.Errorf("%s changed by the restore:\n%s\nwant:\n%s", d, now, want)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(hh, ".env")); string(b) != string(env) {
		t.Errorf(".env: %q, want %q: never restored", b, env)
	}
	noRestoring(t, home)
}

// noRestoring fails when a .restoring-* folder is left in ~/Link/Agents.
func noRestoring(t *testing.T, home string) {
	t.Helper()
	left, _ := filepath.Glob(filepath.Join(caps.Layout{Home: home}.Agents(), ".restoring-*"))
	if len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}

// TestBackupArchivesAreStandardTar reads the archives with tar(1): each
// 600 in a 700 folder, link.tar holding the home but its .env, Agent.tar
// the conversations, instructions and skills, never memory's index or
// the scheduled jobs.
func TestBackupArchivesAreStandardTar(t *testing.T) {
	home := testenv.Home(t)
	backupAgent(t, home, "main")
	got := backup(t, home, "main")
	dir := filepath.Join(caps.Layout{Home: home}.FilesDir("main"), move.BackupDir)
	if fi, err := os.Lstat(dir); err != nil || fi.Mode() != os.ModeDir|0o700 {
		t.Fatalf("%s: %v %v, want a 0700 folder", dir, fi.Mode(), err)
	}
	list := map[string]string{}
	for _, p := range got.Written {
		fi, err := os.Lstat(p)
		if err != nil || fi.Mode() != 0o600 {
			t.Errorf("%s: %v %v, want a 0600 file", p, fi.Mode(), err)
		}
		out, err := exec.Command("tar", "tf", p).CombinedOutput()
		if err != nil {
			t.Fatalf("tar tf %s: %v: %s", p, err, out)
		}
		list[filepath.Base(p)] = string(out)
	}
	for _, want := range []string{"home/state/notes.md", "home/state/deep/conv.db", "home/notes"} {
		if !strings.Contains(list["link.tar"], want+"\n") {
			t.Errorf("link.tar lacks %s:\n%s", want, list["link.tar"])
		}
	}
	if strings.Contains(list["link.tar"], ".env") {
		t.Errorf("link.tar holds the .env of keys:\n%s", list["link.tar"])
	}
	for _, want := range []string{"chats/c1.jsonl", "chats/c2.jsonl", "instructions/instruction.md", "skills/tea/SKILL.md"} {
		if !strings.Contains(list["Agent.tar"], want+"\n") {
			t.Errorf("Agent.tar lacks %s:\n%s", want, list["Agent.tar"])
		}
	}
	for _, never := range []string{"memory", "schedule", "index.db", "job.json", "sandbox.toml", "agent.toml"} {
		if strings.Contains(list["Agent.tar"]+list["link.tar"], never) {
			t.Errorf("a backup holds %s:\n%s%s", never, list["Agent.tar"], list["link.tar"])
		}
	}
}

// TestBackupReplacesTheLastOne backs up twice: the second replaces the
// first whole, nothing else is left in the folder, and a restore goes
// back to the latest.
func TestBackupReplacesTheLastOne(t *testing.T) {
	home := testenv.Home(t)
	backupAgent(t, home, "main")
	own := caps.Layout{Home: home}.OwnDir("main")
	backup(t, home, "main")
	write(t, filepath.Join(own, "chats", "c1.jsonl"), "second backup\n", 0o600)
	backup(t, home, "main")
	names, _ := os.ReadDir(filepath.Join(caps.Layout{Home: home}.FilesDir("main"), move.BackupDir))
	var got []string
	for _, n := range names {
		got = append(got, n.Name())
	}
	if strings.Join(got, " ") != "Agent.tar link.tar" {
		t.Errorf(".lnk-backup holds %v, want the two archives alone", got)
	}
	write(t, filepath.Join(own, "chats", "c1.jsonl"), "after both\n", 0o600)
	if _, err := restore(t, home, "main", false); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(own, "chats", "c1.jsonl")); string(b) != "second backup\n" {
		t.Errorf("c1.jsonl: %q, want the latest backup's", b)
	}
}

// TestBackupRemovesALinkInTheFolderPlace puts links where the backup
// folder and an archive go, pointing outside: the folder's link is
// removed and a real folder made, the archive's link replaced as
// itself, and nothing is written where either pointed.
func TestBackupRemovesALinkInTheFolderPlace(t *testing.T) {
	home := testenv.Home(t)
	backupAgent(t, home, "main")
	files := caps.Layout{Home: home}.FilesDir("main")
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(files, move.BackupDir)); err != nil {
		t.Fatal(err)
	}
	backup(t, home, "main")
	if fi, err := os.Lstat(filepath.Join(files, move.BackupDir)); err != nil || !fi.IsDir() {
		t.Fatalf(".lnk-backup: %v, %v: want the link replaced by a folder", fi.Mode(), err)
	}
	if names, _ := os.ReadDir(outside); len(names) != 0 {
		t.Errorf("written through the link: %v", names)
	}
	// An archive's name a link to a file outside: replaced, the file
	// untouched.
	victim := filepath.Join(outside, "victim")
	write(t, victim, "not Link's", 0o600)
	at := filepath.Join(files, move.BackupDir, "Agent.tar")
	os.Remove(at)
	if err := os.Symlink(victim, at); err != nil {
		t.Fatal(err)
	}
	backup(t, home, "main")
	if b, _ := os.ReadFile(victim); string(b) != "not Link's" {
		t.Errorf("the link's target was written: %q", b)
	}
	if fi, err := os.Lstat(at); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("Agent.tar: %v %v, want a regular file in the link's place", fi.Mode(), err)
	}
}
