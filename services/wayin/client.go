package wayin

import (
	"bufio"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"time"

	"lnk.dev/lnk/helpers/keybroker/proof"
	"lnk.dev/lnk/internal/conversation"
	"lnk.dev/lnk/internal/peercred"
	"lnk.dev/lnk/internal/refusal"
)

// ErrNotListening is a way in with nobody at its socket: the agent isn't
// running. What was to be handed stays where it was kept.
var ErrNotListening = errors.New("the agent's way in is not listening (is the agent running?)")

// Caller is what hands a message at an agent's way in: its socket, and
// the agent's way-in key to prove the call with.
type Caller struct {
	Socket         string
	AgentID, Owner string
	Key            []byte
}

// Send hands m to the way in and returns once the agent's harness took
// it (again: it had taken it before). A refusal comes back as a
// *refusal.Refusal with the way in's reason and hint, and the rule of a
// conversation gone (conversation.ErrMissing) or of a refusal for now
// (refusal.ErrBusy).
func (c *Caller) Send(ctx context.Context, m Message) (again bool, err error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", c.Socket)
	if err != nil {
		return false, fmt.Errorf("%w: %v", ErrNotListening, err)
	}
	defer conn.Close()
	uc, ok := conn.(*net.UnixConn)
	if !ok {
		return false, errors.New("the way in is not a unix socket")
	}
	// Nothing is sent to a socket another user serves.
	if _, err := peercred.SameUser(uc); err != nil {
		return false, fmt.Errorf("the way in: %w", err)
	}
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Now()) })
	defer stop()
	r := bufio.NewReaderSize(conn, 4096)
	line, err := readLine(r)
	if err != nil {
		return false, fmt.Errorf("the way in's challenge: %w", err)
	}
	var h Hello
	if err := decodeStrict(line, &h); err != nil {
		return false, fmt.Errorf("the way in's challenge: %w", err)
	}
	b, err := hex.DecodeString(h.Challenge)
	if err != nil || len(b) != proof.ChallengeSize {
		return false, errors.New("the way in's challenge is not 32 bytes in hex")
	}
	var ch [proof.ChallengeSize]byte
	copy(ch[:], b)
	ans, err := proof.Answer(c.Key, proof.Context{AgentID: c.AgentID, Owner: c.Owner, Purpose: Purpose}, ch)
	if err != nil {
		return false, err
	}
	if err := writeLine(conn, Request{AgentID: c.AgentID, Answer: hex.EncodeToString(ans[:]), Message: m}); err != nil {
		return false, err
	}
	line, err = readLine(r)
	if err != nil {
		return false, fmt.Errorf("the way in's answer: %w", err)
	}
	var rep Reply
	if err := decodeStrict(line, &rep); err != nil {
		return false, fmt.Errorf("the way in's answer: %w", err)
	}
	if rep.Error != "" || !rep.Taken {
		r := &refusal.Refusal{Reason: "the agent's way in refused the message: " + rep.Error, Hint: rep.Hint}
		if rep.Rule == conversation.RuleMissing || rep.Rule == refusal.RuleBusy {
			// The conversation is gone (errors.Is conversation.ErrMissing),
			// or the refusal is for now (errors.Is refusal.ErrBusy).
			r.Rule = rep.Rule
		}
		return false, r
	}
	return rep.Again, nil
}
