package move_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/moveentry/movetest"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/services/move"
)

// TestReceiveTakesOnlyWhatThisMachineAllows: an agent new here gets the
// stream's grants but for those that open the machine or reach past its
// sandbox (--read '~', --network-mode host, --lan-host, --port, --tcp,
// --command by path or *), each named as its lnk agent allow flag and
// absent from the sandbox.toml written and the compiled grants, while an
// internet host and a plain command are kept (the positive control). An
// agent coming back keeps its grants here byte for byte. Link Harness's
// .env is neither sent nor, when a stream carries one, placed; the rest
// of its home is.
func TestReceiveTakesOnlyWhatThisMachineAllows(t *testing.T) {
	from, to := testenv.Home(t), testenv.Home(t)
	a := makeAgent(t, from, "main")
	if _, err := caps.Allow(from, "main", caps.Grants{Read: []string{"~"}, NetworkMode: "host", LANHosts: []string{"printer.lan"},
		Ports: []string{"8080"}, TCP: []string{"db.example.com:5432"}, Commands: []string{"*", "/usr/bin/env", "git"},
		InternetHosts: []string{"example.com"}}); err != nil {
		t.Fatal(err)
	}
	lf := caps.Layout{Home: from}
	write(t, filepath.Join(lf.AgentDir("main"), "Harnesses", caps.LinkHarness, ".env"), "MODEL_KEY=secret-value\n", 0o600)
	write(t, filepath.Join(lf.AgentDir("main"), "Harnesses", caps.LinkHarness, "state.json"), "{}\n", 0o600)
	pub, priv := newKey(t)
	var sent []string
	var out bytes.Buffer
	if err := (&move.Send{Home: from, Name: "main", To: pub, Note: func(n string) { sent = append(sent, n) }}).Run(context.Background(), &out); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(sent, func(n string) bool { return strings.Contains(n, ".env is not sent") }) {
		t.Errorf("the send did not say .env is not sent: %q", sent)
	}
	got, err := (&move.Receive{Home: to, Key: priv}).Run(context.Background(), bytes.NewReader(out.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	for _, flag := range []string{"--read '~'", "--network-mode 'host'", "--lan-host 'printer.lan'", "--port '8080'", "--tcp 'db.example.com:5432'", "--command '*'", "--command '/usr/bin/env'"} {
		if !slices.Contains(got.Allow, flag) {
			t.Errorf("left out %q, want %s named", got.Allow, flag)
		}
	}
	lt := caps.Layout{Home: to}
	spec, _ := os.ReadFile(lt.SandboxFile("main"))
	for _, gone := range []string{"printer.lan", "8080", "db.example.com", "/usr/bin/env", "\"*\"", "\"~\"", "\"host\""} {
		if strings.Contains(string(spec), gone) {
			t.Errorf("sandbox.toml here holds %s:\n%s", gone, spec)
		}
	}
	if !strings.Contains(string(spec), "example.com") || !strings.Contains(string(spec), "git") {
		t.Errorf("sandbox.toml here lost what the stream may give:\n%s", spec)
	}
	c, err := caps.CompileAgent(to, "main")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.LocalhostPorts) != 0 || !slices.Contains(c.Internet.Hosts, "example.com") {
		t.Errorf("compiled: ports %v, hosts %v", c.LocalhostPorts, c.Internet.Hosts)
	}
	home := filepath.Join(lt.AgentDir("main"), "Harnesses", caps.LinkHarness)
	if _, err := os.Lstat(filepath.Join(home, ".env")); !os.IsNotExist(err) {
		t.Errorf("a .env is in the home here: %v", err)
	}
	if _, err := os.Stat(filepath.Join(home, "state.json")); err != nil {
		t.Errorf("the home's state did not arrive: %v", err)
	}

	// Coming back: its grants here are kept, whatever the stream says; a
	// .env the stream carries is not placed.
	before, _ := os.ReadFile(lt.SandboxFile("main"))
	raw := movetest.NewRaw(a.ID, "main").Phase('c').Dir("files", 0o700).
		Phase('s').Settings(movetest.Agent(a.ID, "main"), []byte("[localhost]\nports = [\"9090\"]\n"), nil).
		Dir("home", 0o700).File("home/.env", 0o600, []byte("KEY=x\n")).File("home/notes.md", 0o600, []byte("n\n")).End()
	var notes []string
	back, err := (&move.Receive{Home: to, Key: priv, Note: func(n string) { notes = append(notes, n) }}).Run(context.Background(), bytes.NewReader(seal(t, pub, raw.B.Bytes())))
	if err != nil {
		t.Fatal(err)
	}
	if back.New || len(back.Allow) != 0 {
		t.Errorf("coming back: %+v", back)
	}
	if after, _ := os.ReadFile(lt.SandboxFile("main")); !bytes.Equal(after, before) {
		t.Errorf("coming back changed its grants here:\n%s\n--- was\n%s", after, before)
	}
	if _, err := os.Lstat(filepath.Join(home, ".env")); !os.IsNotExist(err) {
		t.Errorf("the stream's .env was placed: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(home, "notes.md")); err != nil || string(b) != "n\n" {
		t.Errorf("the home's notes.md: %q %v", b, err)
	}
	if !slices.ContainsFunc(notes, func(n string) bool { return strings.Contains(n, ".env is left out") }) {
		t.Errorf("the receive did not say .env is left out: %q", notes)
	}
}
