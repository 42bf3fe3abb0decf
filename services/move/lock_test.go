package move_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/services/move"
)

// TestOneMoveOfAnAgentAtATime: while one send of an agent waits for its
// switch, holding ~/.lnk/moving/<id>.lock, a second send of it is
// refused with ErrBusy; once the first ended, a send goes through (the
// positive control).
func TestOneMoveOfAnAgentAtATime(t *testing.T) {
	pub, _ := newKey(t)
	from, _ := twoHomes(t)
	makeAgent(t, from, "main")
	waiting, release := make(chan struct{}), make(chan struct{})
	first := make(chan error, 1)
	go func() {
		var once sync.Once
		s := &move.Send{Home: from, Name: "main", To: pub, ReadyToSwitch: func() error {
			once.Do(func() {
				close(waiting)
				<-release
			})
			return nil
		}}
		first <- s.Run(context.Background(), &bytes.Buffer{})
	}()
	<-waiting
	err := (&move.Send{Home: from, Name: "main", To: pub}).Run(context.Background(), &bytes.Buffer{})
	if !errors.Is(err, move.ErrBusy) {
		t.Errorf("a second send meanwhile: %v, want ErrBusy", err)
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatalf("the first send: %v", err)
	}
	if err := (&move.Send{Home: from, Name: "main", To: pub}).Run(context.Background(), &bytes.Buffer{}); err != nil {
		t.Errorf("a send after it: %v", err)
	}
}

// TestReceiveRefusedWhileItsNameIsLocked: while lnk agent create of a
// name holds its lock (move.LockName, taken here as create takes it), a
// receive of an agent of that name is refused with ErrNameBusy, nothing
// unpacked; another name's lock lets it by, and once the name's lock is
// let go the receive is taken (the positive controls).
func TestReceiveRefusedWhileItsNameIsLocked(t *testing.T) {
	const id = "0123456789abcdef0123456789abcdef"
	pub, priv := newKey(t)
	_, to := twoHomes(t)
	receive := func() error {
		_, err := (&move.Receive{Home: to, Key: priv}).Run(context.Background(), bytes.NewReader(seal(t, pub, goodPlain(id))))
		return err
	}
	unlock, err := move.LockName(to, "main")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := move.LockName(to, "main"); !errors.Is(err, move.ErrNameBusy) {
		t.Errorf("the name's lock taken twice: %v", err)
	}
	if err := receive(); !errors.Is(err, move.ErrNameBusy) {
		t.Fatalf("a receive of a locked name: %v, want ErrNameBusy", err)
	}
	if _, err := os.Lstat(filepath.Join(caps.Layout{Home: to}.Agents(), ".moving", id)); !os.IsNotExist(err) {
		t.Errorf("a refused receive left a staging folder: %v", err)
	}
	unlock()
	other, err := move.LockName(to, "other")
	if err != nil {
		t.Fatal(err)
	}
	defer other()
	if err := receive(); err != nil {
		t.Fatalf("the receive once the name is free: %v", err)
	}
}
