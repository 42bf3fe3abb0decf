//go:build !race

// (The race detector drops sync.Pool items at random: the counts below
// hold only without it.)

package fs

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/helpers/fsbroker"
	"lnk.dev/lnk/internal/resolve"
	"lnk.dev/lnk/internal/wire"
)

// TestReadAllocatesOnlyTheData: on the client's side, a 4 KiB fs.Read
// through the real broker allocates the data and nothing else (averaged
// over 200 reads, so a pool refilled after a GC does not count).
func TestReadAllocatesOnlyTheData(t *testing.T) {
	tr := newTree(t)
	c, _ := startBroker(t, tr)
	must(t, os.WriteFile(filepath.Join(tr.home, "f"), make([]byte, 4096), 0o600))
	ctx := context.Background()
	if _, err := c.Read(ctx, "home", "f"); err != nil { // fills the pools
		t.Fatal(err)
	}
	n := testing.AllocsPerRun(200, func() {
		if _, err := c.Read(ctx, "home", "f"); err != nil {
			t.Fatal(err)
		}
	})
	if n > 1 {
		t.Fatalf("fs.Read allocated %v times a call; want 1 (the data)", n)
	}
}

// TestOpenAllocations: the broker's table served in this process (the
// same code lnk-fsbroker runs, unconfined) over a socketpair: an open,
// both sides together, allocates twice — the decoded request and its
// names — and nothing on the client's side.
func TestOpenAllocations(t *testing.T) {
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "f"), make([]byte, 4096), 0o600))
	r, err := resolve.OpenRoot(dir)
	must(t, err)
	defer r.Close()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	must(t, err)
	srv, err := wire.NewServer(os.NewFile(uintptr(fds[1]), "broker"), fsbroker.Table([]*fsbroker.Root{{Name: "home", R: r}}), t.Logf)
	must(t, err)
	srv.SetState(fsbroker.StateReady)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(context.Background()) }()
	c, err := New(os.NewFile(uintptr(fds[0]), "client"))
	must(t, err)
	defer func() {
		c.Close()
		<-served
	}()
	ctx := context.Background()
	open := func() {
		fd, _, err := c.OpenFd(ctx, "home", "f", 0)
		if err != nil {
			t.Fatal(err)
		}
		unix.Close(fd)
	}
	open() // fills the pools and the reused buffers
	if n := testing.AllocsPerRun(200, open); n > 2 {
		t.Fatalf("an open allocated %v times (client and broker); want 2", n)
	}
}
