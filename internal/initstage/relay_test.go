package initstage

import (
	"net"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/connpass"
)

// The listener handed to the proxy queues as many connections as the
// proxy holds open at once: a burst the command makes before the proxy
// accepts any is queued whole, each connect done at once, none dropped
// to a SYN retried a second later.
func TestRelayQueuesABurstBeforeTheProxyAccepts(t *testing.T) {
	ch, send, err := connpass.ReceivingPair()
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	defer send.Close()
	fd, err := unix.Dup(int(send.Fd())) // handRelay closes the channel's fd it is given
	if err != nil {
		t.Fatal(err)
	}
	if err := handRelay(&Relay{Port: 0}, fd, -1); err != nil {
		t.Fatal(err)
	}
	ln, held, err := connpass.NewReceiver(ch).ReceiveListener()
	if err != nil || len(held) != 0 {
		t.Fatalf("the proxy's end took %v, %d held (%v)", ln, len(held), err)
	}
	defer ln.Close()
	var wg sync.WaitGroup
	conns := make([]net.Conn, relayBacklog)
	errs := make([]error, relayBacklog)
	for i := range relayBacklog {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conns[i], errs[i] = net.DialTimeout("tcp", ln.Addr().String(), 800*time.Millisecond)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("connection %d of a burst of %d, none accepted yet: %v", i+1, relayBacklog, err)
		}
		defer conns[i].Close()
	}
}
