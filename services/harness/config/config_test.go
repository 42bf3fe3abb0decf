package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func sample() *Config {
	return &Config{
		AgentID: strings.Repeat("ab", 16), Owner: "ana", Name: "helper", Key: NewKey(), Port: 20000,
		AgentDir: "/home/ana/Link/Agents/helper/Agent",
		Model:    Model{Format: "openai", BaseURL: "http://127.0.0.1:11434/v1", Model: "builtin", Key: "link-placeholder"},
		Tools:    map[string]string{"run": "LNK_TOOL_RUN", "file": "LNK_TOOL_FILE"},
	}
}

func openDir(t *testing.T, p string) int {
	t.Helper()
	fd, err := unix.Open(p, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	return fd
}

// Written by Write, config.json is 0600 and reads back the same.
func TestWriteReadBack(t *testing.T) {
	dir := t.TempDir()
	fd := openDir(t, dir)
	c := sample()
	if err := Write(fd, c); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(dir, File))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, %v; want 0600", st.Mode(), err)
	}
	got, err := ReadPath(filepath.Join(dir, File))
	if err != nil {
		t.Fatal(err)
	}
	if got.Key != c.Key || got.AgentID != c.AgentID || got.Model != c.Model || got.Tools["run"] != "LNK_TOOL_RUN" {
		t.Fatalf("read back %+v, want %+v", got, c)
	}
	if k, err := got.KeyBytes(); err != nil || len(k) != KeySize {
		t.Fatalf("key %d bytes, %v", len(k), err)
	}
	if NewKey() == NewKey() {
		t.Fatal("two keys the same")
	}
}

// A config.json that is a link, a fifo, over 1 MiB or readable by others
// is refused, and a good one beside it (the positive control) is read.
func TestReadRefuses(t *testing.T) {
	good := t.TempDir()
	if err := Write(openDir(t, good), sample()); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadPath(filepath.Join(good, File)); err != nil {
		t.Fatalf("the control: %v", err)
	}
	cases := map[string]func(dir string){
		"link": func(dir string) { os.Symlink(filepath.Join(good, File), filepath.Join(dir, File)) },
		"fifo": func(dir string) { unix.Mkfifo(filepath.Join(dir, File), 0o600) },
		"over 1 MiB": func(dir string) {
			os.WriteFile(filepath.Join(dir, File), []byte(`{"x":"`+strings.Repeat("a", MaxSize)+`"}`), 0o600)
		},
		"0644": func(dir string) {
			data, _ := os.ReadFile(filepath.Join(good, File))
			os.WriteFile(filepath.Join(dir, File), data, 0o644)
			os.Chmod(filepath.Join(dir, File), 0o644)
		},
		"a folder linked on the way": func(dir string) {
			os.Remove(dir)
			os.Symlink(good, dir)
		},
	}
	for name, mk := range cases {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "h")
			os.Mkdir(dir, 0o700)
			mk(dir)
			_, err := ReadPath(filepath.Join(dir, File))
			if !errors.Is(err, ErrBad) {
				t.Fatalf("read: %v, want refused", err)
			}
		})
	}
}

func TestParseRefuses(t *testing.T) {
	c := sample()
	good := `{"agent_id":"` + c.AgentID + `","owner":"ana","name":"helper","port":20000,"agent_dir":"/a/Agent",` +
		`"model":{"format":"openai","base_url":"http://127.0.0.1:1/v1","model":"m"},"storage":{}}`
	if _, err := Parse([]byte(good)); err != nil {
		t.Fatalf("the control: %v", err)
	}
	bad := map[string]string{
		"unknown field":   strings.Replace(good, `"owner"`, `"extra":1,"owner"`, 1),
		"twice":           strings.Replace(good, `"owner":"ana"`, `"owner":"ana","owner":"bob"`, 1),
		"other case":      strings.Replace(good, `"owner":"ana"`, `"owner":"ana","Owner":"bob"`, 1),
		"two objects":     good + good,
		"short key":       strings.Replace(good, `"port"`, `"key":"abcd","port"`, 1),
		"bad ID":          strings.Replace(good, c.AgentID, "../x", 1),
		"port":            strings.Replace(good, "20000", "80", 1),
		"relative dir":    strings.Replace(good, "/a/Agent", "a/Agent", 1),
		"format":          strings.Replace(good, `"openai"`, `"gopher"`, 1),
		"url scheme":      strings.Replace(good, "http://127.0.0.1:1/v1", "file:///etc", 1),
		"tool variable":   strings.Replace(good, `"storage"`, `"tools":{"run":"PATH"},"storage"`, 1),
		"storage":         strings.Replace(good, `"storage":{}`, `"storage":{"conversations":"sqlite"}`, 1),
		"name with slash": strings.Replace(good, `"helper"`, `"a/b"`, 1),
	}
	for name, s := range bad {
		if _, err := Parse([]byte(s)); !errors.Is(err, ErrBad) {
			t.Errorf("%s: %v, want refused", name, err)
		}
	}
}

// With no key the config still parses; KeyBytes says there is none (the
// endpoint then answers 503).
func TestNoKey(t *testing.T) {
	c := sample()
	c.Key = ""
	if err := c.Check(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.KeyBytes(); !errors.Is(err, ErrNoKey) {
		t.Fatalf("KeyBytes: %v", err)
	}
}

func TestBridge(t *testing.T) {
	dir := t.TempDir()
	fd := openDir(t, dir)
	b := BridgeFor(sample())
	if err := WriteBridge(fd, b); err != nil {
		t.Fatal(err)
	}
	got, err := ReadBridge(fd)
	if err != nil || *got != *b {
		t.Fatalf("read back %+v, %v", got, err)
	}
	if p, err := got.Port(); err != nil || p != 20000 {
		t.Fatalf("port %d, %v", p, err)
	}
	for _, ep := range []string{"http://0.0.0.0:20000", "http://localhost:20000", "https://127.0.0.1:20000", "http://127.0.0.1:20000/x"} {
		b2 := *b
		b2.Endpoint = ep
		if _, err := b2.Port(); err == nil {
			t.Errorf("%s taken", ep)
		}
	}
}

func FuzzParse(f *testing.F) {
	data, _ := os.ReadFile("testdata/good.json")
	f.Add(data)
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := Parse(b)
		if err != nil {
			return
		}
		if err := c.Check(); err != nil {
			t.Fatalf("Parse took what Check refuses: %v", err)
		}
	})
}

// [tools] strangers in config.json: tools the agent has, never run or the
// scheduler, each refusal saying why; a config naming file alone (the
// positive control) is taken and read back.
func TestStrangersChecked(t *testing.T) {
	for _, tc := range []struct {
		strangers []string
		why       string
	}{
		{[]string{"file"}, ""},
		{nil, ""},
		{[]string{"run"}, "never gets run or the scheduler"},
		{[]string{"Scheduler-" + strings.Repeat("ab", 16)}, "never gets run or the scheduler"},
		{[]string{"gh"}, "not one of the agent's tools"},
	} {
		c := sample()
		c.Tools["scheduler-"+strings.Repeat("ab", 16)] = "LNK_TOOL_SCHED"
		c.Strangers = tc.strangers
		err := c.Check()
		if tc.why == "" {
			if err != nil {
				t.Errorf("strangers %q: %v", tc.strangers, err)
				continue
			}
			dir := t.TempDir()
			if err := Write(openDir(t, dir), c); err != nil {
				t.Fatal(err)
			}
			got, err := ReadPath(filepath.Join(dir, File))
			if err != nil || strings.Join(got.Strangers, ",") != strings.Join(tc.strangers, ",") {
				t.Errorf("read back strangers %q, %v; want %q", got.Strangers, err, tc.strangers)
			}
			continue
		}
		if !errors.Is(err, ErrBad) || !strings.Contains(err.Error(), tc.why) {
			t.Errorf("strangers %q: %v, want a refusal saying %q", tc.strangers, err, tc.why)
		}
	}
}
