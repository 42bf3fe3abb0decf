package netclass

import (
	"context"
	"errors"
	"net/netip"
	"slices"
	"testing"
)

// answers is a resolver of fixed answers, never DNS.
type answers map[string][]netip.Addr

func (m answers) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if as, ok := m[host]; ok {
		return as, nil
	}
	return nil, errors.New("no such host")
}

type noneOwn struct{}

func (noneOwn) AnyOwn(...netip.Addr) (bool, error) { return false, nil }

func publicOnly(_ netip.Addr, cl Class) error {
	if cl != Public {
		return errors.New("not public: " + cl.String())
	}
	return nil
}

// TestResolve: a name's answers are all returned, unmapped, when every
// one is allowed (the control); one refused answer refuses the name
// whole; a localhost name is loopback and never asked; no answer and an
// answer that cannot be judged are each their own error.
func TestResolve(t *testing.T) {
	ctx := context.Background()
	r := answers{
		"pub.test":    {netip.MustParseAddr("::ffff:198.51.100.7"), netip.MustParseAddr("2001:db8::7")},
		"mixed.test":  {netip.MustParseAddr("198.51.100.7"), netip.MustParseAddr("10.0.0.7")},
		"x.localhost": {netip.MustParseAddr("198.51.100.7")},
		"empty.test":  {},
	}
	host := func(s string) Host {
		h, err := ParseHost(s)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	got, err := Resolve(ctx, r, noneOwn{}, host("pub.test"), publicOnly)
	if err != nil || !slices.Equal(got, []netip.Addr{netip.MustParseAddr("198.51.100.7"), netip.MustParseAddr("2001:db8::7")}) {
		t.Fatalf("pub.test = %v, %v", got, err)
	}
	if got, err := Resolve(ctx, r, noneOwn{}, host("mixed.test"), publicOnly); err == nil || got != nil {
		t.Fatalf("mixed.test = %v, %v; want refused whole", got, err)
	}
	var seen []Class
	if _, err := Resolve(ctx, r, noneOwn{}, host("x.localhost"), func(_ netip.Addr, cl Class) error { seen = append(seen, cl); return publicOnly(netip.Addr{}, cl) }); err == nil || !slices.Equal(seen, []Class{Loopback}) {
		t.Fatalf("x.localhost: %v, judged %v; want refused as loopback", err, seen)
	}
	for _, name := range []string{"empty.test", "gone.test"} {
		var u *UnresolvedError
		if _, err := Resolve(ctx, r, noneOwn{}, host(name), publicOnly); !errors.As(err, &u) {
			t.Fatalf("%s: %v; want an UnresolvedError", name, err)
		}
	}
	var c *UncheckedError
	if _, err := Resolve(ctx, r, nil, host("pub.test"), func(netip.Addr, Class) error { return nil }); !errors.As(err, &c) {
		t.Fatalf("no own set: %v; want an UncheckedError even when every class is allowed", err)
	}
	if _, err := Resolve(ctx, r, noneOwn{}, host("pub.test"), nil); err == nil {
		t.Fatal("no rule judged as allowing all")
	}
}
