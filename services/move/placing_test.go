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
	"lnk.dev/lnk/services/move/placedstate"
)

var errInjected = errors.New("a failure injected at a placing step")

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
		f.Secrets["SHARED_KEY"] = shared(a.ID)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return a
}

// shared is a secret of the same value on both machines.
func shared(agents ...string) *secrets.Entry {
	v, _ := secret.FromString("shared-value")
	return &secrets.Entry{Value: v, Agents: agents}
}

// TestPlacingIsAllOrNothing injects a failure at every step of a
// receive's placing (each rename across the files folder, the
// collections and Link Harness's home, a folder it makes, and the
// secrets), for an agent coming back and for one new here: after each,
// the receiving machine's agent, its settings folder, its moved note and
// secrets are what they were (the agent new here is not there at all)
// and no staging folder is left; so too when the agent, whole in place,
// does not answer (Receive.Answer). The positive control, the same
// stream with no failure, puts the agent in place whole, its secrets
// granted and its moved note ended.
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
			// It left here before (its note), and a secret of the same
			// value is another agent's here.
			if err := caps.WriteMovedNote(to, a, "box"); err != nil {
				t.Fatal(err)
			}
			if err := secrets.Update(to, func(f *secrets.File) error {
				f.Secrets["SHARED_KEY"] = shared("ffffffffffffffffffffffffffffffff")
				return nil
			}); err != nil {
				t.Fatal(err)
			}
		}
		before := placedstate.State(t, to, "main")
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
			if after := placedstate.State(t, to, "main"); after != before {
				t.Fatalf("back %v: a failure at step %d of %d left the agent changed:\n%s\n--- was\n%s", back, n, steps, after, before)
			}
			if _, err := os.Lstat(filepath.Join(caps.Layout{Home: to}.Agents(), ".moving", a.ID)); !os.IsNotExist(err) {
				t.Fatalf("step %d: the staging folder is left: %v", n, err)
			}
		}
		// An agent that does not answer once in place: undone whole too,
		// though it was whole when asked.
		_, err := (&move.Receive{Home: to, Key: priv, Answer: func(got *move.Received) error {
			if _, err := os.Stat(filepath.Join(caps.Layout{Home: to}.OwnDir("main"), "chats", "c1.jsonl")); err != nil {
				t.Errorf("back %v: asked to answer before its conversation is in place: %v", back, err)
			}
			return errInjected
		}}).Run(context.Background(), bytes.NewReader(sealed))
		if !errors.Is(err, move.ErrNoAnswer) || !errors.Is(err, errInjected) {
			t.Fatalf("back %v: a receive whose agent does not answer: %v", back, err)
		}
		if after := placedstate.State(t, to, "main"); after != before {
			t.Fatalf("back %v: an agent that did not answer is left changed:\n%s\n--- was\n%s", back, after, before)
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
		if e := sf.Secrets["SHARED_KEY"]; e == nil || !e.GrantedTo(a.ID) {
			t.Errorf("back %v: the shared secret is not granted to it", back)
		}
		if _, err := os.Lstat(filepath.Join(to, ".lnk", "moved", a.ID+".toml")); !os.IsNotExist(err) {
			t.Errorf("back %v: the moved note stays: %v", back, err)
		}
		sf.Destroy()
	}
}
