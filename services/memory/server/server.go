// Package server is Link Memory's MCP server for one agent: the tools
// search, read, list and remember (memory__search … to the harness)
// over package memory, which does the work. It is apart from memory so
// that what only opens an index links no MCP.
//
// # Security
//
// Holds nothing but the one agent it serves: every call reaches only
// that agent's index and notes. Never asks. Trusts the harness for the
// conversation each call names (_meta link.local/thread), which only
// remember uses. Arguments are decoded strictly (an unknown field is
// refused). Every refusal is answered as a tool error with its reason
// (and hint), and logged once.
package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"lnk.dev/lnk/internal/linkmeta"
	"lnk.dev/lnk/internal/refusal"
	"lnk.dev/lnk/services/memory"
)

// Version is what the server says it is.
const Version = "1"

// ThreadKey is the _meta key a harness names a call's conversation by.
const ThreadKey = linkmeta.Thread

const instructions = "Your memory: search finds your notes folder's documents (memory/ in your files) and your past conversations by words; read reads one of them as memory indexed it; list lists them (with since, those changed or deleted after it); remember adds one line to your notes, which are in your instructions at every message after (only in a conversation with your owner, at most 4 KB in all)."

var (
	searchSchema   = json.RawMessage(`{"type":"object","properties":{"words":{"type":"string","description":"the words to find, all of them"}},"required":["words"],"additionalProperties":false}`)
	readSchema     = json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"a path search or list answered"},"offset":{"type":"integer","minimum":0,"description":"where in it to read from, in bytes"}},"required":["path"],"additionalProperties":false}`)
	listSchema     = json.RawMessage(`{"type":"object","properties":{"since":{"type":"string","description":"an RFC 3339 time: only documents changed or deleted after it"}},"additionalProperties":false}`)
	rememberSchema = json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","description":"the note, one line"}},"required":["text"],"additionalProperties":false}`)
)

// Server is the memory tool's MCP server for one agent.
type Server struct {
	Agent *memory.Agent
	// Log takes one line for each refusal and failure, with its reason.
	Log io.Writer
}

type handler func(thread string, args json.RawMessage) (string, error)

// MCP is the server: search, read, list, remember.
func (s *Server) MCP() *mcp.Server {
	m := mcp.NewServer(&mcp.Implementation{Name: "lnk-memory", Title: "Link Memory", Version: Version}, &mcp.ServerOptions{Instructions: instructions})
	for _, t := range []struct {
		name, desc string
		schema     json.RawMessage
		h          handler
	}{
		{"search", "Find your memory's documents and past conversations holding all the words given; answers paths, titles and a snippet each.", searchSchema, s.search},
		{"read", "Read a document your memory indexed (a path search or list answered), from an offset.", readSchema, s.read},
		{"list", "List your memory's documents; with since, those changed or deleted after it.", listSchema, s.list},
		{"remember", "Add one line to your notes, which are in your instructions at every message after.", rememberSchema, s.remember},
	} {
		name, h := t.name, t.h
		m.AddTool(&mcp.Tool{Name: name, Description: t.desc, InputSchema: t.schema},
			func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				args, thread := linkmeta.Call(req)
				text, err := h(thread, args)
				if err != nil {
					return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: s.refused(name, err)}}}, nil
				}
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
			})
	}
	return m
}

// refused logs err once and says it to the caller, with its hint.
func (s *Server) refused(tool string, err error) string {
	msg := err.Error()
	if h := refusal.HintOf(err); h != "" {
		msg += "\nhint: " + h
	}
	if s.Log != nil {
		memory.LogLine(s.Log, "refused %s for agent %s: %s", tool, s.Agent.ID, err)
	}
	return msg
}

// decode reads args strictly into v: an unknown field, a second value
// or a wrong type is refused.
func decode(args json.RawMessage, v any) error {
	if len(args) == 0 {
		args = json.RawMessage(`{}`)
	}
	d := json.NewDecoder(bytes.NewReader(args))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return refusal.New("bad arguments: " + err.Error())
	}
	if d.More() {
		return refusal.New("bad arguments: more than one value")
	}
	return nil
}

func (s *Server) search(_ string, args json.RawMessage) (string, error) {
	var a struct {
		Words string `json:"words"`
	}
	if err := decode(args, &a); err != nil {
		return "", err
	}
	if err := s.Agent.Refresh(); err != nil {
		return "", err
	}
	hits, err := s.Agent.Search(a.Words)
	if err != nil {
		return "", err
	}
	if len(hits) == 0 {
		return "nothing found", nil
	}
	var b strings.Builder
	for _, h := range hits {
		fmt.Fprintf(&b, "%s — %s\n  %s\n", h.Path, h.Title, strings.ReplaceAll(h.Snippet, "\n", " "))
	}
	return b.String(), nil
}

func (s *Server) read(_ string, args json.RawMessage) (string, error) {
	var a struct {
		Path   string `json:"path"`
		Offset int64  `json:"offset"`
	}
	if err := decode(args, &a); err != nil {
		return "", err
	}
	text, size, err := s.Agent.Read(a.Path, a.Offset)
	if err != nil {
		return "", err
	}
	next := a.Offset + int64(len(text))
	if next >= size {
		return fmt.Sprintf("%s\n[%s: bytes %d to %d of %d, the end]", text, a.Path, a.Offset, next, size), nil
	}
	return fmt.Sprintf("%s\n[%s: bytes %d to %d of %d; read on from offset %d]", text, a.Path, a.Offset, next, size, next), nil
}

func (s *Server) list(_ string, args json.RawMessage) (string, error) {
	var a struct {
		Since string `json:"since"`
	}
	if err := decode(args, &a); err != nil {
		return "", err
	}
	var since time.Time
	if a.Since != "" {
		var err error
		if since, err = time.Parse(time.RFC3339, a.Since); err != nil {
			return "", refusal.New("since is not an RFC 3339 time (as 2026-01-02T15:04:05Z)")
		}
	}
	if err := s.Agent.Refresh(); err != nil {
		return "", err
	}
	ls, err := s.Agent.List(since)
	if err != nil {
		return "", err
	}
	if len(ls) == 0 {
		return "no documents", nil
	}
	var b strings.Builder
	for _, l := range ls {
		what := "changed"
		if l.Deleted {
			what = "deleted"
		}
		fmt.Fprintf(&b, "%s — %s (%s %s)\n", l.Path, l.Title, what, l.At.UTC().Format(time.RFC3339))
	}
	return b.String(), nil
}

func (s *Server) remember(thread string, args json.RawMessage) (string, error) {
	var a struct {
		Text string `json:"text"`
	}
	if err := decode(args, &a); err != nil {
		return "", err
	}
	n, err := s.Agent.Remember(thread, a.Text)
	if err != nil {
		var r *refusal.Refusal
		if !errors.As(err, &r) {
			return "", fmt.Errorf("your notes could not be written: %w", err)
		}
		return "", err
	}
	return fmt.Sprintf("noted; your notes are now %d of %d bytes", n, memory.MaxNotes), nil
}
