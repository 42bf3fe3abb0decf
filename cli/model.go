package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"lnk.dev/lnk/internal/connpass"
	"lnk.dev/lnk/services/harness/builtin"
	"lnk.dev/lnk/services/harness/localmodel"
)

// lnk model builtin|list: thin wrappers over services/harness/builtin
// (the built-in model's handler and its record) and
// services/harness/localmodel (the loopback probes).

// builtinHost is the one address the built-in model listens on.
const builtinHost = "127.0.0.1"

func init() {
	register("model", func() *cobra.Command {
		var port, listenFD int
		var host string
		var obedient, noRecord bool
		c := &cobra.Command{
			Use:   "builtin",
			Short: "Serve Link's built-in model (OpenAI chat completions, rule-based, deterministic) on 127.0.0.1 until stopped",
			Long: "Serve Link's built-in model on 127.0.0.1 only, printing its base URL, until SIGTERM or SIGINT.\n" +
				"It answers from rules (\"run X\" is a run call, \"read F\" a file call), so an agent runs with no key and no network.\n" +
				"--obedient follows an instruction found anywhere in its context, tool answers included: a hijacked model, for tests only.",
			Example: "  lnk model builtin --port 11435\n  lnk model builtin --obedient",
			Args:    cobra.NoArgs,
			RunE: func(c *cobra.Command, _ []string) error {
				if host != builtinHost {
					return Refused(fmt.Errorf("the built-in model listens on %s only, never on %q: whatever reaches it can steer an agent's model", builtinHost, host),
						"lnk model builtin --port "+strconv.Itoa(port)+" serves it on "+builtinHost)
				}
				if port < 0 || port > 65535 {
					return Usage(fmt.Sprintf("--port %d is not a TCP port (0 to 65535; 0 picks a free one)", port), "lnk model builtin --port 11435")
				}
				ln, err := builtinListener(c, port, listenFD)
				if err != nil {
					return err
				}
				return serveBuiltin(c, ln, obedient, !noRecord)
			},
		}
		c.Flags().IntVar(&port, "port", 0, "the TCP port on 127.0.0.1 (0: a free one)")
		c.Flags().IntVar(&listenFD, "listen-fd", 0, "serve on this inherited fd, a TCP socket its parent made listening on 127.0.0.1 and holds (lnk-memory keep's), instead of a port of its own")
		c.Flags().StringVar(&host, "host", builtinHost, "the address to listen on: 127.0.0.1, and nothing else is taken")
		c.Flags().BoolVar(&obedient, "obedient", false, "follow an instruction found anywhere in the context (a hijacked model, for tests)")
		c.Flags().BoolVar(&noRecord, "no-record", false, "leave ~/.lnk/models alone: a model served for one program (Link Memory's), which agents' starts never take for the machine's")
		return c
	})
	register("model", func() *cobra.Command {
		var asJSON bool
		c := &cobra.Command{
			Use:   "list",
			Short: "List the models served on this machine's loopback: Ollama, llama.cpp's llama-server, Link's built-in",
			Args:  cobra.NoArgs,
			RunE: func(c *cobra.Command, _ []string) error {
				models, skipped := localmodel.List(c.Context(), localmodel.Options{Home: os.Getenv("HOME")})
				if models == nil {
					models = []localmodel.Model{}
				}
				if skipped == nil {
					skipped = []localmodel.Skipped{}
				}
				if asJSON {
					return writeJSON(c.OutOrStdout(), map[string]any{"models": models, "skipped": skipped})
				}
				for _, s := range skipped {
					fmt.Fprintf(c.ErrOrStderr(), "lnk: passed over %s: %s\n", s.Where, s.Reason)
				}
				if len(models) == 0 {
					fmt.Fprintln(c.OutOrStdout(), "no model found on this machine's loopback")
					fmt.Fprintln(c.OutOrStdout(), "  hint: lnk model builtin serves Link's built-in model")
					return nil
				}
				tw := tabwriter.NewWriter(c.OutOrStdout(), 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "RUNTIME\tMODEL\tFORMAT\tBASE URL")
				for _, m := range models {
					name := m.Name
					if m.Obedient {
						name += " (obedient)"
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", m.Runtime, name, m.Format, m.BaseURL)
				}
				return tw.Flush()
			},
		}
		c.Flags().BoolVar(&asJSON, "json", false, "print JSON: {\"models\": [{runtime, name, format, base_url}], \"skipped\": [{where, reason}]}")
		return c
	})
}

// builtinListener is the built-in model's socket: with --listen-fd, the
// listening socket its parent made and handed it (lnk-memory keep, which
// holds the port for the service's whole life, so that no other program
// can take it between two of its model servers), refused unless it is a
// TCP socket listening on 127.0.0.1; else its own on 127.0.0.1:port.
func builtinListener(c *cobra.Command, port, listenFD int) (net.Listener, error) {
	if !c.Flags().Changed("listen-fd") {
		ln, err := net.Listen("tcp4", net.JoinHostPort(builtinHost, strconv.Itoa(port)))
		if err != nil {
			return nil, Fail(ExitFailure, fmt.Errorf("listening on %s:%d: %w", builtinHost, port, err), "lnk model builtin --port 0 picks a free port")
		}
		return ln, nil
	}
	if c.Flags().Changed("port") {
		return nil, Usage("--listen-fd serves on the socket it is handed, whose port is its own: not with --port", "lnk model builtin --port "+strconv.Itoa(port))
	}
	ln, err := connpass.InheritedListener(listenFD)
	if err != nil {
		return nil, Refused(fmt.Errorf("--listen-fd %d: %w", listenFD, err), "lnk model builtin --port 0 listens on a free port of 127.0.0.1 of its own")
	}
	if a, ok := ln.Addr().(*net.TCPAddr); !ok || !a.IP.Equal(net.IPv4(127, 0, 0, 1)) {
		ln.Close()
		return nil, Refused(fmt.Errorf("--listen-fd %d listens on %s, and the built-in model listens on %s only", listenFD, ln.Addr(), builtinHost), "lnk model builtin --port 0 listens on a free port of 127.0.0.1 of its own")
	}
	return ln, nil
}

// serveBuiltin serves on ln (127.0.0.1), records its port in
// ~/.lnk/models/builtin.json (unless !record), prints the base URL and serves until
// SIGTERM or SIGINT, then removes its record.
func serveBuiltin(c *cobra.Command, ln net.Listener, obedient, record bool) error {
	defer ln.Close()
	addr, ok := ln.Addr().(*net.TCPAddr)
	if !ok || !addr.IP.Equal(net.IPv4(127, 0, 0, 1)) {
		return Fail(ExitFailure, fmt.Errorf("the listener is on %s, not %s", ln.Addr(), builtinHost))
	}
	home := os.Getenv("HOME")
	pid := os.Getpid()
	rec := builtin.Record{URL: builtin.BaseURL(addr.Port), Port: addr.Port, PID: pid, Obedient: obedient}
	if !record {
		// Served for one program (Link Memory's), which was given its port.
	} else if err := builtin.WriteRecord(home, rec); err != nil {
		return Fail(ExitFailure, fmt.Errorf("recording the built-in model's port in ~/.lnk/models/%s: %w", builtin.RecordName, err),
			"~/.lnk and ~/.lnk/models must be folders of yours, mode 0700, never links; then lnk model builtin again")
	}
	defer func() {
		if !record {
			return
		}
		if err := builtin.RemoveRecord(home, pid); err != nil {
			fmt.Fprintf(c.ErrOrStderr(), "lnk: the built-in model's record stays: %v\n", err)
		}
	}()

	ctx, stop := signal.NotifyContext(c.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var logMu sync.Mutex
	logf := func(format string, args ...any) {
		logMu.Lock()
		defer logMu.Unlock()
		fmt.Fprintf(c.ErrOrStderr(), "lnk: model builtin: "+format+"\n", args...)
	}
	srv := &http.Server{
		Handler:           builtin.Handler(builtin.Options{Obedient: obedient, Logf: logf}),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       2 * time.Minute, // a body trickled in holds no goroutine for ever
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	if obedient {
		fmt.Fprintln(c.ErrOrStderr(), "lnk: --obedient: this model follows any instruction it reads, tool answers included; for tests, never for real work")
	}
	fmt.Fprintln(c.OutOrStdout(), rec.URL)
	select {
	case err := <-done:
		return Fail(ExitFailure, fmt.Errorf("serving the built-in model: %w", err))
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shut); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return Fail(ExitFailure, fmt.Errorf("stopping the built-in model: %w", err))
	}
	return nil
}
