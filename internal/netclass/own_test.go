package netclass

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/testenv"
)

// The test's stand-in for this machine's public addresses: an
// interface in the test's own network namespace holds them.
const (
	ownDev   = "lnkown0"
	ownAddr4 = "198.51.100.5"
	ownAddr6 = "2001:db8:5::5"
	ownLater = "198.51.100.9" // added once the watch runs
)

func addOwnDev(t *testing.T) {
	t.Helper()
	if err := testenv.AddInterface(ownDev); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{ownAddr4 + "/24", ownAddr6 + "/64"} {
		if err := testenv.AddAddr(ownDev, netip.MustParsePrefix(p)); err != nil {
			t.Fatal(err)
		}
	}
}

func addLater(t *testing.T, a string) {
	t.Helper()
	if err := testenv.AddAddr(ownDev, netip.MustParsePrefix(a+"/32")); err != nil {
		t.Fatal(err)
	}
}

// The watch lists the namespace's addresses, sees one added after it
// started at the next question, lists all again after the kernel
// dropped notices (a receive buffer too small for them), and once its
// socket is gone answers with an error, never "not own".
func TestOwnWatch(t *testing.T) {
	if !testenv.InNetns(t) {
		return
	}
	addOwnDev(t)
	w, err := WatchOwnAddrs()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	is := func(a string) bool {
		t.Helper()
		own, err := w.AnyOwn(netip.MustParseAddr(a))
		if err != nil {
			t.Fatalf("%s: %v", a, err)
		}
		return own
	}
	for _, a := range []string{ownAddr4, ownAddr6, "::ffff:" + ownAddr4} {
		if !is(a) {
			t.Errorf("%s is not own; the set: %v", a, w.Addrs())
		}
	}
	if is("198.51.100.6") || is(ownLater) {
		t.Fatalf("a neighbour's address is own: %v", w.Addrs())
	}
	addLater(t, ownLater)
	if !is(ownLater) {
		t.Fatalf("%s, added after the watch began, is not own: %v", ownLater, w.Addrs())
	}

	// Overflow: the smallest receive buffer, then more notices than it
	// holds. The kernel drops them (ENOBUFS); the next question lists all
	// again and knows every address added meanwhile.
	w.rc.Control(func(fd uintptr) { unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF, 0) })
	for i := 1; i <= 64; i++ {
		addLater(t, fmt.Sprintf("198.51.101.%d", i))
	}
	for i := 1; i <= 64; i++ {
		if a := fmt.Sprintf("198.51.101.%d", i); !is(a) {
			t.Fatalf("%s, added while notices were dropped, is not own", a)
		}
	}
	if w.relisted == 0 {
		t.Fatal("no notice was dropped: the overflow was not tried")
	}

	// An overflow whose new list fails (no time to wait for it): every
	// question is refused, the next too, until a list is had.
	for i := 1; i <= 64; i++ {
		addLater(t, fmt.Sprintf("198.51.102.%d", i))
	}
	ownDumpTimeout = -1
	for try := 0; try < 2; try++ {
		if own, err := w.AnyOwn(netip.MustParseAddr("198.51.102.64")); err == nil {
			t.Fatalf("question %d after a failed list answered %v, no error", try+1, own)
		}
	}
	ownDumpTimeout = 5 * time.Second
	if !is("198.51.102.64") {
		t.Fatal("198.51.102.64 is not own once the list is had again")
	}

	w.Close()
	if own, err := w.AnyOwn(netip.MustParseAddr(ownAddr4)); err == nil {
		t.Fatalf("a closed watch answered %v, no error", own)
	}
}

// A namespace with no address at all (loopback's taken away): the watch
// does not start there, never with an empty set that calls every
// address not own; with loopback's back (the control) it starts.
func TestOwnWatchRefusesAnEmptyList(t *testing.T) {
	if !testenv.InNetns(t) {
		return
	}
	lo := []netip.Prefix{netip.MustParsePrefix("127.0.0.1/8"), netip.MustParsePrefix("::1/128")}
	for _, p := range lo {
		if err := testenv.DelAddr("lo", p); err != nil {
			t.Fatal(err)
		}
	}
	if w, err := WatchOwnAddrs(); err == nil || !strings.Contains(err.Error(), "listed none") {
		if w != nil {
			t.Errorf("the set: %v", w.Addrs())
		}
		t.Fatalf("with no address: %v", err)
	}
	for _, p := range lo {
		if err := testenv.AddAddr("lo", p); err != nil {
			t.Fatal(err)
		}
	}
	w, err := WatchOwnAddrs()
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
}
