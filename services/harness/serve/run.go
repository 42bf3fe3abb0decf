package serve

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"lnk.dev/lnk/services/harness/config"
	"lnk.dev/lnk/services/harness/endpoint"
	"lnk.dev/lnk/services/harness/model"
)

// Run serves the agents cs name, all at one port, until ctx ends. lnkPort
// is $LNK_PORT ("" when unset): a config naming another port is refused.
func Run(ctx context.Context, cs []*config.Config, lnkPort string, o Options) error {
	return runWith(ctx, cs, lnkPort, o, nil)
}

// runWith is Run, with each agent's model from modelFor when not nil
// (a test's, watching what each agent sends).
func runWith(ctx context.Context, cs []*config.Config, lnkPort string, o Options, modelFor func(*config.Config) model.Client) error {
	if len(cs) == 0 {
		return errors.New("no agent to serve")
	}
	port := cs[0].Port
	if lnkPort != "" && lnkPort != strconv.Itoa(port) {
		return fmt.Errorf("config.json's port %d is not $LNK_PORT %s, the agent's first port", port, lnkPort)
	}
	var eps []endpoint.Agent
	for _, c := range cs {
		if c.Port != port {
			return fmt.Errorf("agent %s's port %d is not the shared harness's %d", c.Name, c.Port, port)
		}
		oc := o
		if modelFor != nil {
			oc.Model = modelFor(c)
		}
		a, err := Open(c, oc)
		if err != nil {
			return err
		}
		defer a.Close()
		eps = append(eps, a.Endpoint())
	}
	srv, err := endpoint.New(eps, o.Logf)
	if err != nil {
		return err
	}
	// The runs of queued messages stop, and are waited for, before the
	// agents they use are closed (deferred above).
	ctx, cancel := context.WithCancel(ctx)
	defer func() { cancel(); srv.Wait() }()
	if err := srv.Start(ctx); err != nil && o.Logf != nil {
		// A thread's inbox unread waits, untouched, for the next start.
		o.Logf("lnk-harness: a conversation's inbox can't be read: %v", err)
	}
	l, err := endpoint.Listen(port)
	if err != nil {
		return fmt.Errorf("the endpoint: %w", err)
	}
	if o.Logf != nil {
		o.Logf("lnk-harness: answering %d agent(s) on 127.0.0.1:%d", len(cs), port)
	}
	if o.Socket == "" {
		return srv.Serve(ctx, l)
	}
	// In a network of its own, the sandbox's 127.0.0.1 is not the
	// machine's: the agent's supervisor serves the port there and
	// carries each connection to this socket in the harness's home.
	u, err := endpoint.ListenUnix(o.Socket)
	if err != nil {
		l.Close()
		return fmt.Errorf("the endpoint's socket: %w", err)
	}
	errs := make(chan error, 2)
	go func() { errs <- srv.Serve(ctx, l) }()
	go func() { errs <- srv.Serve(ctx, u) }()
	return errors.Join(<-errs, <-errs)
}
