// Package server is Link Run's MCP server (lnk-run-tool serve): the
// tools command, start, list, read and stop (run__command … to the
// harness) over package runtool, which does the work. It is apart from
// runtool so that lnk, which stops and forgets an agent's background
// commands, links no MCP.
//
// # Security
//
// Holds nothing but the agent it serves. Trusts the harness for the
// conversation each call names (_meta link.local/thread). Every refusal
// is answered as a tool error with its reason and hint, and logged once.
package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"lnk.dev/lnk/internal/linkmeta"
	"lnk.dev/lnk/internal/refusal"
	"lnk.dev/lnk/internal/textsafe"
	"lnk.dev/lnk/internal/toolrefusal"
	"lnk.dev/lnk/services/runtool"
)

// Version is what the server says it is.
const Version = "1"

// ThreadKey is the _meta key a harness names a call's conversation by.
const ThreadKey = linkmeta.Thread

const instructions = "Runs commands in the agent's sandbox, each call in a sandbox of its own that ends with everything the call started. Only the programs of the agent's [commands] start; there is no terminal and no input. command runs one to its end within its timeout; start runs one in the background, whose output is background/<id>.out in the files folder and whose ending comes as a message from run:<id>; list, read and stop reach only this conversation's."

var (
	callSchema = json.RawMessage(`{"type":"object","properties":{"argv":{"type":"array","items":{"type":"string"},"minItems":1,"description":"the program (a name of [commands], or a path), then its arguments; no shell unless one is named"},"folder":{"type":"string","description":"the working folder, relative to the files folder"}},"required":["argv"],"additionalProperties":false}`)
	noSchema   = json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)
	refSchema  = json.RawMessage(`{"type":"object","properties":{"id":{"type":"string","description":"the background command's ID"}},"required":["id"],"additionalProperties":false}`)
	readSchema = json.RawMessage(`{"type":"object","properties":{"id":{"type":"string","description":"the background command's ID"},"offset":{"type":"integer","minimum":0,"description":"where in its output to read from"}},"required":["id"],"additionalProperties":false}`)
)

// Server is the run tool's MCP server for one agent.
type Server struct {
	Agent *runtool.Agent
	// Supervisor is the command a background command's supervisor is
	// (`lnk-run-tool supervise`).
	Supervisor []string
	// Log takes one line for each refusal and failure, with its reason.
	Log io.Writer
	// Deliver, if not nil, hands the endings still untold (those a sweep
	// recorded for a supervisor that's gone) to the agent's way in; it is
	// called after each call, in the background, one at a time.
	Deliver func(context.Context) error

	delivering sync.Mutex
}

// deliver runs Deliver unless one runs already; a failure is logged and
// the endings stay for the next.
func (s *Server) deliver() {
	if s.Deliver == nil || !s.delivering.TryLock() {
		return
	}
	go func() {
		defer s.delivering.Unlock()
		if err := s.Deliver(context.Background()); err != nil && s.Log != nil {
			fmt.Fprintf(s.Log, "lnk-run-tool: agent %s: the endings stay to be told: %s\n", s.Agent.Name, textsafe.Line(strings.ReplaceAll(err.Error(), "\n", " ")))
		}
	}()
}

type handler func(ctx context.Context, thread string, args json.RawMessage) (string, error)

// MCP is the server: command, start, list, read, stop (run__command …
// to the harness).
func (s *Server) MCP() *mcp.Server {
	m := mcp.NewServer(&mcp.Implementation{Name: "lnk-run-tool", Title: "Link Run", Version: Version}, &mcp.ServerOptions{Instructions: instructions})
	for _, t := range []struct {
		name, desc string
		schema     json.RawMessage
		h          handler
	}{
		{"command", "Run one command in a sandbox of its own, to its end or its timeout; answers its output and exit status.", callSchema, s.command},
		{"start", "Start one command in the background, in a sandbox of its own; answers its ID.", callSchema, s.start},
		{"list", "List this conversation's background commands.", noSchema, s.list},
		{"read", "Read a background command's output from an offset.", readSchema, s.read},
		{"stop", "Stop a background command and everything it started.", refSchema, s.stop},
	} {
		name, h := t.name, t.h
		m.AddTool(&mcp.Tool{Name: name, Description: t.desc, InputSchema: t.schema},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				args, thread := linkmeta.Call(req)
				hops, ok := linkmeta.CallHops(req)
				var text string
				var err error
				if ok {
					text, err = h(context.WithValue(ctx, hopsKey{}, hops), thread, args)
				} else {
					err = &runtool.Refusal{Reason: "the call's _meta link.local/hops is not a whole number from 0 to 1024", Hint: "the harness names each call's hops in _meta"}
				}
				s.deliver()
				if err != nil {
					res := &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: s.refused(name, err)}}}
					if r, ok := refusal.Of(err); ok {
						// The bridge logs it as refused, with this reason
						// (internal/toolrefusal).
						res.Meta = toolrefusal.Meta(r.Reason)
					}
					return res, nil
				}
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
			})
	}
	return m
}

// refused logs err once and says it to the caller, with its hint.
func (s *Server) refused(tool string, err error) string {
	msg := err.Error()
	var r *runtool.Refusal
	if errors.As(err, &r) && r.Hint != "" {
		msg += "\nhint: " + r.Hint
	}
	if s.Log != nil {
		// One printable line, whatever of the model's words the reason
		// holds (a \r, LS or escape as much as a \n).
		fmt.Fprintf(s.Log, "lnk-run-tool: refused %s for agent %s: %s\n", tool, s.Agent.Name, textsafe.Line(strings.ReplaceAll(err.Error(), "\n", " ")))
	}
	return msg
}

func (s *Server) command(ctx context.Context, _ string, args json.RawMessage) (string, error) {
	c, err := runtool.ParseCall(args)
	if err != nil {
		return "", badArgs(err)
	}
	res, err := s.Agent.Run(ctx, c)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.Write(res.Output)
	if len(res.Output) > 0 && res.Output[len(res.Output)-1] != '\n' {
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "[exit %d]", res.Code)
	if res.Cut {
		fmt.Fprintf(&b, "\n[output cut: the first %d of %d bytes kept ([tool.run] output)]", len(res.Output), res.Total)
	}
	if res.TimedOut {
		fmt.Fprintf(&b, "\n[stopped at its timeout, %s ([tool.run] timeout less a tenth), with everything it started]", res.Timeout)
	}
	return b.String(), nil
}

// hopsKey carries a call's hops (_meta) to its handler.
type hopsKey struct{}

func (s *Server) start(ctx context.Context, thread string, args json.RawMessage) (string, error) {
	c, err := runtool.ParseCall(args)
	if err != nil {
		return "", badArgs(err)
	}
	hops, _ := ctx.Value(hopsKey{}).(int)
	r, err := s.Agent.Start(thread, hops, c, s.Supervisor)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("started background command %s: its output is background/%s.out in the files folder (read reads it, stop stops it); its ending comes as a message from run:%s", r.ID, r.ID, r.ID), nil
}

func (s *Server) list(_ context.Context, thread string, args json.RawMessage) (string, error) {
	if err := runtool.ParseNone(args); err != nil {
		return "", badArgs(err)
	}
	rs, err := s.Agent.List(thread)
	if err != nil {
		return "", err
	}
	if len(rs) == 0 {
		return "no background commands in this conversation", nil
	}
	var b strings.Builder
	for _, r := range rs {
		b.WriteString(describe(r))
		b.WriteByte('\n')
	}
	return b.String(), nil
}

func (s *Server) read(_ context.Context, thread string, args json.RawMessage) (string, error) {
	ref, err := runtool.ParseRef(args)
	if err != nil {
		return "", badArgs(err)
	}
	lim, err := s.Agent.RunLimits()
	if err != nil {
		return "", err
	}
	out, r, err := s.Agent.Read(thread, ref, lim.Output)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s\n[%d bytes from offset %d; next offset %d] %s", out, len(out), ref.Offset, ref.Offset+int64(len(out)), describe(r)), nil
}

func (s *Server) stop(_ context.Context, thread string, args json.RawMessage) (string, error) {
	ref, err := runtool.ParseRef(args)
	if err != nil {
		return "", badArgs(err)
	}
	if ref.Offset != 0 {
		return "", badArgs(errors.New("stop takes no offset"))
	}
	r, err := s.Agent.Stop(thread, ref.ID)
	if err != nil {
		return "", err
	}
	return describe(r), nil
}

// badArgs refuses a call's malformed arguments.
func badArgs(err error) error { return &runtool.Refusal{Reason: err.Error(), Err: err} }

// describe is one line of a record for the caller.
func describe(r *runtool.Record) string {
	argv, _ := json.Marshal(r.Argv)
	line := fmt.Sprintf("%s %s since %s: %s", r.ID, r.State, r.Started.Format(time.RFC3339), argv)
	if r.State == runtool.StateEnded {
		line += fmt.Sprintf(" (%s, exit %d, %d bytes printed", r.Reason, r.Code, r.Output)
		if r.Cut {
			line += ", cut"
		}
		line += ")"
	}
	return line
}
