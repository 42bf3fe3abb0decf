package sealedgrant

import (
	"errors"

	"lnk.dev/lnk/internal/refusal"
	"lnk.dev/lnk/internal/wire"
)

// SpecSealedSecret is the netbroker's one request on its channel to the
// keybroker: a sealed secret, its value in the reply's fd.
var SpecSealedSecret = wire.Spec{Type: 0x0611, Name: "sealed.secret", ReplyFDs: 1, States: wire.AnyState}

// SealedReq asks for a sealed secret granted to the channel's agent.
// AgentID must be that agent's: the channel serves no other.
type SealedReq struct {
	AgentID string `json:"agent_id"`
	Name    string `json:"name"`
}

// SealedReply names the one host the value may be added for and the
// request headers it is added to there (its grant's, Authorization by
// default); the value itself is in the reply's fd, a sealed memfd of
// Length bytes.
type SealedReply struct {
	InternetHost string   `json:"internet_host"`
	Headers      []string `json:"headers"`
	Length       int      `json:"length"`
}

// Error codes of the keybroker's refusals on the wire.
const (
	CodeRefused = "refused"
	CodeMissing = "missing"
)

// The keybroker's refusals as a caller sees them: errors.Is(err,
// ErrRefused) for a rule's refusal, ErrMissing for something that isn't
// there.
var (
	ErrRefused = errors.New("keybroker refused")
	ErrMissing = errors.New("keybroker has no such thing")
)

// Refusal is a refusal that came back over the wire, with its reason
// (Link's one refusal shape, internal/refusal); its Err is ErrRefused or
// ErrMissing, so errors.Is tells which.
type Refusal = refusal.Refusal

// RefusalOf turns a wire error with a refusal's code into a [Refusal];
// any other error is returned as it is.
func RefusalOf(err error) error {
	var we *wire.Error
	if errors.As(err, &we) && (we.Code == CodeRefused || we.Code == CodeMissing) {
		sentinel := ErrRefused
		if we.Code == CodeMissing {
			sentinel = ErrMissing
		}
		return &Refusal{Reason: "keybroker: " + we.Message, Err: sentinel}
	}
	return err
}
