package move_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/services/move"
)

// TestAsideFilesArriveAsCopied: a file over 8 MB and memory's index are
// copied aside to ~/Link/Agents/.sending first (unnamed: the folder stays
// empty) and sent from that copy, so each, changed on the sending side
// after its copy was made, arrives as it was copied and hashed, the
// receive taking it whole. A small file of the files folder is not copied
// aside (the positive control of what is).
func TestAsideFilesArriveAsCopied(t *testing.T) {
	from, to := testenv.Home(t), testenv.Home(t)
	makeAgent(t, from, "main")
	lf := caps.Layout{Home: from}
	big := make([]byte, move.AsideOver+4096)
	rand.Read(big)
	bigPath := filepath.Join(lf.FilesDir("main"), "big.bin")
	write(t, bigPath, string(big), 0o600)
	indexPath := filepath.Join(lf.OwnDir("main"), "memory", "index.db")
	index, _ := os.ReadFile(indexPath)
	changed := map[string]string{"files/big.bin": bigPath, "memory/index.db": indexPath}
	var aside []string
	sending := filepath.Join(lf.Agents(), ".sending")
	restore := move.SetAsideCopied(func(p string) {
		aside = append(aside, p)
		if ents, err := os.ReadDir(sending); err != nil || len(ents) != 0 {
			t.Errorf("%s holds %v (%v): a copy aside is unnamed", sending, ents, err)
		}
		if real, ok := changed[p]; ok {
			// Changed after its copy, same size, other bytes.
			b, _ := os.ReadFile(real)
			for i := range b {
				b[i] ^= 0xff
			}
			if err := os.WriteFile(real, b, 0o600); err != nil {
				t.Error(err)
			}
		}
	})
	pub, priv := newKey(t)
	sealed := send(t, from, "main", pub)
	restore()
	slices.Sort(aside)
	if !slices.Equal(aside, []string{"files/big.bin", "memory/index.db"}) {
		t.Errorf("copied aside: %v, want files/big.bin and memory/index.db alone", aside)
	}
	if _, err := (&move.Receive{Home: to, Key: priv}).Run(context.Background(), bytes.NewReader(sealed)); err != nil {
		t.Fatalf("receive: %v", err)
	}
	lt := caps.Layout{Home: to}
	if b, _ := os.ReadFile(filepath.Join(lt.FilesDir("main"), "big.bin")); !bytes.Equal(b, big) {
		t.Error("big.bin arrived as changed after its copy, not as copied")
	}
	if b, _ := os.ReadFile(filepath.Join(lt.OwnDir("main"), "memory", "index.db")); !bytes.Equal(b, index) {
		t.Errorf("memory's index arrived as %q, want %q as copied", b, index)
	}
}
