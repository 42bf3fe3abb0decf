package move_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/moveentry"
	"lnk.dev/lnk/services/move"
)

// TestSendRefusesDeepFoldersAndLinkedAreas: a folder 33 deep in the files
// folder, or a link where the agent's chats folder should be, stops the
// send; 32 deep is sent (the positive control).
func TestSendRefusesDeepFoldersAndLinkedAreas(t *testing.T) {
	pub, _ := newKey(t)
	for _, c := range []struct {
		name  string
		setup func(t *testing.T, home string)
		want  error
	}{
		{"32-deep", func(t *testing.T, home string) { deep(t, home, 32) }, nil},
		{"33-deep", func(t *testing.T, home string) { deep(t, home, 33) }, moveentry.ErrDepth},
		{"chats-a-link", func(t *testing.T, home string) {
			chats := filepath.Join(caps.Layout{Home: home}.OwnDir("main"), "chats")
			os.RemoveAll(chats)
			if err := os.Symlink(t.TempDir(), chats); err != nil {
				t.Fatal(err)
			}
		}, move.ErrAreaLink},
	} {
		t.Run(c.name, func(t *testing.T) {
			from, _ := twoHomes(t)
			makeAgent(t, from, "main")
			c.setup(t, from)
			err := (&move.Send{Home: from, Name: "main", To: pub}).Run(context.Background(), &bytes.Buffer{})
			if !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
				t.Fatalf("send: %v, want %v", err, c.want)
			}
		})
	}
}

// deep makes n folders, one in the other, in agent main's files folder.
func deep(t *testing.T, home string, n int) {
	p := caps.Layout{Home: home}.FilesDir("main")
	for i := 0; i < n; i++ {
		p = filepath.Join(p, "d")
	}
	if err := os.MkdirAll(p, 0o700); err != nil {
		t.Fatal(err)
	}
}

// TestUnfinishedSendIsRefused: a send stopped before its switch (the
// agent not paused), cancelled (Ctrl-C), or whose agent started during
// its switch writes no end, and the
// receiver puts nothing in place; the same agent sent whole arrives
// (the positive control).
func TestUnfinishedSendIsRefused(t *testing.T) {
	pub, priv := newKey(t)
	from, to := twoHomes(t)
	makeAgent(t, from, "main")
	notPaused := errors.New("not paused")
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, c := range []struct {
		name  string
		ctx   context.Context
		ready func() error
	}{
		{"not-paused", context.Background(), func() error { return notPaused }},
		{"cancelled", cancelled, nil},
		{"started-during-switch", context.Background(), startedDuringSwitch()},
		{"whole", context.Background(), nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			serr := (&move.Send{Home: from, Name: "main", To: pub, ReadyToSwitch: c.ready}).Run(c.ctx, &out)
			_, rerr := (&move.Receive{Home: to, Key: priv}).Run(context.Background(), bytes.NewReader(out.Bytes()))
			_, lerr := caps.LoadAgent(to, "main")
			if c.name == "whole" {
				if serr != nil || rerr != nil || lerr != nil {
					t.Fatalf("send %v, receive %v, agent there %v", serr, rerr, lerr)
				}
				return
			}
			if serr == nil || rerr == nil || !errors.Is(lerr, caps.ErrNoAgent) {
				t.Fatalf("send %v, receive %v, agent there %v: want each refused and no agent", serr, rerr, lerr)
			}
		})
	}
}

// TestReceiveReplacesLinksNeverFollowsThem: where the receiving agent's
// chats folder, or a folder of its files folder, is a link to a folder
// outside (as a harness that outlived its stop could make), the receive
// replaces the link and writes nothing through it.
func TestReceiveReplacesLinksNeverFollowsThem(t *testing.T) {
	pub, priv := newKey(t)
	from, _ := twoHomes(t)
	a := makeAgent(t, from, "main")
	sealed := send(t, from, "main", pub)
	_, to := twoHomes(t)
	if _, _, err := caps.AdoptAgent(to, a, nil); err != nil {
		t.Fatal(err)
	}
	l := caps.Layout{Home: to}
	outside := t.TempDir()
	chats := filepath.Join(l.OwnDir("main"), "chats")
	work := filepath.Join(l.FilesDir("main"), "work")
	for _, p := range []string{chats, work} {
		os.RemoveAll(p)
		if err := os.Symlink(outside, p); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := (&move.Receive{Home: to, Key: priv}).Run(context.Background(), bytes.NewReader(sealed)); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(outside)
	if len(ents) != 0 {
		t.Errorf("written through a link: %v", ents)
	}
	for _, p := range []string{chats, work} {
		fi, err := os.Lstat(p)
		if err != nil || !fi.IsDir() {
			t.Errorf("%s: %v %v, want the folder that came", p, fi.Mode(), err)
		}
	}
	if b, err := os.ReadFile(filepath.Join(chats, "c1.jsonl")); err != nil || !strings.Contains(string(b), "hi") {
		t.Errorf("the conversation: %q %v", b, err)
	}
}

// startedDuringSwitch is paused when the switch starts and not at its
// end, as an agent started meanwhile.
func startedDuringSwitch() func() error {
	calls := 0
	return func() error {
		if calls++; calls > 1 {
			return errors.New("agent main runs again")
		}
		return nil
	}
}
