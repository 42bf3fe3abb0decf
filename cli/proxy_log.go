package cli

import (
	"bufio"
	"encoding/json"
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

// proxyEvent is the part of lnk-netbroker's event the audit log keeps.
type proxyEvent struct {
	Kind     string `json:"kind"`
	Host     string `json:"host"`
	Port     uint16 `json:"port"`
	Decision string `json:"decision"`
	Rule     string `json:"rule"`
	Reason   string `json:"reason"`
	Status   int    `json:"status"`
	Up       int64  `json:"bytes_up"`
	Down     int64  `json:"bytes_down"`
}

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
		var ev proxyEvent
		if json.Unmarshal(sc.Bytes(), &ev) == nil && ev.Decision != "" {
			if log == nil {
				log, _ = openAuditLog(home) // the proxy made ~/.lnk before its first line
			}
			if log != nil {
				log.Write(proxyEntry(ev, agent))
				continue
			}
		}
		fmt.Fprintf(errw, "%s\n", sc.Bytes())
	}
}

func proxyEntry(ev proxyEvent, agent string) audit.Entry {
	e := audit.Entry{Time: time.Now(), Kind: audit.KindUse, Agent: agent, Request: "net " + ev.Kind, Reason: ev.Reason,
		Status: ev.Status, BytesUp: ev.Up, BytesDown: ev.Down}
	if ev.Host != "" {
		e.Route = ev.Host
		if ev.Port != 0 {
			e.Route = fmt.Sprintf("%s:%d", ev.Host, ev.Port)
		}
	}
	if ev.Decision == "refuse" {
		e.Kind = audit.KindRefuse
		if ev.Rule != "" {
			e.Reason = ev.Rule + ": " + ev.Reason
		}
	}
	return e
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
