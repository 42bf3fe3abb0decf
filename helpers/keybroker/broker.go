package keybroker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/helpers/keybroker/proof"
	"lnk.dev/lnk/helpers/keybroker/secrets"
	"lnk.dev/lnk/internal/secret"
	"lnk.dev/lnk/internal/wire"
)

var (
	errRefused = errors.New("refused")
	errNoKey   = errors.New("missing")
)

// Broker is the keybroker's state.
type Broker struct {
	logf func(format string, a ...any)

	mu      sync.Mutex
	keysDir *os.File
	secrets *secrets.File            // nil: no secrets file was handed
	keys    map[string]*secret.Value // agent ID → this start's key
	net     *wire.Server             // the netbroker's channel, once handed
	// only, when set, is the one agent this broker serves (a run's own
	// broker, [NewForAgent]): it keeps no other secret's value.
	only string
}

// New makes a Broker over the keys folder and, if not nil, the secrets
// file; it reads the file at once. logf takes one line per refusal.
func New(keysDir, secretsFile *os.File, logf func(format string, a ...any)) (*Broker, error) {
	return NewForAgent(keysDir, secretsFile, "", logf)
}

// NewForAgent is [New] for a broker that serves one agent, agentID (a
// run's broker, lnk-keybroker --agent): of the secrets file it keeps only
// the sealed secrets granted to that agent, zeroing every other value as
// soon as it is read, and binds its netbroker channel to no other agent.
// An empty agentID is [New].
func NewForAgent(keysDir, secretsFile *os.File, agentID string, logf func(format string, a ...any)) (*Broker, error) {
	if agentID != "" {
		if err := secrets.CheckAgentID(agentID); err != nil {
			return nil, fmt.Errorf("%q is not an agent ID", printable(agentID))
		}
	}
	b := &Broker{logf: logf, keysDir: keysDir, keys: map[string]*secret.Value{}, only: agentID}
	if err := b.load(secretsFile); err != nil {
		return nil, err
	}
	return b, nil
}

func (b *Broker) load(f *os.File) error {
	if f == nil {
		return nil
	}
	file, err := secrets.Read(f)
	if err != nil {
		return err
	}
	if b.only != "" {
		for name, e := range file.Secrets {
			if !e.Sealed() || !e.GrantedTo(b.only) {
				e.Value.Destroy()
				delete(file.Secrets, name)
			}
		}
	}
	b.mu.Lock()
	old := b.secrets
	b.secrets = file
	b.mu.Unlock()
	if old != nil {
		old.Destroy()
	}
	return nil
}

// refuse logs a refusal once, with its reason, and returns it for the wire.
func (b *Broker) refuse(req string, code, format string, a ...any) error {
	msg := fmt.Sprintf(format, a...)
	b.logf("refused %s: %s", req, msg)
	return wire.Errorf(code, "%s", msg)
}

func (b *Broker) checkID(req, id string) error {
	if err := secrets.CheckAgentID(id); err != nil {
		return b.refuse(req, CodeRefused, "%q is not an agent ID", printable(id))
	}
	return nil
}

// KernelTable is the request table of the kernel's channel.
func (b *Broker) KernelTable() map[wire.Type]*wire.Route {
	return wire.Table(
		wire.Handle(SpecMakeAgentKey, b.makeAgentKey),
		wire.Handle(SpecDropAgentKey, b.dropAgentKey),
		wire.Handle(SpecProve, b.prove),
		wire.Handle(SpecCheckProof, b.checkProof),
		wire.Handle(SpecReloadSecrets, b.reloadSecrets),
		wire.Handle(SpecNetChannel, b.netChannel),
	)
}

// NetTable is the request table of a netbroker's channel bound to agent
// agentID: its sealed secrets, and nothing else.
func (b *Broker) NetTable(agentID string) map[wire.Type]*wire.Route {
	return wire.Table(wire.Handle(SpecSealedSecret, func(ctx context.Context, req *wire.Request, r *SealedReq) (*SealedReply, []*os.File, error) {
		return b.sealedSecret(ctx, agentID, r)
	}))
}

func (b *Broker) makeAgentKey(_ context.Context, _ *wire.Request, r *AgentKeyReq) (*AgentKeyReply, []*os.File, error) {
	if err := b.checkID(SpecMakeAgentKey.Name, r.AgentID); err != nil {
		return nil, nil, err
	}
	key, err := writeKey(b.keysDir, r.AgentID, time.Now())
	if err != nil {
		return nil, nil, err
	}
	b.mu.Lock()
	old := b.keys[r.AgentID]
	b.keys[r.AgentID] = key
	b.mu.Unlock()
	old.Destroy()
	return &AgentKeyReply{File: ".keys/" + r.AgentID + ".json"}, nil, nil
}

func (b *Broker) dropAgentKey(_ context.Context, _ *wire.Request, r *AgentKeyReq) (*Empty, []*os.File, error) {
	if err := b.checkID(SpecDropAgentKey.Name, r.AgentID); err != nil {
		return nil, nil, err
	}
	b.mu.Lock()
	old := b.keys[r.AgentID]
	delete(b.keys, r.AgentID)
	b.mu.Unlock()
	old.Destroy()
	return &Empty{}, nil, removeKey(b.keysDir, r.AgentID)
}

// key is agent id's key for this start: held, or read back from its file
// after a restart.
func (b *Broker) key(req, id string) (*secret.Value, error) {
	if err := b.checkID(req, id); err != nil {
		return nil, err
	}
	b.mu.Lock()
	k := b.keys[id]
	b.mu.Unlock()
	if k != nil {
		return k, nil
	}
	k, err := readKey(b.keysDir, id)
	if err != nil {
		code := CodeRefused
		if errors.Is(err, errNoKey) {
			code = CodeMissing
		}
		return nil, b.refuse(req, code, "%v", err)
	}
	b.mu.Lock()
	if held := b.keys[id]; held != nil {
		k.Destroy()
		k = held
	} else {
		b.keys[id] = k
	}
	b.mu.Unlock()
	return k, nil
}

func (b *Broker) prove(_ context.Context, _ *wire.Request, r *ProveReq) (*ProveReply, []*os.File, error) {
	k, err := b.key(SpecProve.Name, r.AgentID)
	if err != nil {
		return nil, nil, err
	}
	if len(r.Challenge) != proof.ChallengeSize {
		return nil, nil, b.refuse(SpecProve.Name, CodeRefused, "a challenge is 32 bytes, not %d", len(r.Challenge))
	}
	ans, err := proof.Answer(k.Bytes(), proof.Context{AgentID: r.AgentID, Owner: r.Owner, Purpose: r.Purpose}, [32]byte(r.Challenge))
	runtime.KeepAlive(k)
	if err != nil {
		return nil, nil, b.refuse(SpecProve.Name, CodeRefused, "%v", err)
	}
	return &ProveReply{Answer: ans[:]}, nil, nil
}

func (b *Broker) checkProof(_ context.Context, _ *wire.Request, r *CheckReq) (*CheckReply, []*os.File, error) {
	k, err := b.key(SpecCheckProof.Name, r.AgentID)
	if err != nil {
		return nil, nil, err
	}
	if len(r.Challenge) != proof.ChallengeSize {
		return nil, nil, b.refuse(SpecCheckProof.Name, CodeRefused, "a challenge is 32 bytes, not %d", len(r.Challenge))
	}
	ok := proof.Check(k.Bytes(), proof.Context{AgentID: r.AgentID, Owner: r.Owner, Purpose: r.Purpose}, [32]byte(r.Challenge), r.Answer)
	runtime.KeepAlive(k)
	if !ok {
		b.logf("refused %s: agent %s's proof for owner %q, purpose %q does not hold", SpecCheckProof.Name, r.AgentID, printable(r.Owner), printable(r.Purpose))
	}
	return &CheckReply{OK: ok}, nil, nil
}

func (b *Broker) reloadSecrets(_ context.Context, req *wire.Request, _ *Empty) (*Empty, []*os.File, error) {
	var f *os.File
	if len(req.Files) == 1 {
		f = req.Files[0]
	}
	if err := b.load(f); err != nil {
		return nil, nil, b.refuse(SpecReloadSecrets.Name, CodeRefused, "%v", err)
	}
	if f == nil {
		b.mu.Lock()
		old := b.secrets
		b.secrets = nil
		b.mu.Unlock()
		if old != nil {
			old.Destroy()
		}
	}
	return &Empty{}, nil, nil
}

// netChannel takes the netbroker's channel, bound to the agent its
// hander names, and serves NetTable on it; it answers with the names of
// that agent's sealed secrets.
func (b *Broker) netChannel(ctx context.Context, req *wire.Request, r *NetChannelReq) (*NetChannelReply, []*os.File, error) {
	if err := b.checkID(SpecNetChannel.Name, r.AgentID); err != nil {
		return nil, nil, err
	}
	if b.only != "" && r.AgentID != b.only {
		return nil, nil, b.refuse(SpecNetChannel.Name, CodeRefused, "this broker serves agent %s alone, not %s", b.only, r.AgentID)
	}
	f := req.Files[0]
	if typ, err := unix.GetsockoptInt(int(f.Fd()), unix.SOL_SOCKET, unix.SO_TYPE); err != nil || typ != unix.SOCK_SEQPACKET {
		return nil, nil, b.refuse(SpecNetChannel.Name, CodeRefused, "the netbroker's channel is not a SOCK_SEQPACKET socket")
	}
	srv, err := wire.NewServer(f, b.NetTable(r.AgentID), b.logf)
	if err != nil {
		return nil, nil, err
	}
	req.Files[0] = nil // taken: the server owns it now
	b.mu.Lock()
	b.net = srv
	names := []string{}
	if b.secrets != nil {
		for _, n := range b.secrets.Names() {
			if e := b.secrets.Secrets[n]; e.Sealed() && e.GrantedTo(r.AgentID) {
				names = append(names, n)
			}
		}
	}
	b.mu.Unlock()
	go func() {
		if err := srv.Serve(context.Background()); err != nil && !errors.Is(err, wire.ErrClosed) {
			b.logf("netbroker channel closed: %v", err)
		}
	}()
	return &NetChannelReply{Names: names}, nil, nil
}

// sealedSecret hands a sealed secret granted to agent, the one the
// channel is bound to (it is in no other table). Every name the agent
// does not hold, whether it exists, is another agent's or is plain, and
// any other agent ID asked, gets one and the same refusal: the asker
// learns no secret's existence. The log says the true reason.
func (b *Broker) sealedSecret(_ context.Context, agent string, r *SealedReq) (*SealedReply, []*os.File, error) {
	const req = "sealed.secret"
	notHeld := func(format string, a ...any) error {
		b.logf("refused %s: %s", req, fmt.Sprintf(format, a...))
		return wire.Errorf(CodeRefused, "agent %s holds no sealed secret %s (lnk secret add NAME --agent AGENT grants one)", agent, printable(r.Name))
	}
	if r.AgentID != agent {
		return nil, nil, notHeld("the channel is agent %s's, asked for agent %q's secret %s", agent, printable(r.AgentID), printable(r.Name))
	}
	if err := secrets.CheckName(r.Name); err != nil {
		return nil, nil, notHeld("%q is not a secret's name", printable(r.Name))
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	var e *secrets.Entry
	if b.secrets != nil {
		e = b.secrets.Secrets[r.Name]
	}
	switch {
	case e == nil:
		return nil, nil, notHeld("no secret %s (held by agent %s)", r.Name, agent)
	case !e.GrantedTo(agent):
		return nil, nil, notHeld("agent %s does not hold secret %s (lnk secret add %s --agent AGENT)", agent, r.Name, r.Name)
	case !e.Sealed():
		return nil, nil, notHeld("secret %s is kept plain, and a plain secret is never given to an agent (lnk secret create %s --internet-host HOST seals one)", r.Name, r.Name)
	}
	f, err := sealedMemfd(e.Value.Bytes())
	runtime.KeepAlive(e.Value)
	if err != nil {
		return nil, nil, err
	}
	b.logf("handed sealed secret %s of agent %s to the netbroker, for %s", r.Name, agent, e.InternetHost)
	return &SealedReply{InternetHost: e.InternetHost, Headers: e.Seal().Headers, Length: e.Value.Len()}, []*os.File{f}, nil
}

// Close stops the netbroker's channel and zeroes every key and secret.
func (b *Broker) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.net != nil {
		b.net.Close()
	}
	for id, k := range b.keys {
		k.Destroy()
		delete(b.keys, id)
	}
	if b.secrets != nil {
		b.secrets.Destroy()
		b.secrets = nil
	}
}

func printable(s string) string {
	if len(s) > 64 {
		s = s[:64] + "…"
	}
	out := []rune{}
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			r = '?'
		}
		out = append(out, r)
	}
	return string(out)
}
