package sealedgrant

import (
	"context"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/secret"
	"lnk.dev/lnk/internal/wire"
)

// NetClient is the netbroker's side of its channel to the keybroker.
type NetClient struct{ c *wire.Client }

// NewNetClient wraps the netbroker's end of its channel.
func NewNetClient(c *wire.Client) *NetClient { return &NetClient{c} }

// SealedSecret returns a sealed secret granted to agent id (the agent
// the channel is bound to), and the one host its value may be added to
// requests for.
func (n *NetClient) SealedSecret(ctx context.Context, id, name string) (*secret.Value, string, error) {
	v, seal, err := n.SealedGrant(ctx, id, name)
	return v, seal.Host, err
}

// SealedGrant returns a sealed secret granted to agent id, with the one
// host its value may be added to requests for and the request headers
// it goes in there. A reply naming no header is refused: the broker
// always names at least the default, so an empty list is a broker that
// can't say, never "anywhere".
func (n *NetClient) SealedGrant(ctx context.Context, id, name string) (*secret.Value, Seal, error) {
	var r SealedReply
	files, err := n.c.Call(ctx, SpecSealedSecret, &SealedReq{AgentID: id, Name: name}, &r)
	if err != nil {
		return nil, Seal{}, RefusalOf(err)
	}
	defer wire.CloseFiles(files)
	if len(r.Headers) == 0 {
		return nil, Seal{}, fmt.Errorf("keybroker: sealed secret %s came with no header to add it to", name)
	}
	v, err := readSealed(files[0], r.Length)
	if err != nil {
		return nil, Seal{}, err
	}
	return v, Seal{Host: r.InternetHost, Headers: r.Headers}, nil
}

// readSealed reads a memfd that must be sealed against change.
func readSealed(f *os.File, n int) (*secret.Value, error) {
	seals, err := unix.FcntlInt(f.Fd(), unix.F_GET_SEALS, 0)
	want := unix.F_SEAL_WRITE | unix.F_SEAL_GROW | unix.F_SEAL_SHRINK
	if err != nil || seals&want != want {
		return nil, fmt.Errorf("keybroker: a sealed secret came in an fd that can still change")
	}
	if n <= 0 || n > 64<<10 {
		return nil, fmt.Errorf("keybroker: a sealed secret of %d bytes", n)
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(io.NewSectionReader(f, 0, int64(n)), buf); err != nil {
		clear(buf)
		return nil, fmt.Errorf("keybroker: reading a sealed secret: %w", err)
	}
	return secret.New(buf)
}
