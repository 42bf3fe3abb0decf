package keybroker

import (
	"context"
	"os"

	"lnk.dev/lnk/helpers/keybroker/proof"
	"lnk.dev/lnk/internal/sealedgrant"
	"lnk.dev/lnk/internal/wire"
)

// The broker's refusals as a caller sees them (package sealedgrant, which
// the netbroker's client shares): errors.Is(err, ErrRefused) for a rule's
// refusal, ErrMissing for something that isn't there.
var (
	ErrRefused = sealedgrant.ErrRefused
	ErrMissing = sealedgrant.ErrMissing
)

// Refusal is a refusal that came back over the wire, with its reason.
type Refusal = sealedgrant.Refusal

func mapErr(err error) error { return sealedgrant.RefusalOf(err) }

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
// the agent; the netbroker wraps its end in a sealedgrant.NetClient.
func (c *Client) NetChannel(ctx context.Context, agentID string, f *os.File) ([]string, error) {
	var r NetChannelReply
	if _, err := c.c.Call(ctx, SpecNetChannel, &NetChannelReq{AgentID: agentID}, &r, f); err != nil {
		return nil, mapErr(err)
	}
	return r.Names, nil
}
