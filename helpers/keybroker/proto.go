package keybroker

import (
	"lnk.dev/lnk/internal/sealedgrant"
	"lnk.dev/lnk/internal/wire"
)

// Request types. Both sides use these Specs; the names pair across the
// boundary (Client.MakeAgentKey ↔ handler makeAgentKey).
var (
	SpecMakeAgentKey  = wire.Spec{Type: 0x0601, Name: "agentkey.make", States: wire.AnyState}
	SpecDropAgentKey  = wire.Spec{Type: 0x0602, Name: "agentkey.drop", States: wire.AnyState}
	SpecProve         = wire.Spec{Type: 0x0603, Name: "proof.answer", States: wire.AnyState}
	SpecCheckProof    = wire.Spec{Type: 0x0604, Name: "proof.check", States: wire.AnyState}
	SpecReloadSecrets = wire.Spec{Type: 0x0605, Name: "secrets.reload", FDs: 0, MaxFDs: 1, States: wire.AnyState}
	SpecNetChannel    = wire.Spec{Type: 0x0606, Name: "netbroker.channel", FDs: 1, Flags: wire.Once, States: wire.AnyState}
	// SpecSealedSecret is the netbroker's request, on its own channel
	// (package sealedgrant holds it and the netbroker's client).
	SpecSealedSecret = sealedgrant.SpecSealedSecret
)

// AgentKeyReq names an agent by ID.
type AgentKeyReq struct {
	AgentID string `json:"agent_id"`
}

// AgentKeyReply says where the key was written (relative to ~/.lnk/agents).
type AgentKeyReply struct {
	File string `json:"file"`
}

// Empty is a reply with nothing in it.
type Empty struct{}

// ProveReq asks the broker to answer a challenge with an agent's key.
type ProveReq struct {
	AgentID   string `json:"agent_id"`
	Owner     string `json:"owner"`
	Purpose   string `json:"purpose"`
	Challenge []byte `json:"challenge"` // 32 bytes
}

// ProveReply is the answer: HMAC-SHA256(key, context ‖ challenge).
type ProveReply struct {
	Answer []byte `json:"answer"`
}

// CheckReq asks whether answer proves the agent's key.
type CheckReq struct {
	AgentID   string `json:"agent_id"`
	Owner     string `json:"owner"`
	Purpose   string `json:"purpose"`
	Challenge []byte `json:"challenge"`
	Answer    []byte `json:"answer"`
}

// CheckReply is the verdict.
type CheckReply struct {
	OK bool `json:"ok"`
}

// NetChannelReq binds the netbroker's channel handed with it to one
// agent: whoever hands the channel out names the agent, never the
// netbroker.
type NetChannelReq struct {
	AgentID string `json:"agent_id"`
}

// NetChannelReply names the sealed secrets the channel will serve: those
// granted to its agent, sorted. Names only, never a value.
type NetChannelReply struct {
	Names []string `json:"names"`
}

// SealedReq and SealedReply are the netbroker's request and the reply
// (package sealedgrant).
type (
	SealedReq   = sealedgrant.SealedReq
	SealedReply = sealedgrant.SealedReply
)

// Error codes a Client maps back to the errors below.
const (
	CodeRefused = sealedgrant.CodeRefused
	CodeMissing = sealedgrant.CodeMissing
)
