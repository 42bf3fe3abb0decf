package memory_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ncruces/go-sqlite3"

	"lnk.dev/lnk/services/memory"
)

func TestIndexSearchReadList(t *testing.T) {
	d := newDirs(t, "ada")
	write(t, d.home+"/memory/tea.md", "# Drinks\nThe owner likes green tea in the morning.\n")
	write(t, d.home+"/memory/deep/er/plans.md", "Trip to Lisbon in May.\n")
	write(t, d.own+"/chats/main/conversation.md", "## You\nRemind me about the dentist on Friday.\n")
	write(t, d.home+"/notes-outside.md", "lighthouse outside memory\n")
	a, _ := openAgent(t, d)
	if err := a.Refresh(); err != nil {
		t.Fatal(err)
	}
	if got := mustSearch(t, a, "green TEA"); !slices.Equal(got, []string{"memory/tea.md"}) {
		t.Errorf("search green tea = %v", got)
	}
	if got := mustSearch(t, a, "lisbon"); !slices.Equal(got, []string{"memory/deep/er/plans.md"}) {
		t.Errorf("search lisbon = %v", got)
	}
	if got := mustSearch(t, a, "dentist"); !slices.Equal(got, []string{"chats/main/conversation.md"}) {
		t.Errorf("search dentist = %v", got)
	}
	// The rest of Home is never read.
	if got := mustSearch(t, a, "lighthouse"); len(got) != 0 {
		t.Errorf("search found %v outside memory/", got)
	}
	// FTS5 syntax in the words is no syntax.
	if got := mustSearch(t, a, `tea" OR "lisbon NEAR(`); len(got) != 0 {
		t.Errorf("operators were taken as syntax: %v", got)
	}
	text, size, err := a.Read("memory/tea.md", 0)
	if err != nil || !strings.Contains(text, "green tea") || size != int64(len(text)) {
		t.Errorf("read = %q %d %v", text, size, err)
	}
	for _, p := range []string{"notes-outside.md", "memory/../notes-outside.md", "/etc/passwd", "memory"} {
		if _, _, err := a.Read(p, 0); !errors.Is(err, memory.ErrNotIndexed) {
			t.Errorf("read %q: %v, want ErrNotIndexed", p, err)
		}
	}
	ls, err := a.List(time.Time{})
	if err != nil || len(ls) != 3 {
		t.Fatalf("list = %v %v", ls, err)
	}
	if ls[0].Title == "" || !slices.ContainsFunc(ls, func(l memory.Listed) bool { return l.Title == "Drinks" }) {
		t.Errorf("titles: %v", ls)
	}

	before := time.Now()
	time.Sleep(10 * time.Millisecond)
	if err := os.Remove(d.home + "/memory/tea.md"); err != nil {
		t.Fatal(err)
	}
	write(t, d.home+"/memory/deep/er/plans.md", "Trip to Porto in June.\n")
	if err := a.Refresh(); err != nil {
		t.Fatal(err)
	}
	if got := mustSearch(t, a, "tea"); len(got) != 0 {
		t.Errorf("deleted document still found: %v", got)
	}
	if got := mustSearch(t, a, "lisbon"); len(got) != 0 {
		t.Errorf("old text still found: %v", got)
	}
	if got := mustSearch(t, a, "porto"); len(got) != 1 {
		t.Errorf("new text not found: %v", got)
	}
	ls, err = a.List(before)
	if err != nil {
		t.Fatal(err)
	}
	var changed, deleted []string
	for _, l := range ls {
		if l.Deleted {
			deleted = append(deleted, l.Path+" "+l.Title)
		} else {
			changed = append(changed, l.Path)
		}
	}
	if !slices.Equal(changed, []string{"memory/deep/er/plans.md"}) || !slices.Equal(deleted, []string{"memory/tea.md Drinks"}) {
		t.Errorf("list since: changed %v deleted %v", changed, deleted)
	}
}

// Each of a link, a fifo, a 2 MiB file, a hidden folder and another
// uid's file is left out alone, logged; the rest is indexed.
func TestRefusedAlone(t *testing.T) {
	d := newDirs(t, "ada")
	outside := filepath.Join(d.root, "secret")
	write(t, outside+"/s.md", "zanzibar secret\n")
	write(t, d.home+"/memory/good.md", "kumquat good\n")
	write(t, d.home+"/memory/.hidden/h.md", "zanzibar hidden\n")
	if err := os.Symlink(outside, d.home+"/memory/linkdir"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside+"/s.md", d.home+"/memory/link.md"); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(d.home+"/memory/fifo.md", 0o600); err != nil {
		t.Fatal(err)
	}
	write(t, d.home+"/memory/big.md", "zanzibar "+strings.Repeat("x", 2<<20))
	write(t, d.home+"/memory/paper.pdf", "%PDF-1.7 zanzibar\n")
	write(t, d.home+"/memory/max.md", "quince "+strings.Repeat("y", 1<<20-len("quince ")))
	if err := os.Symlink(outside+"/s.md", d.own+"/chats/main"); err != nil {
		t.Fatal(err)
	}
	a, log := openAgent(t, d)
	done := make(chan error, 1)
	go func() { done <- a.Refresh() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("refresh blocked (on the fifo?)")
	}
	if got := mustSearch(t, a, "kumquat"); len(got) != 1 {
		t.Errorf("good file not indexed: %v", got)
	}
	if got := mustSearch(t, a, "quince"); len(got) != 1 {
		t.Errorf("a file of exactly 1 MiB not indexed: %v", got)
	}
	if got := mustSearch(t, a, "zanzibar"); len(got) != 0 {
		t.Errorf("found %v through a link, a hidden folder or a 2 MiB file", got)
	}
	for _, p := range []string{"memory/linkdir", "memory/link.md", "memory/fifo.md", "memory/big.md", "memory/paper.pdf", "chats/main"} {
		if !log.has(p + " left out") {
			t.Errorf("%s not logged as left out: %v", p, log.lines)
		}
	}
	if log.has(".hidden") {
		t.Errorf("a hidden folder is skipped, not refused: %v", log.lines)
	}
	// Each refusal is logged once, not at every refresh while it stands.
	n := len(log.lines)
	if err := a.Refresh(); err != nil {
		t.Fatal(err)
	}
	if len(log.lines) != n {
		t.Errorf("a second refresh logged again: %v", log.lines[n:])
	}
}

// A folder swapped for a link between the walk's look and its open is
// refused; what is beside it is indexed.
func TestFolderSwappedForLink(t *testing.T) {
	d := newDirs(t, "ada")
	outside := filepath.Join(d.root, "secret")
	write(t, outside+"/s.md", "zanzibar secret\n")
	write(t, d.home+"/memory/sub/a.md", "harmless before the swap\n")
	write(t, d.home+"/memory/z.md", "kumquat after\n")
	a, log := openAgent(t, d)
	swapped := false
	a.SetBeforeOpen(func(p string) {
		if p == "memory/sub" && !swapped {
			swapped = true
			if err := os.RemoveAll(d.home + "/memory/sub"); err != nil {
				t.Error(err)
			}
			if err := os.Symlink(outside, d.home+"/memory/sub"); err != nil {
				t.Error(err)
			}
		}
	})
	if err := a.Refresh(); err != nil {
		t.Fatal(err)
	}
	if !swapped {
		t.Fatal("the hook never ran")
	}
	if got := mustSearch(t, a, "zanzibar"); len(got) != 0 {
		t.Errorf("read through the swapped-in link: %v", got)
	}
	if got := mustSearch(t, a, "kumquat"); len(got) != 1 {
		t.Errorf("the file beside it was not indexed: %v", got)
	}
	if !log.has("memory/sub left out") {
		t.Errorf("swap not logged: %v", log.lines)
	}
}

// A hard link is a regular file, read by its path.
func TestHardLinkIndexed(t *testing.T) {
	d := newDirs(t, "ada")
	write(t, d.home+"/other.md", "persimmon\n")
	if err := os.Link(d.home+"/other.md", d.home+"/memory/hard.md"); err != nil {
		t.Fatal(err)
	}
	a, _ := openAgent(t, d)
	if err := a.Refresh(); err != nil {
		t.Fatal(err)
	}
	if got := mustSearch(t, a, "persimmon"); !slices.Equal(got, []string{"memory/hard.md"}) {
		t.Errorf("hard link: %v", got)
	}
}

// An index whose schema isn't Link's is refused; Link's own reopens.
func TestSchemaUntrusted(t *testing.T) {
	d := newDirs(t, "ada")
	write(t, d.home+"/memory/a.md", "kumquat\n")
	a, _ := openAgent(t, d)
	if err := a.Refresh(); err != nil {
		t.Fatal(err)
	}
	a.Close()
	// Positive control: Link's own index opens again and keeps its copy.
	b, _ := openAgent(t, d)
	if got := mustSearch(t, b, "kumquat"); len(got) != 1 {
		t.Fatalf("reopened index lost its copy: %v", got)
	}
	b.Close()

	db := d.own + "/memory/" + memory.Engine + "/index.db"
	for name, sql := range map[string]string{
		"trigger": `CREATE TRIGGER t AFTER INSERT ON docs BEGIN DELETE FROM deleted; END`,
		"view":    `CREATE VIEW v AS SELECT 1`,
		"table":   `CREATE TABLE extra(x)`,
	} {
		t.Run(name, func(t *testing.T) {
			c, err := sqlite3.Open(db)
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Exec(sql); err != nil {
				t.Fatal(err)
			}
			c.Close()
			home, _ := os.Open(d.home)
			own, _ := os.Open(d.own)
			defer home.Close()
			defer own.Close()
			_, err = memory.OpenAgent("ada", home, own)
			if !errors.Is(err, memory.ErrNotLinks) || !strings.Contains(err.Error(), "hint:") {
				t.Errorf("opened an index with a %s added: %v", name, err)
			}
			c, _ = sqlite3.Open(db)
			kind := map[string]string{"trigger": "TRIGGER t", "view": "VIEW v", "table": "TABLE extra"}[name]
			if err := c.Exec(`DROP ` + kind); err != nil {
				t.Fatal(err)
			}
			c.Close()
		})
	}
	// A file that isn't SQLite at all.
	if err := os.WriteFile(db, []byte("not a database, just text long enough to be a header of some kind......................................................."), 0o600); err != nil {
		t.Fatal(err)
	}
	home, _ := os.Open(d.home)
	own, _ := os.Open(d.own)
	defer home.Close()
	defer own.Close()
	if _, err := memory.OpenAgent("ada", home, own); err == nil {
		t.Error("opened a file that is not an index")
	}
}
