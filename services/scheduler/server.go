package scheduler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/conversation"
	"lnk.dev/lnk/internal/linkmeta"
	"lnk.dev/lnk/internal/refusal"
	"lnk.dev/lnk/internal/textsafe"
	"lnk.dev/lnk/services/harness/store"
)

const instructions = "Schedules messages to this conversation: add one in N minutes, at a time, or recurring (cron, in the owner's time zone); list and cancel reach only this conversation's jobs. Each firing is a message from schedule:<id>, one hop past this turn's. start_subagent starts a subagent on a task, with this conversation's tools or fewer; its answer comes back here as a message from task-<id>."

var (
	addSchema = json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","description":"the message the job sends to this conversation"},"in_minutes":{"type":"integer","minimum":1,"maximum":525600,"description":"once, this many minutes from now"},"at":{"type":"string","description":"once, at this time: YYYY-MM-DD HH:MM in the owner's time zone, or RFC 3339"},"cron":{"type":"string","description":"recurring: minute hour day month weekday, in the owner's time zone"}},"required":["text"],"additionalProperties":false}`)
	noSchema  = json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)
	idSchema  = json.RawMessage(`{"type":"object","properties":{"id":{"type":"string","description":"the job's ID"}},"required":["id"],"additionalProperties":false}`)
)

// Server is the scheduler's MCP server for one agent.
type Server struct {
	Store  *Store
	Limits caps.SchedulerLimits
	Zone   *time.Location // the owner's time zone
	Now    func() time.Time
	Log    io.Writer // one line for each refusal
	// Parent is what start_subagent needs of the agent, read before
	// confinement.
	Parent Parent
}

// AddArgs is add's arguments.
type AddArgs struct {
	Text      string `json:"text"`
	InMinutes int    `json:"in_minutes,omitempty"`
	At        string `json:"at,omitempty"`
	Cron      string `json:"cron,omitempty"`
}

type idArgs struct {
	ID string `json:"id"`
}

// ErrNoSuch is a job this conversation did not make (or none at all:
// the answer is the same).
var ErrNoSuch = errors.New("no such job in this conversation")

// MCP is the server: add, list, cancel (scheduler__add … to the harness).
func (s *Server) MCP() *mcp.Server {
	m := mcp.NewServer(&mcp.Implementation{Name: "lnk-scheduler-tool", Title: "Link Scheduler", Version: "1"}, &mcp.ServerOptions{Instructions: instructions})
	for _, t := range []struct {
		name, desc string
		schema     json.RawMessage
		h          func(c caller, args json.RawMessage) (string, error)
	}{
		{"add", "Schedule a message to this conversation: in_minutes, at, or cron (exactly one).", addSchema, s.add},
		{"list", "List this conversation's scheduled jobs.", noSchema, s.list},
		{"cancel", "Cancel one of this conversation's jobs.", idSchema, s.cancel},
		{"start_subagent", "Start a subagent on a task, in a conversation of its own (task-<id>), with this conversation's tools or fewer (tools: their names; none given: all of them); its answer comes back here.", startSchema, s.startSubagent},
	} {
		name, h := t.name, t.h
		m.AddTool(&mcp.Tool{Name: name, Description: t.desc, InputSchema: t.schema},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				args, thread := linkmeta.Call(req)
				hops, ok := linkmeta.CallHops(req)
				var text string
				err := checkCaller(thread, ok)
				if err == nil {
					text, err = h(caller{thread: thread, hops: hops, req: req}, args)
				}
				if err != nil {
					text = s.refused(name, err)
					return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
				}
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
			})
	}
	return m
}

// caller is who a call is from, as the harness's _meta says: its
// conversation and hops (checked), and the request for the rest.
type caller struct {
	thread string
	hops   int
	req    *mcp.CallToolRequest
}

// checkCaller refuses a call whose _meta names no conversation, a
// stranger's, or hops that aren't a whole number: which conversation a
// call is from, and its hops, are the harness's word alone.
func checkCaller(thread string, hopsOK bool) error {
	switch {
	case thread == "":
		return &refusal.Refusal{Reason: "the call names no conversation (_meta link.local/thread): the scheduler answers nothing to it", Hint: "the harness names each call's conversation in _meta"}
	case store.CheckThread(thread) != nil:
		return refusal.New("the call's conversation " + fmt.Sprintf("%q", thread) + " is not a conversation's name")
	case conversation.Strangers(thread): // the one rule: named as its sender, whatever the kind
		return refusal.New("a stranger's conversation can't use the scheduler: through it the agent acts as itself")
	case !hopsOK:
		return &refusal.Refusal{Reason: "the call's _meta link.local/hops is not a whole number from 0 to 1024", Hint: "the harness names each call's hops in _meta"}
	}
	return nil
}

func (s *Server) refused(tool string, err error) string {
	msg := err.Error()
	if r, ok := refusal.Of(err); ok && r.Hint != "" {
		msg += "\nhint: " + r.Hint
	}
	if s.Log != nil {
		// One printable line, whatever of the model's words the reason
		// holds (a \r, LS or escape as much as a \n).
		fmt.Fprintf(s.Log, "lnk-scheduler-tool: refused %s: %s\n", tool, textsafe.Line(strings.ReplaceAll(err.Error(), "\n", " ")))
	}
	return msg
}

func (s *Server) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Server) add(c caller, raw json.RawMessage) (string, error) {
	thread, hops := c.thread, c.hops
	var a AddArgs
	if err := decodeStrict(raw, &a); err != nil {
		return "", refusal.New("add's arguments: " + err.Error())
	}
	now := s.now().UTC().Truncate(time.Second)
	j := &Job{ID: newID(), Thread: thread, Hops: hops + 1, Text: a.Text, Created: now}
	if j.Hops > s.Limits.Hops {
		return "", &refusal.Refusal{Reason: fmt.Sprintf("this turn is at hop %d: a job's message would be hop %d, past the agent's cap ([tool.scheduler] hops = %d)", hops, j.Hops, s.Limits.Hops),
			Hint: "raise [tool.scheduler] hops in the agent's Config/sandbox.toml"}
	}
	if a.Text == "" || len(a.Text) > MaxText {
		return "", refusal.New("a job's text is 1 to 4096 bytes")
	}
	n := 0
	if a.InMinutes != 0 {
		n++
	}
	if a.At != "" {
		n++
	}
	if a.Cron != "" {
		n++
	}
	if n != 1 {
		return "", refusal.New("add takes exactly one of in_minutes, at and cron")
	}
	switch {
	case a.InMinutes != 0:
		if a.InMinutes < 1 || a.InMinutes > 525600 {
			return "", refusal.New("in_minutes is 1 to 525600 (a year)")
		}
		j.At = now.Add(time.Duration(a.InMinutes) * time.Minute)
		j.Next = j.At
	case a.At != "":
		t, err := parseAt(a.At, s.Zone)
		if err != nil {
			return "", err
		}
		if !t.After(now) {
			return "", refusal.New("at " + a.At + " is not in the future")
		}
		j.At, j.Next = t.UTC(), t.UTC()
	default:
		c, err := ParseCron(a.Cron)
		if err != nil {
			return "", refusal.New(err.Error())
		}
		next, ok := c.Next(now, s.Zone)
		if !ok {
			return "", refusal.New(fmt.Sprintf("cron %q names no time in the next five years", a.Cron))
		}
		j.Cron, j.Next = strings.Join(strings.Fields(a.Cron), " "), next.UTC()
	}
	if err := s.Store.Write(j); err != nil {
		return "", err
	}
	return fmt.Sprintf("scheduled job %s: next at %s (%s); it will come as a message from schedule:%s", j.ID, j.Next.In(s.Zone).Format("2006-01-02 15:04 MST"), what(j), j.ID), nil
}

func what(j *Job) string {
	if j.Task != nil {
		return "a subagent's start (" + Subagent(j.ID) + ")"
	}
	if j.Cron != "" {
		return "recurring: " + j.Cron
	}
	return "once"
}

// parseAt reads "YYYY-MM-DD HH:MM" in zone, or RFC 3339.
func parseAt(s string, zone *time.Location) (time.Time, error) {
	if t, err := time.ParseInLocation("2006-01-02 15:04", s, zone); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	return time.Time{}, refusal.New("at " + fmt.Sprintf("%q", s) + " is neither YYYY-MM-DD HH:MM nor RFC 3339")
}

// mine is this conversation's jobs and its subagents' (those of each
// task-<id> it started, and theirs in turn), less the records of
// subagents started already, which are the scheduler's own.
func (s *Server) mine(thread string) ([]*Job, error) {
	all, err := s.Store.List()
	if err != nil {
		return nil, err
	}
	ours := map[string]bool{thread: true}
	for grew := true; grew; {
		grew = false
		for _, j := range all {
			if j.Task != nil && ours[j.Thread] && !ours[Subagent(j.ID)] {
				ours[Subagent(j.ID)], grew = true, true
			}
		}
	}
	var out []*Job
	for _, j := range all {
		if ours[j.Thread] && !j.started() {
			out = append(out, j)
		}
	}
	return out, nil
}

func (s *Server) list(c caller, raw json.RawMessage) (string, error) {
	thread := c.thread
	if err := decodeStrict(orEmpty(raw), &struct{}{}); err != nil {
		return "", refusal.New("list takes no arguments")
	}
	jobs, err := s.mine(thread)
	if err != nil {
		return "", err
	}
	if len(jobs) == 0 {
		return "no jobs in this conversation", nil
	}
	var b strings.Builder
	for _, j := range jobs {
		where := ""
		if j.Thread != thread {
			where = "  (in " + j.Thread + ", a subagent's)"
		}
		fmt.Fprintf(&b, "%s  next %s  %s%s  %q\n", j.ID, j.Next.In(s.Zone).Format("2006-01-02 15:04 MST"), what(j), where, j.Text)
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

func (s *Server) cancel(c caller, raw json.RawMessage) (string, error) {
	thread := c.thread
	var a idArgs
	if err := decodeStrict(raw, &a); err != nil {
		return "", refusal.New("cancel's arguments: " + err.Error())
	}
	jobs, err := s.mine(thread)
	if err != nil {
		return "", err
	}
	for _, j := range jobs {
		if j.ID == a.ID {
			// Under the schedule's lock, so a firing of it under way is
			// never written back after.
			unlock, err := s.Store.Lock()
			if err != nil {
				return "", err
			}
			defer unlock()
			if err := s.Store.Remove(j.ID); err != nil {
				return "", err
			}
			return "cancelled job " + j.ID, nil
		}
	}
	return "", ErrNoSuch
}

func orEmpty(raw json.RawMessage) json.RawMessage {
	if len(strings.TrimSpace(string(raw))) == 0 || string(raw) == "null" {
		return json.RawMessage(`{}`)
	}
	return raw
}
