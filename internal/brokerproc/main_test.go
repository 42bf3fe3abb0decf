package brokerproc

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"

	"lnk.dev/lnk/internal/brokerproc/child"
	"lnk.dev/lnk/internal/wire"
)

// The test binary is also the broker the tests start: with
// LNK_BROKERPROC_TEST_CHILD=1 in its environment it serves testRoutes.
const childMarker = "LNK_BROKERPROC_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childMarker) == "1" {
		os.Exit(childMain())
	}
	os.Exit(m.Run())
}

type empty struct{}

var (
	specPing = wire.Spec{Type: 1, Name: "ping", States: wire.AnyState}
	// block tells the test it arrived (a byte on the extra file) and never
	// returns.
	specBlock = wire.Spec{Type: 2, Name: "block", States: wire.AnyState}
)

func childMain() int {
	ch, extra, err := child.Channel(true)
	if err != nil {
		fmt.Fprintln(os.Stderr, "test broker:", err)
		return 2
	}
	routes := wire.Table(
		wire.Handle(specPing, func(ctx context.Context, r *wire.Request, q *empty) (*empty, []*os.File, error) {
			return &empty{}, nil, nil
		}),
		wire.Handle(specBlock, func(ctx context.Context, r *wire.Request, q *empty) (*empty, []*os.File, error) {
			extra[0].Write([]byte{1})
			select {}
		}),
	)
	srv, err := wire.NewServer(ch, routes, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "test broker:", err)
		return 2
	}
	srv.Serve(context.Background())
	return 0
}

// startTestBroker starts the test binary as a broker with extra files;
// it is killed and reaped in cleanup.
func startTestBroker(t *testing.T, extra ...*os.File) (*Proc, *wire.Client) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p, err := Start(Options{Path: exe, Files: extra, Env: []string{childMarker + "=1"}, Log: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Kill)
	cl, err := wire.NewClient(p.Chan)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	if _, err := cl.Call(context.Background(), specPing, &empty{}, &empty{}); err != nil {
		t.Fatalf("the broker does not answer: %v", err)
	}
	return p, cl
}

// fdsOf lists /proc/pid/fd as number → link target.
func fdsOf(t *testing.T, pid int) map[int]string {
	t.Helper()
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := map[int]string{}
	for _, e := range ents {
		n, _ := strconv.Atoi(e.Name())
		target, err := os.Readlink(dir + "/" + e.Name())
		if err != nil {
			continue // closed while listed
		}
		m[n] = target
	}
	return m
}

func describe(m map[int]string) string {
	var ks []int
	for k := range m {
		ks = append(ks, k)
	}
	sort.Ints(ks)
	var b strings.Builder
	for _, k := range ks {
		fmt.Fprintf(&b, " %d→%s", k, m[k])
	}
	return b.String()
}
