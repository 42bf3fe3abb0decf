package move_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/helpers/keybroker/stream"
	"lnk.dev/lnk/internal/moveentry/movetest"
	"lnk.dev/lnk/services/move"
)

// receiverWith makes a receiving HOME where agent main (ID id) already
// is, with a file in its files folder and a conversation, and returns it.
func receiverWith(t *testing.T, id string) string {
	t.Helper()
	_, to := twoHomes(t)
	if _, _, err := caps.AdoptAgent(to, &caps.Agent{ID: id, Name: "main"}, nil); err != nil {
		t.Fatal(err)
	}
	l := caps.Layout{Home: to}
	write(t, filepath.Join(l.FilesDir("main"), "here.txt"), "here before\n", 0o600)
	write(t, filepath.Join(l.OwnDir("main"), "chats", "here.jsonl"), "{}\n", 0o600)
	return to
}

// goodPlain is a well-formed move of agent id with a file of several
// records, so the sealed stream has records to cut and reorder.
func goodPlain(id string) []byte {
	r := movetest.Good(id, "main")
	r.File("chats/long.jsonl", 0o600, bytes.Repeat([]byte("{\"x\":1}\n"), 40_000))
	return r.End().B.Bytes()
}

// TestHostileStreamsPlaceNothing receives each hostile stream (written
// by movetest, sealed to the receiver's own key, so only the move's
// checks stand in the way) and each damaged sealed stream, where the
// agent already is: each is refused, the receiving ~/Link and
// ~/.lnk/secrets.toml are byte for byte what they were, and no staging
// folder is left. The positive control, the same receiver taking the
// well-formed stream, changes the agent.
func TestHostileStreamsPlaceNothing(t *testing.T) {
	const id = "0123456789abcdef0123456789abcdef"
	pub, priv := newKey(t)
	otherPub, _ := newKey(t)
	streams := map[string][]byte{}
	for name, plain := range movetest.Hostile(id, "main") {
		streams[name] = seal(t, pub, plain)
	}
	good := seal(t, pub, goodPlain(id))
	rec := stream.HeaderSize + stream.RecordSize + 16
	if len(good) < stream.HeaderSize+2*rec {
		t.Fatalf("the good stream has too few records (%d bytes)", len(good))
	}
	streams["sealed-wrong-recipient"] = seal(t, otherPub, goodPlain(id))
	// The switch's secrets, sealed apart, to another key.
	other := movetest.NewRaw(id, "main").Phase('c').Dir("files", 0o700).File("files/x", 0o600, []byte("x")).
		Phase('s').Settings(movetest.Agent(id, "main"), nil, seal(t, otherPub, []byte(""))).End()
	streams["secrets-wrong-recipient"] = seal(t, pub, other.B.Bytes())
	streams["sealed-truncated"] = good[:stream.HeaderSize+rec-stream.HeaderSize]
	streams["sealed-cut-mid-record"] = good[:len(good)-100]
	reordered := append([]byte(nil), good...)
	r1 := reordered[stream.HeaderSize : stream.HeaderSize+rec-stream.HeaderSize]
	r2 := append([]byte(nil), reordered[stream.HeaderSize+rec-stream.HeaderSize:stream.HeaderSize+2*(rec-stream.HeaderSize)]...)
	copy(reordered[stream.HeaderSize+rec-stream.HeaderSize:], r1)
	copy(reordered[stream.HeaderSize:], r2)
	streams["sealed-reordered"] = reordered
	streams["sealed-extended"] = append(append([]byte(nil), good...), 0)
	flipped := append([]byte(nil), good...)
	flipped[stream.HeaderSize+10] ^= 1
	streams["sealed-modified"] = flipped

	for name, data := range streams {
		t.Run(name, func(t *testing.T) {
			to := receiverWith(t, id)
			l := caps.Layout{Home: to}
			// ~/Link/Agents/.moving, Link's own, is made by a receive and
			// removed with its staging folder: none before, none after.
			before := snapshot(t, l.Link()) + snapshot(t, filepath.Join(to, ".lnk", "secrets.toml"))
			r := &move.Receive{Home: to, Key: priv}
			if _, err := r.Run(context.Background(), bytes.NewReader(data)); err == nil {
				t.Fatal("the stream was taken")
			} else {
				t.Logf("refused: %v", err)
			}
			after := snapshot(t, l.Link()) + snapshot(t, filepath.Join(to, ".lnk", "secrets.toml"))
			if before != after {
				t.Errorf("the receiving machine changed:\n%s\n---\n%s", before, after)
			}
			if _, err := os.Lstat(filepath.Join(l.Agents(), ".moving", id)); !os.IsNotExist(err) {
				t.Errorf("a staging folder is left: %v", err)
			}
		})
	}
	t.Run("positive-control", func(t *testing.T) {
		to := receiverWith(t, id)
		r := &move.Receive{Home: to, Key: priv}
		if _, err := r.Run(context.Background(), bytes.NewReader(good)); err != nil {
			t.Fatalf("the good stream: %v", err)
		}
		l := caps.Layout{Home: to}
		if b, err := os.ReadFile(filepath.Join(l.FilesDir("main"), "hello.txt")); err != nil || string(b) != "hello\n" {
			t.Errorf("hello.txt: %q, %v", b, err)
		}
		if _, err := os.Stat(filepath.Join(l.FilesDir("main"), "here.txt")); err != nil {
			t.Errorf("a file here before was deleted: %v", err)
		}
		if _, err := os.Stat(filepath.Join(l.OwnDir("main"), "chats", "long.jsonl")); err != nil {
			t.Errorf("the conversation did not arrive: %v", err)
		}
	})
}

// TestSetuidBitsDropped: a file the stream calls setuid, and a folder it
// calls sticky, arrive with their permission bits only.
func TestSetuidBitsDropped(t *testing.T) {
	const id = "0123456789abcdef0123456789abcdef"
	pub, priv := newKey(t)
	_, to := twoHomes(t)
	r := movetest.NewRaw(id, "main").Phase('c').Dir("files", 0o1777).
		File("files/suid", 0o4755, []byte("#!/bin/sh\n")).File("files/sgid", 0o2750, []byte("x")).
		Phase('s').Settings(movetest.Agent(id, "main"), nil, nil).End()
	if _, err := (&move.Receive{Home: to, Key: priv}).Run(context.Background(), bytes.NewReader(seal(t, pub, r.B.Bytes()))); err != nil {
		t.Fatal(err)
	}
	files := caps.Layout{Home: to}.FilesDir("main")
	for name, want := range map[string]os.FileMode{"suid": 0o755, "sgid": 0o750} {
		fi, err := os.Lstat(filepath.Join(files, name))
		if err != nil || fi.Mode() != want {
			t.Errorf("%s: %v %v, want %v", name, fi.Mode(), err, want)
		}
	}
}

// TestArrivalRefusedByNameOrID: a stream for a name an agent here holds
// with another ID, and one whose ID another agent here has, are refused
// before anything is unpacked; the same stream to a machine without them
// arrives (the positive control).
func TestArrivalRefusedByNameOrID(t *testing.T) {
	const id = "0123456789abcdef0123456789abcdef"
	pub, priv := newKey(t)
	data := seal(t, pub, goodPlain(id))
	for _, c := range []struct {
		name string
		make func(home string)
		want error
	}{
		{"name-held", func(home string) { caps.CreateAgent(home, "main") }, move.ErrNameHeld},
		{"id-held", func(home string) { caps.AdoptAgent(home, &caps.Agent{ID: id, Name: "other"}, nil) }, caps.ErrDuplicateID},
		{"neither", func(string) {}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, to := twoHomes(t)
			c.make(to)
			os.MkdirAll(filepath.Join(caps.Layout{Home: to}.Agents(), ".moving"), 0o700)
			before := snapshot(t, caps.Layout{Home: to}.Link())
			_, err := (&move.Receive{Home: to, Key: priv}).Run(context.Background(), bytes.NewReader(data))
			if !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
				t.Fatalf("receive: %v, want %v", err, c.want)
			}
			if c.want != nil && snapshot(t, caps.Layout{Home: to}.Link()) != before {
				t.Error("a refused stream changed ~/Link")
			}
		})
	}
}

// TestStaleStagingSwept: a receive removes a staging folder a killed
// receive left more than 7 days ago, and keeps a newer one and a name
// that is no agent's ID.
func TestStaleStagingSwept(t *testing.T) {
	const id = "0123456789abcdef0123456789abcdef"
	pub, priv := newKey(t)
	_, to := twoHomes(t)
	moving := filepath.Join(caps.Layout{Home: to}.Agents(), ".moving")
	old, fresh, other := filepath.Join(moving, strings.Repeat("a", 32)), filepath.Join(moving, strings.Repeat("b", 32)), filepath.Join(moving, "notes")
	for _, d := range []string{old, fresh, other} {
		if err := os.MkdirAll(filepath.Join(d, "files"), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	os.Chmod(moving, 0o700)
	long := time.Now().Add(-move.StaleAfter - time.Hour)
	os.Chtimes(old, long, long)
	os.Chtimes(other, long, long)
	if _, err := (&move.Receive{Home: to, Key: priv}).Run(context.Background(), bytes.NewReader(seal(t, pub, goodPlain(id)))); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(old); !os.IsNotExist(err) {
		t.Errorf("the stale staging folder is still there: %v", err)
	}
	for _, d := range []string{fresh, other} {
		if _, err := os.Lstat(d); err != nil {
			t.Errorf("%s was removed: %v", d, err)
		}
	}
}
