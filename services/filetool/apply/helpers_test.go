package apply

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// world is a files folder and an agent folder on disk, with a session
// over them.
type world struct {
	files, agent string
	disk         *Disk
	s            *Session
}

func newWorld(t testing.TB, write ...string) *world {
	t.Helper()
	base := t.TempDir()
	w := &world{files: filepath.Join(base, "files"), agent: filepath.Join(base, "agent")}
	for _, d := range []string{w.files, w.agent, filepath.Join(w.files, "work"), filepath.Join(w.agent, "chats"), filepath.Join(w.agent, "instructions")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	var err error
	if w.disk, err = OpenDisk(w.files, w.agent, write); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.disk.Close)
	if w.s, err = NewSession(w.disk, write); err != nil {
		t.Fatal(err)
	}
	return w
}

func (w *world) put(t testing.TB, name, text string) {
	t.Helper()
	p := filepath.Join(w.files, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

func (w *world) get(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(w.files, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// call runs one call with args given as a Go value.
func (w *world) call(name string, args any) (any, error) {
	b, _ := json.Marshal(args)
	return w.s.Call(name, b)
}

func (w *world) mustCall(t *testing.T, name string, args any) any {
	t.Helper()
	out, err := w.call(name, args)
	if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	return out
}

type m = map[string]any

// counting is Files that counts reads and can run a step between a
// call's read and its write, as another process would.
type counting struct {
	Files
	reads       int
	beforeWrite func()
}

func (c *counting) Read(name string, max int64) ([]byte, string, error) {
	c.reads++
	return c.Files.Read(name, max)
}

func (c *counting) Write(name string, data []byte, expect string) (string, error) {
	if c.beforeWrite != nil {
		c.beforeWrite()
	}
	return c.Files.Write(name, data, expect)
}
