package cli

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"lnk.dev/lnk/internal/audit"
	"lnk.dev/lnk/kernel/sandbox"
)

// The proxy's log lines (one JSON event per connection, request or
// route) go to the wire's log, ~/.lnk/log, never into the sandboxed
// command's stderr; anything else the proxy says (why it did not start)
// goes to lnk's stderr.

var proxyLogs sync.WaitGroup

// proxyStderr is the stderr to start the proxy with: a pipe whose lines
// are carried as above until the proxy closes it.
func proxyStderr(home, agent string) (*os.File, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	proxyLogs.Add(1)
	go func() {
		defer proxyLogs.Done()
		defer r.Close()
		copyProxyLog(r, home, agent, os.Stderr)
	}()
	return w, nil
}

func copyProxyLog(r io.Reader, home, agent string, errw io.Writer) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var log *audit.Log
	defer func() {
		if log != nil {
			log.Close()
		}
	}()
	for sc.Scan() {
		if e, ok := sandbox.ProxyLogEntry(sc.Bytes(), agent); ok {
			if log == nil {
				log, _ = openAuditLog(home) // the proxy made ~/.lnk before its first line
			}
			if log != nil {
				log.Write(e)
				continue
			}
		}
		fmt.Fprintf(errw, "%s\n", sc.Bytes())
	}
}

// stopProxy stops the proxy and lets its last lines reach the log (and
// its own message lnk's stderr) before it returns; its error is
// sandbox.ErrProxyFailed if the proxy had ended on its own.
func stopProxy(p *sandbox.Proxy) error {
	err := p.Stop()
	done := make(chan struct{})
	go func() { proxyLogs.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
	}
	return err
}
