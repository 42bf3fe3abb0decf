package keybroker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/helpers/keybroker/proof"
	"lnk.dev/lnk/helpers/keybroker/secrets"
	"lnk.dev/lnk/internal/secret"
	"lnk.dev/lnk/internal/wire"
)

// The broker's refusals as a caller sees them: errors.Is(err, ErrRefused)
// for a rule's refusal, ErrMissing for something that isn't there.
var (
	ErrRefused = errors.New("keybroker refused")
	ErrMissing = errors.New("keybroker has no such thing")
)

// Refusal is a refusal that came back over the wire, with its reason.
type Refusal struct {
	Code   string
	Reason string
}

func (r *Refusal) Error() string { return "keybroker: " + r.Reason }

// Is makes errors.Is(err, ErrRefused/ErrMissing) work.
func (r *Refusal) Is(target error) bool {
	return (target == ErrRefused && r.Code == CodeRefused) || (target == ErrMissing && r.Code == CodeMissing)
}

func mapErr(err error) error {
	var we *wire.Error
	if errors.As(err, &we) && (we.Code == CodeRefused || we.Code == CodeMissing) {
		return &Refusal{Code: we.Code, Reason: we.Message}
	}
	return err
}

// Client is the kernel's side of the keybroker's channel.
type Client struct{ c *wire.Client }

// NewClient wraps the kernel's end of the broker's channel.
func NewClient(c *wire.Client) *Client { return &Client{c} }

// MakeAgentKey makes agent id's key for this start, written to
// ~/.lnk/agents/.keys/<id>.json; it returns that file's name under
// ~/.lnk/agents.
func (c *Client) MakeAgentKey(ctx context.Context, id string) (string, error) {
	var r AgentKeyReply
	_, err := c.c.Call(ctx, SpecMakeAgentKey, &AgentKeyReq{AgentID: id}, &r)
	return r.File, mapErr(err)
}

// DropAgentKey forgets agent id's key and removes its file.
func (c *Client) DropAgentKey(ctx context.Context, id string) error {
	_, err := c.c.Call(ctx, SpecDropAgentKey, &AgentKeyReq{AgentID: id}, &Empty{})
	return mapErr(err)
}

// Prove answers challenge with agent id's key, for ctx.
func (c *Client) Prove(ctx context.Context, p proof.Context, challenge [proof.ChallengeSize]byte) ([]byte, error) {
	var r ProveReply
	_, err := c.c.Call(ctx, SpecProve, &ProveReq{AgentID: p.AgentID, Owner: p.Owner, Purpose: p.Purpose, Challenge: challenge[:]}, &r)
	return r.Answer, mapErr(err)
}

// CheckProof reports whether answer proves agent p.AgentID's key for p.
func (c *Client) CheckProof(ctx context.Context, p proof.Context, challenge [proof.ChallengeSize]byte, answer []byte) (bool, error) {
	var r CheckReply
	_, err := c.c.Call(ctx, SpecCheckProof, &CheckReq{AgentID: p.AgentID, Owner: p.Owner, Purpose: p.Purpose, Challenge: challenge[:], Answer: answer}, &r)
	return r.OK, mapErr(err)
}

// ReloadSecrets hands a fresh secrets.toml fd (nil: there is none now).
func (c *Client) ReloadSecrets(ctx context.Context, f *os.File) error {
	var files []*os.File
	if f != nil {
		files = []*os.File{f}
	}
	_, err := c.c.Call(ctx, SpecReloadSecrets, &Empty{}, &Empty{}, files...)
	return mapErr(err)
}

// NetChannel hands the broker one end of the netbroker's channel, bound
// to agent agentID: it serves that agent's sealed secrets and no other's,
// whatever the netbroker asks. It returns their names (never a value).
// Whoever hands the other end to the netbroker (lnk sandbox run) names
// the agent; the netbroker wraps its end in a [NetClient].
func (c *Client) NetChannel(ctx context.Context, agentID string, f *os.File) ([]string, error) {
	var r NetChannelReply
	if _, err := c.c.Call(ctx, SpecNetChannel, &NetChannelReq{AgentID: agentID}, &r, f); err != nil {
		return nil, mapErr(err)
	}
	return r.Names, nil
}

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
func (n *NetClient) SealedGrant(ctx context.Context, id, name string) (*secret.Value, secrets.Seal, error) {
	var r SealedReply
	files, err := n.c.Call(ctx, SpecSealedSecret, &SealedReq{AgentID: id, Name: name}, &r)
	if err != nil {
		return nil, secrets.Seal{}, mapErr(err)
	}
	defer wire.CloseFiles(files)
	if len(r.Headers) == 0 {
		return nil, secrets.Seal{}, fmt.Errorf("keybroker: sealed secret %s came with no header to add it to", name)
	}
	v, err := readSealed(files[0], r.Length)
	if err != nil {
		return nil, secrets.Seal{}, err
	}
	return v, secrets.Seal{Host: r.InternetHost, Headers: r.Headers}, nil
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
