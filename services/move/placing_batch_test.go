package move_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/services/move"
)

// TestMergeJournalsAbsentNamesTogether: a receive whose files folder
// holds many top-level names, none here: when the first of them is about
// to be renamed, the journal already holds a step for each (journaled
// ahead together, one fsync), and each is taken after (the receive whole,
// every file in place, the journal gone). A failure injected at each of
// their steps is undone whole by TestPlacingIsAllOrNothing, a kill at
// each by cli's TestReceiveKilledWhilePlacingIsUndone.
func TestMergeJournalsAbsentNamesTogether(t *testing.T) {
	from, to := testenv.Home(t), testenv.Home(t)
	a := movingAgent(t, from)
	const names = 40
	for i := 0; i < names; i++ {
		write(t, filepath.Join(caps.Layout{Home: from}.FilesDir("main"), fmt.Sprintf("top%02d.txt", i)), "a top-level name\n", 0o600)
	}
	pub, priv := newKey(t)
	sealed := send(t, from, "main", pub)
	journal := filepath.Join(to, ".lnk", "moving", a.ID+".placing")
	ahead := 0 // the most steps journaled but not yet taken
	restore := move.SetPlaceFault(func(n int) error {
		b, err := os.ReadFile(journal)
		if err != nil {
			return err
		}
		ahead = max(ahead, bytes.Count(b, []byte(`"step":`))-n)
		return nil
	})
	defer restore()
	if _, err := (&move.Receive{Home: to, Key: priv}).Run(context.Background(), bytes.NewReader(sealed)); err != nil {
		t.Fatal(err)
	}
	if ahead < names {
		t.Fatalf("at most %d steps were journaled ahead of their step: the %d names none here are not journaled together", ahead, names)
	}
	for i := 0; i < names; i++ {
		if _, err := os.Lstat(filepath.Join(caps.Layout{Home: to}.FilesDir("main"), fmt.Sprintf("top%02d.txt", i))); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Lstat(journal); !os.IsNotExist(err) {
		t.Fatalf("the journal is left after a whole receive: %v", err)
	}
}
