package move_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/helpers/keybroker/stream"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/services/move"
)

// twoHomes makes the leaving machine's HOME and the receiving one's.
func twoHomes(t *testing.T) (from, to string) {
	return testenv.Home(t), testenv.Home(t)
}

func newKey(t *testing.T) (*stream.PublicKey, *stream.PrivateKey) {
	t.Helper()
	pub, priv, err := stream.NewKeyPair()
	if err != nil {
		t.Fatal(err)
	}
	return pub, priv
}

// seal seals plaintext to pub, as a sender's stream would be.
func seal(t *testing.T, pub *stream.PublicKey, plain []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	w, err := stream.NewWriter(&out, pub)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(plain)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// makeAgent makes agent name under home with a file, a link, a
// conversation and a note.
func makeAgent(t *testing.T, home, name string) *caps.Agent {
	t.Helper()
	a, err := caps.CreateAgent(home, name)
	if err != nil {
		t.Fatal(err)
	}
	l := caps.Layout{Home: home}
	write(t, filepath.Join(l.FilesDir(name), "work", "notes.txt"), "files folder\n", 0o640)
	write(t, filepath.Join(l.OwnDir(name), "chats", "c1.jsonl"), "{\"role\":\"user\",\"text\":\"hi\"}\n", 0o600)
	write(t, filepath.Join(l.OwnDir(name), "memory", "index.db"), "memory index", 0o600)
	if err := os.Symlink("../../../../../etc/passwd", filepath.Join(l.FilesDir(name), "work", "up")); err != nil {
		t.Fatal(err)
	}
	return a
}

func write(t *testing.T, p, data string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}

// send runs a whole send of agent name, its switch allowed.
func send(t *testing.T, home, name string, pub *stream.PublicKey) []byte {
	t.Helper()
	var out bytes.Buffer
	s := &move.Send{Home: home, Name: name, To: pub}
	if err := s.Run(context.Background(), &out); err != nil {
		t.Fatalf("send: %v", err)
	}
	return out.Bytes()
}

// snapshot lists everything under root: each path's type, mode, and
// content's hash or link's target.
func snapshot(t *testing.T, root string) string {
	t.Helper()
	var lines []string
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			lines = append(lines, p+" error "+err.Error())
			return nil
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return nil
		}
		line := fmt.Sprintf("%s %v", strings.TrimPrefix(p, root), fi.Mode())
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			tgt, _ := os.Readlink(p)
			line += " -> " + tgt
		case fi.Mode().IsRegular():
			b, _ := os.ReadFile(p)
			line += fmt.Sprintf(" %x", sha256.Sum256(b))
		}
		lines = append(lines, line)
		return nil
	})
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}
