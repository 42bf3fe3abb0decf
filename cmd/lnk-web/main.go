// Command lnk-web is Link Web, an MCP server on stdio with two calls,
// fetch and search, that runs outside every sandbox as a tool the owner
// adds:
//
//	lnk sandbox tool add web [--env BRAVE_API_KEY | --env TAVILY_API_KEY] -- lnk-web [--private-host H]...
//	lnk agent allow NAME --tool web
//
// It learns this machine's own addresses from the kernel before it
// serves (and does not start without them), takes the search key and
// HTTPS_PROXY from its environment, and logs each refusal on stderr
// (lnk.dev/lnk/services/web).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"lnk.dev/lnk/internal/mcpstdio"
	"lnk.dev/lnk/internal/netclass"
	"lnk.dev/lnk/services/web"
)

const usage = "usage: lnk-web [--private-host HOST]...\nhint: lnk sandbox tool add web -- lnk-web"

type hosts []string

func (h *hosts) String() string     { return strings.Join(*h, ",") }
func (h *hosts) Set(s string) error { *h = append(*h, s); return nil }

func fail(code int, err error) {
	fmt.Fprintln(os.Stderr, "lnk-web:", err)
	os.Exit(code)
}

func main() {
	var private hosts
	fs := flag.NewFlagSet("lnk-web", flag.ContinueOnError)
	fs.Var(&private, "private-host", "a host fetched wherever it resolves, even on this machine or its networks (repeatable)")
	fs.SetOutput(io.Discard)
	if err := fs.Parse(os.Args[1:]); err != nil {
		fail(2, fmt.Errorf("%v\n%s", err, usage))
	}
	if fs.NArg() != 0 {
		fail(2, errors.New(usage))
	}
	web.SetCollector()
	own, err := netclass.WatchOwnAddrs()
	if err != nil {
		fail(1, fmt.Errorf("%v: every fetch would be refused, so Link Web does not start", err))
	}
	defer own.Close()
	cfg := web.Config{
		PrivateHosts: private,
		Own:          own,
		Proxy:        func(u *url.URL) (*url.URL, error) { return http.ProxyFromEnvironment(&http.Request{URL: u}) },
		BraveKey:     os.Getenv("BRAVE_API_KEY"),
		TavilyKey:    os.Getenv("TAVILY_API_KEY"),
		Log:          os.Stderr,
	}
	// The keys stay in this process alone: nothing it starts (it starts
	// nothing) would inherit them.
	os.Unsetenv("BRAVE_API_KEY")
	os.Unsetenv("TAVILY_API_KEY")
	w, err := web.New(cfg)
	if err != nil {
		fail(2, fmt.Errorf("%v\nhint: lnk sandbox tool add web -- lnk-web --private-host HOST", err))
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := w.Serve(ctx, mcpstdio.Stdio()); err != nil && ctx.Err() == nil {
		fail(1, err)
	}
}
