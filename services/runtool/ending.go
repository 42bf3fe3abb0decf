package runtool

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"lnk.dev/lnk/internal/ownerfile"
)

// Ending is a background command's ending, recorded for delivery to the
// agent as a message from run:<id> (see the package doc).
type Ending struct {
	From   string    `json:"from"` // "run:<id>"
	Thread string    `json:"thread"`
	Hops   int       `json:"hops"` // the start's hops and one: the message's
	Ended  time.Time `json:"ended"`
	Reason string    `json:"reason"`
	Code   int       `json:"code"`
	Output string    `json:"output"` // its output's name in the files folder
	Bytes  int64     `json:"bytes"`
	Cut    bool      `json:"cut"`
}

func endingName(id string) string { return id + ".ending.json" }

// writeEnding records r's ending once: written beside nothing (a second
// writer finds it there and writes nothing), atomically, 0600.
func (s *store) writeEnding(r *Record) error {
	e := Ending{From: "run:" + r.ID, Thread: r.Thread, Hops: r.Hops + 1, Ended: r.Ended, Reason: r.Reason, Code: r.Code,
		Output: "background/" + r.ID + ".out", Bytes: r.Output, Cut: r.Cut}
	b, _ := json.MarshalIndent(e, "", "  ")
	err := ownerfile.WriteAtomic(s.fd(), endingName(r.ID), append(b, '\n'), ownerfile.Write{Mode: 0o600, NoReplace: true})
	if errors.Is(err, os.ErrExist) {
		return nil
	}
	return err
}

// MarkTold is the messages' side: the ending of background command id
// reached the agent. The record keeps when, and goes background_keep
// after; the ending file goes now. A command still running is refused.
func (a *Agent) MarkTold(id string) error {
	if !validID(id) {
		return fmt.Errorf("id %q is not a background command's ID", id)
	}
	s, err := a.openStore()
	if err != nil {
		return err
	}
	defer s.Close()
	f, ok, err := s.lock(id, false)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("background command %s is still running", id)
	}
	defer f.Close()
	r, err := s.read(id)
	if err != nil {
		return err
	}
	if r.State != StateEnded {
		return fmt.Errorf("background command %s has not ended", id)
	}
	if r.Told.IsZero() {
		r.Told = time.Now().UTC()
		if err := s.write(r); err != nil {
			return err
		}
	}
	return s.remove(endingName(id))
}
