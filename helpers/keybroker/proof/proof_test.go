package proof

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"testing"
)

var key = bytes.Repeat([]byte{7}, 32)

func ctx() Context { return Context{AgentID: "01J9ZAGENT", Owner: "alice", Purpose: "endpoint"} }

// TestAnswerIsHMACOverContextAndChallenge pins the construction against a
// bare HMAC-SHA256 computed here from the documented encoding.
func TestAnswerIsHMACOverContextAndChallenge(t *testing.T) {
	var ch [ChallengeSize]byte
	for i := range ch {
		ch[i] = byte(i)
	}
	got, err := Answer(key, ctx(), ch)
	if err != nil {
		t.Fatal(err)
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte("lnk proof v1\x00\x0a01J9ZAGENT\x00\x05alice\x00\x08endpoint"))
	m.Write(ch[:])
	if want := m.Sum(nil); !bytes.Equal(got[:], want) {
		t.Fatalf("answer %x, want %x", got, want)
	}
	if !Check(key, ctx(), ch, got[:]) {
		t.Fatal("Check refused the right answer")
	}
}

// TestAProofProvesNothingElse: every change of agent, owner, purpose,
// challenge, key or answer is refused.
func TestAProofProvesNothingElse(t *testing.T) {
	ch := NewChallenge()
	ans, _ := Answer(key, ctx(), ch)
	other := bytes.Repeat([]byte{8}, 32)
	ch2 := NewChallenge()
	flipped := ans
	flipped[31] ^= 1
	cases := []struct {
		name   string
		key    []byte
		ctx    Context
		ch     [ChallengeSize]byte
		answer []byte
	}{
		{"another agent", key, Context{"01J9ZOTHER", "alice", "endpoint"}, ch, ans[:]},
		{"another owner", key, Context{"01J9ZAGENT", "bob", "endpoint"}, ch, ans[:]},
		{"another purpose", key, Context{"01J9ZAGENT", "alice", "bridge"}, ch, ans[:]},
		{"fields shifted", key, Context{"01J9ZAGENTa", "lice", "endpoint"}, ch, ans[:]},
		{"another challenge", key, ctx(), ch2, ans[:]},
		{"another key", other, ctx(), ch, ans[:]},
		{"one bit flipped", key, ctx(), ch, flipped[:]},
		{"truncated", key, ctx(), ch, ans[:31]},
		{"too long", key, ctx(), ch, append(ans[:], 0)},
		{"empty", key, ctx(), ch, nil},
		{"the key itself", key, ctx(), ch, key},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if Check(c.key, c.ctx, c.ch, c.answer) {
				t.Fatal("accepted")
			}
		})
	}
}

func TestRefusesBadInputs(t *testing.T) {
	ch := NewChallenge()
	if _, err := Answer(key[:31], ctx(), ch); err != ErrShortKey {
		t.Errorf("short key: %v", err)
	}
	long := string(bytes.Repeat([]byte{'a'}, 1025))
	for _, c := range []Context{{"", "a", "p"}, {"a", "", "p"}, {"a", "o", ""}, {long, "o", "p"}} {
		if _, err := Answer(key, c, ch); err != ErrBadContext {
			t.Errorf("context %.20q: %v", c, err)
		}
	}
}

func TestCheckerReusesState(t *testing.T) {
	c, err := NewChecker(key, ctx())
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		ch := NewChallenge()
		ans, _ := Answer(key, ctx(), ch)
		if !c.Check(ch, ans[:]) || c.Check(ch, make([]byte, 32)) {
			t.Fatalf("round %d: checker disagrees with Answer", i)
		}
	}
	if s := c.String(); bytes.Contains([]byte(s), key) || bytes.Contains([]byte(s), []byte(hex.EncodeToString(key))) {
		t.Fatal("String shows the key")
	}
}
