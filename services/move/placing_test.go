package move_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/helpers/keybroker/secrets"
	"lnk.dev/lnk/internal/secret"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/services/move"
)

var errInjected = errors.New("a failure injected at a placing step")

// placedState is what a receive may change in home: agent name's whole
// folder, its folder in ~/.lnk/agents, and ~/.lnk/secrets.toml.
func placedState(t *testing.T, home, name string) string {
	t.Helper()
	l := caps.Layout{Home: home}
	sec, _ := os.ReadFile(filepath.Join(home, ".lnk", "secrets.toml"))
	return snapshot(t, l.AgentDir(name)) + "\n--- settings\n" + snapshot(t, filepath.Join(l.Settings(), "agents", name)) + "\n--- secrets\n" + string(sec)
}

// movingAgent makes agent main on from with files, a conversation,
// memory, Link Harness's home and a secret.
func movingAgent(t *testing.T, from string) *caps.Agent {
	t.Helper()
	a := makeAgent(t, from, "main")
	l := caps.Layout{Home: from}
	write(t, filepath.Join(l.AgentDir("main"), "Harnesses", caps.LinkHarness, "state", "session.json"), "{\"s\":1}\n", 0o600)
	write(t, filepath.Join(l.FilesDir("main"), "new-folder", "a.txt"), "new\n", 0o600)
	v, _ := secret.FromString("model-key-value")
	if err := secrets.Update(from, func(f *secrets.File) error {
		f.Secrets["AGENT_MAIN_MODEL_KEY"] = &secrets.Entry{Value: v, Agents: []string{a.ID}}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return a
}

// TestPlacingIsAllOrNothing injects a failure at every step of a
// receive's placing (each rename across the files folder, the
// collections and Link Harness's home, a folder it makes, and the
// secrets), for an agent coming back and for one new here: after each,
// the receiving machine's agent, its settings folder and secrets.toml
// are byte for byte what they were (the agent new here is not there at
// all) and no staging folder is left. The positive control, the same
// stream with no failure, puts the new agent in place whole.
func TestPlacingIsAllOrNothing(t *testing.T) {
	from := testenv.Home(t)
	a := movingAgent(t, from)
	pub, priv := newKey(t)
	sealed := send(t, from, "main", pub)

	// How many steps a whole placing takes, counted on a scratch machine.
	steps := 0
	restore := move.SetPlaceFault(func(n int) error {
		steps = max(steps, n+1)
		return nil
	})
	if _, err := (&move.Receive{Home: testenv.Home(t), Key: priv}).Run(context.Background(), bytes.NewReader(sealed)); err != nil {
		restore()
		t.Fatalf("a receive counting its steps: %v", err)
	}
	restore()
	if steps < 6 {
		t.Fatalf("a placing took %d steps: too few to test it midway", steps)
	}

	for _, back := range []bool{true, false} {
		to := testenv.Home(t)
		if back {
			// The agent was here before, with other files, conversation
			// and memory, and no Link Harness home yet.
			if _, _, err := caps.AdoptAgent(to, a, nil); err != nil {
				t.Fatal(err)
			}
			l := caps.Layout{Home: to}
			write(t, filepath.Join(l.FilesDir("main"), "work", "notes.txt"), "the old notes\n", 0o600)
			write(t, filepath.Join(l.FilesDir("main"), "work", "kept.txt"), "only here\n", 0o600)
			write(t, filepath.Join(l.OwnDir("main"), "chats", "c0.jsonl"), "{\"old\":1}\n", 0o600)
			write(t, filepath.Join(l.OwnDir("main"), "memory", "index.db"), "the old index", 0o600)
		}
		before := placedState(t, to, "main")
		for n := 0; n < steps; n++ {
			restore := move.SetPlaceFault(func(k int) error {
				if k == n {
					return errInjected
				}
				return nil
			})
			_, err := (&move.Receive{Home: to, Key: priv}).Run(context.Background(), bytes.NewReader(sealed))
			restore()
			if !errors.Is(err, errInjected) {
				t.Fatalf("back %v, step %d: %v, want the injected failure", back, n, err)
			}
			if after := placedState(t, to, "main"); after != before {
				t.Fatalf("back %v: a failure at step %d of %d left the agent changed:\n%s\n--- was\n%s", back, n, steps, after, before)
			}
			if _, err := os.Lstat(filepath.Join(caps.Layout{Home: to}.Agents(), ".moving", a.ID)); !os.IsNotExist(err) {
				t.Fatalf("step %d: the staging folder is left: %v", n, err)
			}
		}
		// The positive control: whole, as it came.
		if _, err := (&move.Receive{Home: to, Key: priv}).Run(context.Background(), bytes.NewReader(sealed)); err != nil {
			t.Fatalf("back %v: the receive with no failure: %v", back, err)
		}
		lf, lt := caps.Layout{Home: from}, caps.Layout{Home: to}
		for _, rel := range []string{"Agent/chats", "Agent/memory", "Harnesses/" + caps.LinkHarness} {
			if x, y := snapshot(t, filepath.Join(lf.AgentDir("main"), rel)), snapshot(t, filepath.Join(lt.AgentDir("main"), rel)); x != y {
				t.Errorf("back %v: %s is not as it came:\n%s\n---\n%s", back, rel, y, x)
			}
		}
		if b, err := os.ReadFile(filepath.Join(lt.FilesDir("main"), "work", "notes.txt")); err != nil || string(b) != "files folder\n" {
			t.Errorf("back %v: work/notes.txt is %q, %v", back, b, err)
		}
		if b, err := os.ReadFile(filepath.Join(lt.FilesDir("main"), "new-folder", "a.txt")); err != nil || string(b) != "new\n" {
			t.Errorf("back %v: new-folder/a.txt is %q, %v", back, b, err)
		}
		if back {
			if b, err := os.ReadFile(filepath.Join(lt.FilesDir("main"), "work", "kept.txt")); err != nil || string(b) != "only here\n" {
				t.Errorf("a file only here was not kept: %q, %v", b, err)
			}
		}
		sf, err := secrets.Load(to)
		if err != nil {
			t.Fatal(err)
		}
		if e := sf.Secrets["AGENT_MAIN_MODEL_KEY"]; e == nil || !e.GrantedTo(a.ID) {
			t.Errorf("back %v: the secret did not arrive", back)
		}
		sf.Destroy()
	}
}
