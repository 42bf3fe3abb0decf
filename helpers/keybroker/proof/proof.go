// Package proof is the challenge–response both sides of an agent's
// endpoint use: the checker sends a random 32-byte challenge, the prover
// answers HMAC-SHA256(key, context ‖ challenge), and the checker compares
// in constant time. The key itself never crosses.
//
// The context binds the agent's ID, its owner and the proof's purpose,
// each length-prefixed after a version label, so a proof made for one
// agent, owner or purpose proves nothing for another, and no two
// different contexts encode to the same bytes.
//
// # Security
//
// It holds nothing between calls but what a [Checker] is given. It trusts
// its caller for the key and for a challenge it made itself with
// [NewChallenge]. It refuses (returns false or an error) an answer of the
// wrong length or value, a context with an empty or over-long field, and
// a key shorter than 32 bytes.
package proof

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
)

// Sizes of a challenge, an answer and the shortest key taken.
const (
	ChallengeSize = 32
	AnswerSize    = sha256.Size
	MinKeySize    = 32
	maxField      = 1024
	label         = "lnk proof v1"
)

// ErrBadContext is returned for a context with an empty or over-long field.
var ErrBadContext = errors.New("proof: a context needs an agent ID, an owner and a purpose, each at most 1024 bytes")

// ErrShortKey is returned for a key shorter than MinKeySize.
var ErrShortKey = errors.New("proof: a key must be at least 32 bytes")

// Context is what a proof is bound to.
type Context struct {
	AgentID string
	Owner   string
	Purpose string // e.g. "endpoint", "bridge"
}

// encode appends the context's bytes: the label, then each field
// length-prefixed, so distinct contexts never share an encoding.
func (c Context) encode(b []byte) ([]byte, error) {
	b = append(b, label...)
	for _, f := range []string{c.AgentID, c.Owner, c.Purpose} {
		if f == "" || len(f) > maxField {
			return nil, ErrBadContext
		}
		b = binary.BigEndian.AppendUint16(b, uint16(len(f)))
		b = append(b, f...)
	}
	return b, nil
}

// NewChallenge returns 32 fresh random bytes.
func NewChallenge() [ChallengeSize]byte {
	var c [ChallengeSize]byte
	rand.Read(c[:]) // never fails (crypto/rand panics rather)
	return c
}

// Answer is the prover's side: HMAC-SHA256(key, context ‖ challenge).
func Answer(key []byte, ctx Context, challenge [ChallengeSize]byte) ([AnswerSize]byte, error) {
	c, err := NewChecker(key, ctx)
	if err != nil {
		return [AnswerSize]byte{}, err
	}
	return c.answer(challenge), nil
}

// Check is the checker's side for one answer: true only for the answer
// key gives for ctx and challenge, compared in constant time.
func Check(key []byte, ctx Context, challenge [ChallengeSize]byte, answer []byte) bool {
	c, err := NewChecker(key, ctx)
	if err != nil {
		return false
	}
	return c.Check(challenge, answer)
}

// Checker checks many answers for one key and context, keeping the keyed
// HMAC state between them. It is not safe for concurrent use.
type Checker struct {
	mac  hash.Hash
	ctx  []byte
	sum  [AnswerSize]byte
	used bool
}

// NewChecker returns a Checker for key and ctx. It copies neither into
// anything printable; the caller keeps and zeroes key.
func NewChecker(key []byte, ctx Context) (*Checker, error) {
	if len(key) < MinKeySize {
		return nil, ErrShortKey
	}
	enc, err := ctx.encode(nil)
	if err != nil {
		return nil, err
	}
	return &Checker{mac: hmac.New(sha256.New, key), ctx: enc}, nil
}

func (c *Checker) answer(challenge [ChallengeSize]byte) [AnswerSize]byte {
	if c.used {
		c.mac.Reset()
	}
	c.used = true
	c.mac.Write(c.ctx)
	c.mac.Write(challenge[:])
	var out [AnswerSize]byte
	c.mac.Sum(out[:0])
	return out
}

// Answer is the prover's side with a Checker's key and context.
func (c *Checker) Answer(challenge [ChallengeSize]byte) [AnswerSize]byte { return c.answer(challenge) }

// Check reports whether answer is the right one for challenge, in
// constant time.
func (c *Checker) Check(challenge [ChallengeSize]byte, answer []byte) bool {
	c.sum = c.answer(challenge)
	return len(answer) == AnswerSize && subtle.ConstantTimeCompare(c.sum[:], answer) == 1
}

// String never shows the key.
func (c *Checker) String() string { return fmt.Sprintf("proof.Checker(%d-byte context)", len(c.ctx)) }
