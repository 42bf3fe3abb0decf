package memsock

import (
	"strings"
	"testing"
)

func TestCheckOwner(t *testing.T) {
	for _, ok := range []string{"alice", "john.doe", "svc_ai", "Bob-2", "1000", "host$", "a", strings.Repeat("x", MaxOwner)} {
		if err := CheckOwner(ok); err != nil {
			t.Errorf("CheckOwner(%q) = %v, want accepted", ok, err)
		}
	}
	for _, bad := range []string{"", ".", "..", ".hidden", "-n", "a/b", "../x", "a\x00b", "a b", "$", "a$b", "é", "a\n", strings.Repeat("x", MaxOwner+1)} {
		if err := CheckOwner(bad); err == nil {
			t.Errorf("CheckOwner(%q) accepted, want refused", bad)
		}
	}
}

// An agent ID stays as strict as Link makes them: the owner's wider set
// is not an agent's.
func TestCheckIDStaysStrict(t *testing.T) {
	for _, bad := range []string{"john.doe", "svc_ai", "Bob"} {
		if CheckID(bad) == nil {
			t.Errorf("CheckID(%q) accepted", bad)
		}
	}
	if err := CheckID("a1-b"); err != nil {
		t.Errorf("CheckID(a1-b) = %v", err)
	}
}
