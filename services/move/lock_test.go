package move_test

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"testing"

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
