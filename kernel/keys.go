package kernel

import (
	"context"
	"errors"
	"io"
	"os"
	"regexp"
	"sync"

	"lnk.dev/lnk/helpers/keybroker"
	"lnk.dev/lnk/internal/audit"
	"lnk.dev/lnk/internal/wire"
	"lnk.dev/lnk/kernel/proto"
)

// keyBrokerName names the kernel-wide key broker.
const keyBrokerName = "key"

// agentID is compiled at first use, not at every start of lnk.
var agentID = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]{32}$`) })

// keyClient is the key broker's client and the channel it closes.
type keyClient struct {
	*keybroker.Client
	w *wire.Client
}

func (c keyClient) Close() error { return c.w.Close() }

// defaultBrokers are the kernel-wide brokers whose binaries are beside
// this program: lnk-keybroker (keybroker's "Starting it": fd 4 the keys
// folder, fd 5 secrets.toml when there is one). One missing is said in
// the kernel's log and the audit log, never left out in silence.
func (k *Kernel) defaultBrokers() []BrokerSpec {
	var out []BrokerSpec
	bin, err := k.brokerPath("lnk-keybroker")
	if err != nil {
		k.opts.Logf("the key broker is not started (a start naming an agent ID is refused): %v", err)
		k.record(audit.Entry{Kind: audit.KindKernel, Route: keyBrokerName, Reason: "not started (a start naming an agent ID is refused): " + err.Error()})
	} else {
		out = append(out, BrokerSpec{
			Name:  keyBrokerName,
			Path:  bin,
			Files: func(k *Kernel) ([]*os.File, error) { return keybroker.StartFiles(k.opts.Home) },
			Connect: func(ctx context.Context, ch *os.File) (io.Closer, error) {
				w, err := wire.NewClient(ch)
				if err != nil {
					return nil, err
				}
				return keyClient{keybroker.NewClient(w), w}, nil
			},
		})
	}
	return out
}

// makeAgentKey has the key broker make the agent's key for a start
// naming an agent ID. Without a key broker (lnk-keybroker was missing
// when the kernel started) the start is refused, naming the missing
// program, as a start with folders is without lnk-fsbroker: it never
// runs without the agent's key.
func (k *Kernel) makeAgentKey(ctx context.Context, start uint64, agent, id string) error {
	if id == "" {
		return nil
	}
	if !agentID().MatchString(id) {
		return wire.Errorf(proto.CodeRefused, "agent ID %q is not 32 lowercase hex digits", id)
	}
	if !k.bro.has(keyBrokerName) {
		_, err := k.brokerPath("lnk-keybroker")
		if err == nil { // there now, but not when the kernel started
			err = errors.New("lnk-keybroker was missing when the kernel started (lnk kernel stop, and the next use starts it again)")
		}
		return wire.Errorf(proto.CodeFailed, "the agent's key: %v", err)
	}
	cl, err := k.bro.client(ctx, keyBrokerName)
	if err != nil {
		return err
	}
	if _, err := cl.(keyClient).MakeAgentKey(ctx, id); err != nil {
		return brokerErr("key", err)
	}
	k.mu.Lock()
	k.agentIDs[start] = id
	k.mu.Unlock()
	k.record(audit.Entry{Kind: audit.KindGrant, Agent: agent, Start: start, Route: "agent key"})
	return nil
}

// dropAgentKey forgets a start's agent key (at its end).
func (k *Kernel) dropAgentKey(start uint64) {
	k.mu.Lock()
	id, ok := k.agentIDs[start]
	delete(k.agentIDs, start)
	k.mu.Unlock()
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), brokerWait)
	defer cancel()
	cl, err := k.bro.client(ctx, keyBrokerName)
	if err == nil {
		err = cl.(keyClient).DropAgentKey(ctx, id)
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		k.record(audit.Entry{Kind: audit.KindKernel, Start: start, Route: "agent key", Reason: "could not drop the agent key: " + err.Error()})
	}
}
