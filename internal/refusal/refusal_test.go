package refusal

import (
	"errors"
	"fmt"
	"testing"
)

// TestSentinelMatchesItsRuleOnly: errors.Is holds for a refusal by the
// sentinel's rule, wrapped or not, and for no other rule's; a refusal
// that is no sentinel matches only itself (the positive and negative
// controls side by side).
func TestSentinelMatchesItsRuleOnly(t *testing.T) {
	dot := Sentinel("dot-folder", "a dot folder can't be written")
	other := Sentinel("dot-dot", "a path with ..")
	got := fmt.Errorf("agent a: %w", &Refusal{Reason: "refused ~/.ssh: a dot folder can't be written (rule dot-folder)", Rule: "dot-folder"})
	if !errors.Is(got, dot) {
		t.Error("a refusal by the rule does not match its sentinel")
	}
	if errors.Is(got, other) {
		t.Error("a refusal matches another rule's sentinel")
	}
	plain := &Refusal{Reason: "x", Rule: "dot-folder"}
	if errors.Is(got, plain) {
		t.Error("a refusal that is no sentinel matches another refusal")
	}
	if !errors.Is(plain, plain) {
		t.Error("a refusal does not match itself")
	}
}

// TestCauseAndRuleThroughTheChain: Err stays reachable by errors.Is; the
// rule and hint are found beneath a refusal that names none.
func TestCauseAndRuleThroughTheChain(t *testing.T) {
	cause := errors.New("the cause")
	inner := &Refusal{Reason: "inner", Rule: "r", Hint: "lnk agent allow a --read x", Err: cause}
	outer := fmt.Errorf("call: %w", &Refusal{Reason: "outer", Err: inner})
	if !errors.Is(outer, cause) {
		t.Error("the cause is lost")
	}
	if r, ok := Of(outer); !ok || r.Reason != "outer" {
		t.Errorf("Of: %v %v", r, ok)
	}
	if RuleOf(outer) != "r" || HintOf(outer) != "lnk agent allow a --read x" {
		t.Errorf("rule %q hint %q", RuleOf(outer), HintOf(outer))
	}
	if RuleOf(errors.New("no refusal")) != "" || HintOf(nil) != "" {
		t.Error("a rule or hint where there is no refusal")
	}
	if outer.Error() != "call: outer" {
		t.Errorf("Error() %q: the reason is the whole message", outer.Error())
	}
}
