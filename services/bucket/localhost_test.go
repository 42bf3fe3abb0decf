package bucket

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"

	"lnk.dev/lnk/internal/netclass"
)

// fixedAnswers answers every name with the same addresses, never DNS.
type fixedAnswers []netip.Addr

func (f fixedAnswers) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return f, nil
}

// TestLocalhostNameIsLoopback: an endpoint under .localhost is this
// machine whatever a resolver answers (RFC 6761), refused as loopback,
// with or without --private-host; the same public answer for another
// name is taken (the control). The bucket's old copy of the routine
// asked the resolver, and took the public answer.
func TestLocalhostNameIsLoopback(t *testing.T) {
	own, err := netclass.WatchOwnAddrs()
	if err != nil {
		t.Fatal(err)
	}
	defer own.Close()
	pub := netip.MustParseAddr("198.51.100.7")
	a := &Agent{Name: "helper", Resolver: fixedAnswers{pub}}
	e := &entry{Bucket: Bucket{Name: "far", Endpoint: "https://s3.localhost", S3Bucket: testBucket}}
	for _, private := range []bool{false, true} {
		h, _ := netclass.ParseHost("s3.localhost")
		_, err := a.checkAddrs(context.Background(), e, h, own, private)
		if !errors.Is(err, ErrEndpointReach) || !strings.Contains(err.Error(), "resolves to a loopback address (127.0.0.1)") {
			t.Fatalf("s3.localhost (private %v): %v; want refused as loopback", private, err)
		}
	}
	h, _ := netclass.ParseHost("s3.lnk-test.example")
	if got, err := a.checkAddrs(context.Background(), e, h, own, false); err != nil || len(got) != 1 || got[0] != pub {
		t.Fatalf("the control: %v, %v", got, err)
	}
}
