package store

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// decoy makes, at path, a folder like the one it stands in for: the
// Agent/ folder, chats/ or a thread's, each holding a conversation t
// whose log and readable copy say DECOY.
func decoy(t *testing.T, path, what string) {
	t.Helper()
	th := path
	switch what {
	case "Agent":
		th = filepath.Join(path, "chats", "t")
	case "chats":
		th = filepath.Join(path, "t")
	}
	if err := os.MkdirAll(th, 0o700); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(th, "events.jsonl"), []byte(line(1, "DECOY")+line(2, "DECOY")+line(50, "DECOY")), 0o600)
	os.WriteFile(filepath.Join(th, "conversation.md"), []byte("DECOY\n"), 0o600)
	os.WriteFile(filepath.Join(th, "1.json"), []byte(line(1, "DECOY")), 0o600)
}

// TestAFolderSwappedForALinkChangesNothing: with conversation t open,
// each folder on its way (Agent/, chats/, the thread's own) is moved
// aside and a link to a decoy put in its place, as a run call could.
// Appending, reading, compacting and writing the readable copy then go
// on in the real folder, through the handles held: the decoy's files
// are neither read (no DECOY event comes back) nor written (each is as
// it was), and the real log holds every event. A conversation opened
// afterwards from the held chats/ handle is made in the real chats/ too.
func TestAFolderSwappedForALinkChangesNothing(t *testing.T) {
	for _, what := range []string{"Agent", "chats", "thread"} {
		t.Run(what, func(t *testing.T) {
			dir, f := agent(t)
			c := chats(t, f)
			v, err := c.Open("t", Options{Compact: true})
			if err != nil {
				t.Fatal(err)
			}
			defer v.Close()
			says(t, v, "before")
			swapped := map[string]string{
				"Agent":  dir,
				"chats":  filepath.Join(dir, "chats"),
				"thread": filepath.Join(dir, "chats", "t"),
			}[what]
			aside := swapped + ".real"
			if err := os.Rename(swapped, aside); err != nil {
				t.Fatal(err)
			}
			bait := filepath.Join(t.TempDir(), "decoy")
			decoy(t, bait, what)
			if err := os.Symlink(bait, swapped); err != nil {
				t.Fatal(err)
			}
			snapshot := tree(t, bait)

			says(t, v, "after")
			if err := v.Compact(); err != nil {
				t.Fatalf("compacting after the swap: %v", err)
			}
			says(t, v, "compacted")
			got := texts(t, v)
			if strings.Join(got, ",") != "before,after,compacted" {
				t.Errorf("read after the swap: %q", got)
			}
			if w, err := c.Open("u", Options{}); err != nil {
				t.Errorf("another conversation after the swap: %v", err)
			} else {
				says(t, w, "u's")
				w.Close()
			}
			if now := tree(t, bait); now != snapshot {
				t.Errorf("the decoy changed:\n%s\nwas:\n%s", now, snapshot)
			}
			real := map[string]string{
				"Agent":  filepath.Join(aside, "chats", "t"),
				"chats":  filepath.Join(aside, "t"),
				"thread": aside,
			}[what]
			md := read(t, filepath.Join(real, "conversation.md"))
			for _, s := range []string{"before", "after", "compacted"} {
				if !strings.Contains(md, s) {
					t.Errorf("the real conversation.md lacks %q: %q", s, md)
				}
			}
			if what != "thread" {
				u := filepath.Join(filepath.Dir(real), "u", "events.jsonl")
				if !strings.Contains(read(t, u), "u's") {
					t.Errorf("u was not made in the real chats/")
				}
			}
		})
	}
}

// tree lists every file under dir with its content, for comparing.
func tree(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		b.WriteString(rel)
		if !d.IsDir() {
			data, _ := os.ReadFile(p)
			b.WriteString(": " + string(data))
		}
		b.WriteString("\n")
		return nil
	})
	return b.String()
}
